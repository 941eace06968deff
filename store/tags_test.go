package store_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestExactTagName: a tag is the row of exactly that name. MySQL's
// collations match "ORDERS", "Orders" and "orders " to the row "orders";
// none of them may reach it, or each spelling would get ids of its own.
func TestExactTagName(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "orders", 1, 10)
		for _, name := range []string{"ORDERS", "Orders", "orders ", "ordérs"} {
			if a, err := s.Allocate(ctx, name, 0); !errors.Is(err, segment.ErrUnknownTag) {
				t.Errorf("Allocate(%q) = %+v, %v; want ErrUnknownTag", name, a, err)
			}
			if _, err := s.Tag(ctx, name); !errors.Is(err, segment.ErrUnknownTag) {
				t.Errorf("Tag(%q) = %v; want ErrUnknownTag", name, err)
			}
			if _, err := s.UpdateTag(ctx, name, segment.TagUpdate{Step: ptr[int64](5)}); !errors.Is(err, segment.ErrUnknownTag) {
				t.Errorf("UpdateTag(%q) = %v; want ErrUnknownTag", name, err)
			}
		}
		tag, err := s.Tag(ctx, "orders")
		if err != nil || tag.MaxID != 1 || tag.Step != 10 {
			t.Fatalf("the row was changed through another spelling: %+v, %v", tag, err)
		}
	})
}

// TestTagNamesUniqueWhateverCase: a new tag whose name differs from a
// row's only in case is refused on every store (SQLite compares bytes,
// MySQL's usual collations ignore case), by every way of creating a tag,
// and the refusal names the row it collides with.
func TestTagNamesUniqueWhateverCase(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "orders", 1, 10)
		createTag(t, s, "Überweisung", 1, 10)
		creates := map[string]func(name string) error{
			"plain": func(name string) error {
				_, err := s.CreateTag(ctx, segment.Tag{Name: name, MaxID: 1, Step: 10})
				return err
			},
			"ordered": func(name string) error {
				_, err := s.CreateOrderedTag(ctx, segment.Tag{Name: name, MaxID: 1, Step: 10})
				return err
			},
		}
		for kind, create := range creates {
			for name, existing := range map[string]string{"ORDERS": "orders", "Orders": "orders", "orders": "orders", "überweisung": "Überweisung"} {
				err := create(name)
				var ee *segment.ExistsError
				if !errors.As(err, &ee) || ee.Existing != existing || !errors.Is(err, segment.ErrTagExists) {
					t.Errorf("%s %q: %v; want it refused as %q", kind, name, err, existing)
				}
			}
		}
		createTag(t, s, "orders-2", 1, 10) // a name of its own still is one
	})
}

// TestLatin1Table: Leaf's script run on a server whose default character
// set is latin1 leaves a table that cannot store most of Unicode. What it
// cannot store is the client's input error, and what it cannot hold does
// not exist.
func TestLatin1Table(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, store.MySQL, storetest.MySQL(t))
	if _, err := s.DB().ExecContext(ctx, "ALTER TABLE leaf_alloc CONVERT TO CHARACTER SET latin1"); err != nil {
		t.Fatal(err)
	}
	createTag(t, s, "été", 1, 10) // Latin-1 itself works
	if a, err := s.Allocate(ctx, "été", 0); err != nil || a.Start() != 1 {
		t.Fatalf("Allocate(été) = %+v, %v", a, err)
	}
	_, err := s.CreateTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 10, Description: "订单"})
	if !errors.Is(err, segment.ErrInvalidDescription) {
		t.Errorf("CreateTag with a description latin1 cannot hold: %v; want ErrInvalidDescription", err)
	}
	if _, err := s.CreateTag(ctx, segment.Tag{Name: "订单", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrInvalidTag) {
		t.Errorf("CreateTag with a name latin1 cannot hold: %v; want ErrInvalidTag", err)
	}
	if _, err := s.UpdateTag(ctx, "été", segment.TagUpdate{Description: ptr("订单")}); !errors.Is(err, segment.ErrInvalidDescription) {
		t.Errorf("UpdateTag with a description latin1 cannot hold: %v; want ErrInvalidDescription", err)
	}
	for _, name := range []string{"订单", "été订单"} {
		if _, err := s.Allocate(ctx, name, 0); !errors.Is(err, segment.ErrUnknownTag) {
			t.Errorf("Allocate(%q) = %v; want ErrUnknownTag", name, err)
		}
		if _, err := s.Tag(ctx, name); !errors.Is(err, segment.ErrUnknownTag) {
			t.Errorf("Tag(%q) = %v; want ErrUnknownTag", name, err)
		}
		if _, err := s.UpdateTag(ctx, name, segment.TagUpdate{Step: ptr[int64](5)}); !errors.Is(err, segment.ErrUnknownTag) {
			t.Errorf("UpdateTag(%q) = %v; want ErrUnknownTag", name, err)
		}
	}
}

func TestCreateTag(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		before := time.Now().Add(-time.Hour)
		created, err := s.CreateTag(ctx, segment.Tag{Name: "orders", MaxID: 7, Step: 1000, Description: "the orders"})
		if err != nil {
			t.Fatal(err)
		}
		if created.Name != "orders" || created.MaxID != 7 || created.Step != 1000 || created.Description != "the orders" {
			t.Fatalf("created %+v", created)
		}
		if created.UpdateTime.Before(before) || created.UpdateTime.After(time.Now().Add(time.Hour)) {
			t.Fatalf("update time %v is not about now", created.UpdateTime)
		}
		got, err := s.Tag(ctx, "orders")
		if err != nil || got != created {
			t.Fatalf("Tag = %+v, %v; want %+v", got, err, created)
		}

		tests := []struct {
			name    string
			tag     segment.Tag
			wantErr error
		}{
			{"duplicate", segment.Tag{Name: "orders", MaxID: 1, Step: 10}, segment.ErrTagExists},
			{"empty name", segment.Tag{Name: "", MaxID: 1, Step: 10}, segment.ErrInvalidTag},
			{"control character", segment.Tag{Name: "a\nb", MaxID: 1, Step: 10}, segment.ErrInvalidTag},
			{"dot dot", segment.Tag{Name: "..", MaxID: 1, Step: 10}, segment.ErrInvalidTag},
			{"max_id at the int64 maximum", segment.Tag{Name: "m1", MaxID: math.MaxInt64, Step: 10}, segment.ErrInvalidMaxID},
			{"name too long", segment.Tag{Name: strings.Repeat("x", 129), MaxID: 1, Step: 10}, segment.ErrInvalidTag},
			{"step zero", segment.Tag{Name: "s0", MaxID: 1, Step: 0}, segment.ErrInvalidStep},
			{"step too big", segment.Tag{Name: "s1", MaxID: 1, Step: segment.MaxStep + 1}, segment.ErrInvalidStep},
			{"max_id zero", segment.Tag{Name: "m0", MaxID: 0, Step: 10}, segment.ErrInvalidMaxID},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.CreateTag(ctx, tc.tag)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("CreateTag(%+v) error = %v, want %v", tc.tag, err, tc.wantErr)
				}
			})
		}
		t.Run("description too long", func(t *testing.T) {
			_, err := s.CreateTag(ctx, segment.Tag{Name: "long", MaxID: 1, Step: 10, Description: strings.Repeat("d", 257)})
			if err == nil {
				t.Fatal("no error")
			}
		})
		t.Run("longest name and description", func(t *testing.T) {
			name := strings.Repeat("订", segment.MaxTagLen)
			desc := strings.Repeat("é", 256)
			tag, err := s.CreateTag(ctx, segment.Tag{Name: name, MaxID: 1, Step: 10, Description: desc})
			if err != nil {
				t.Fatal(err)
			}
			if tag.Name != name || tag.Description != desc {
				t.Fatalf("stored %q / %q", tag.Name, tag.Description)
			}
		})
		tags, err := s.Tags(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tags) != 2 {
			t.Fatalf("%d tags after the failed creations, want 2", len(tags))
		}
	})
}

func TestUpdateTag(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "orders", 100, 1000)

		tests := []struct {
			name    string
			tag     string
			update  segment.TagUpdate
			wantErr error
			want    segment.Tag // Name, MaxID, Step, Description after the call
		}{
			{"nothing", "orders", segment.TagUpdate{}, nil, segment.Tag{Name: "orders", MaxID: 100, Step: 1000}},
			{"raise max_id", "orders", segment.TagUpdate{MaxID: ptr[int64](5000)}, nil, segment.Tag{Name: "orders", MaxID: 5000, Step: 1000}},
			{"same max_id", "orders", segment.TagUpdate{MaxID: ptr[int64](5000)}, nil, segment.Tag{Name: "orders", MaxID: 5000, Step: 1000}},
			{"lower max_id", "orders", segment.TagUpdate{MaxID: ptr[int64](4999), Step: ptr[int64](7)}, segment.ErrInvalidMaxID, segment.Tag{Name: "orders", MaxID: 5000, Step: 1000}},
			{"max_id zero", "orders", segment.TagUpdate{MaxID: ptr[int64](0)}, segment.ErrInvalidMaxID, segment.Tag{Name: "orders", MaxID: 5000, Step: 1000}},
			{"step", "orders", segment.TagUpdate{Step: ptr[int64](20)}, nil, segment.Tag{Name: "orders", MaxID: 5000, Step: 20}},
			{"step zero", "orders", segment.TagUpdate{Step: ptr[int64](0)}, segment.ErrInvalidStep, segment.Tag{Name: "orders", MaxID: 5000, Step: 20}},
			{"step too big", "orders", segment.TagUpdate{Step: ptr[int64](segment.MaxStep + 1)}, segment.ErrInvalidStep, segment.Tag{Name: "orders", MaxID: 5000, Step: 20}},
			{"largest step", "orders", segment.TagUpdate{Step: ptr[int64](segment.MaxStep)}, nil, segment.Tag{Name: "orders", MaxID: 5000, Step: segment.MaxStep}},
			{"description", "orders", segment.TagUpdate{Description: ptr("sales")}, nil, segment.Tag{Name: "orders", MaxID: 5000, Step: segment.MaxStep, Description: "sales"}},
			{"all at once", "orders", segment.TagUpdate{Description: ptr(""), Step: ptr[int64](3), MaxID: ptr[int64](6000)}, nil, segment.Tag{Name: "orders", MaxID: 6000, Step: 3}},
			{"unknown tag", "missing", segment.TagUpdate{Step: ptr[int64](3)}, segment.ErrUnknownTag, segment.Tag{}},
			{"unknown tag nothing to change", "missing", segment.TagUpdate{}, segment.ErrUnknownTag, segment.Tag{}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.UpdateTag(ctx, tc.tag, tc.update)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("UpdateTag error = %v, want %v", err, tc.wantErr)
				}
				if err == nil && !sameTag(got, tc.want) {
					t.Fatalf("UpdateTag = %+v, want %+v", got, tc.want)
				}
				if tc.want.Name == "" {
					return
				}
				stored, err := s.Tag(ctx, tc.tag)
				if err != nil {
					t.Fatal(err)
				}
				if !sameTag(stored, tc.want) {
					t.Fatalf("stored %+v, want %+v", stored, tc.want)
				}
			})
		}
	})
}

func sameTag(a, b segment.Tag) bool {
	return a.Name == b.Name && a.MaxID == b.MaxID && a.Step == b.Step && a.Description == b.Description
}

func TestTags(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		tags, err := s.Tags(ctx)
		if err != nil || len(tags) != 0 {
			t.Fatalf("Tags on an empty table = %v, %v", tags, err)
		}
		for _, name := range []string{"b", "a.b", "C", "a", "a-b", "Z:9", "0"} {
			createTag(t, s, name, 1, 10)
		}
		tags, err = s.Tags(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tag := range tags {
			names = append(names, tag.Name)
		}
		want := []string{"0", "C", "Z:9", "a", "a-b", "a.b", "b"}
		if !slices.Equal(names, want) {
			t.Fatalf("Tags order %q, want %q", names, want)
		}
		if _, err := s.Tag(ctx, "nope"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("Tag(nope) error = %v", err)
		}
	})
}
