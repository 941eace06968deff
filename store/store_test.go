package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// backend is one database the conformance suite runs against.
type backend struct {
	dialect string
	// fresh returns a new, empty database (DSN or path) for storetest.Open.
	fresh func(testing.TB) string
}

var backends = []backend{
	{store.SQLite, storetest.SQLite},
	{store.MySQL, storetest.MySQL},
}

// each runs fn once per backend, as a subtest named after the dialect.
func each(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.dialect, func(t *testing.T) { fn(t, b) })
	}
}

// open returns n migrated stores on one fresh database of b.
func (b backend) open(t testing.TB, n int) []*store.Store {
	t.Helper()
	dsn := b.fresh(t)
	stores := make([]*store.Store, n)
	for i := range stores {
		stores[i] = storetest.Open(t, b.dialect, dsn)
	}
	return stores
}

func (b backend) store(t testing.TB) *store.Store {
	t.Helper()
	return b.open(t, 1)[0]
}

func createTag(t testing.TB, s *store.Store, name string, maxID, step int64) segment.Tag {
	t.Helper()
	tag, err := s.CreateTag(context.Background(), segment.Tag{Name: name, MaxID: maxID, Step: step})
	if err != nil {
		t.Fatalf("CreateTag(%q): %v", name, err)
	}
	return tag
}

func ptr[T any](v T) *T { return &v }

func TestAllocate(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "orders", 1, 2000)

		// One sequence of calls on the row; each step follows the previous.
		steps := []struct {
			name  string
			step  int64
			want  segment.Allocation
			start int64
		}{
			{"row step first range is 1..2000", 0, segment.Allocation{MaxID: 2001, Step: 2000, DBStep: 2000}, 1},
			{"explicit step", 500, segment.Allocation{MaxID: 2501, Step: 500, DBStep: 2000}, 2001},
			{"negative step means row step", -1, segment.Allocation{MaxID: 4501, Step: 2000, DBStep: 2000}, 2501},
			{"explicit step above the row's", 1_000_000, segment.Allocation{MaxID: 1_004_501, Step: 1_000_000, DBStep: 2000}, 4501},
		}
		for _, tc := range steps {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.Allocate(ctx, "orders", tc.step)
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want || got.Start() != tc.start {
					t.Fatalf("Allocate(%d) = %+v (start %d), want %+v (start %d)", tc.step, got, got.Start(), tc.want, tc.start)
				}
			})
		}
		tag, err := s.Tag(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		if tag.MaxID != 1_004_501 || tag.Step != 2000 {
			t.Fatalf("row after allocations: %+v", tag)
		}
	})
}

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

// TestLeafRows: rows as Leaf's own tables hold them, with names this
// service never creates and a step it would refuse.
func TestLeafRows(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		for _, name := range []string{"user@profile", "order/v2", "订单", "a b", "%41"} {
			if _, err := s.DB().ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 10)", name); err != nil {
				t.Fatal(err)
			}
			if a, err := s.Allocate(ctx, name, 0); err != nil || a.Start() != 1 {
				t.Errorf("Allocate(%q) = %+v, %v; want the range from 1", name, a, err)
			}
		}
		for _, step := range []int{0, -5} {
			name := fmt.Sprintf("step%d", step)
			if _, err := s.DB().ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, ?)", name, step); err != nil {
				t.Fatal(err)
			}
			_, err := s.Allocate(ctx, name, 0)
			if !errors.Is(err, segment.ErrMisconfigured) || !strings.Contains(err.Error(), fmt.Sprintf("step is %d", step)) {
				t.Errorf("Allocate of a row with step %d: %v; want ErrMisconfigured naming the step", step, err)
			}
		}
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

func TestAllocateErrors(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		const near = math.MaxInt64 - 10
		createTag(t, s, "near", near, 100)
		createTag(t, s, "edge", near, 100)

		createTag(t, s, "huge", near, 100)

		// Near the int64 maximum the step is cut to the ids left, so the
		// last ones are issued; then the row is exhausted.
		tests := []struct {
			name     string
			tag      string
			step     int64
			wantErr  error
			wantStep int64 // step of the range returned
			wantMax  int64 // max_id of the row afterwards
		}{
			{"unknown tag", "missing", 0, segment.ErrUnknownTag, 0, 0},
			{"unknown tag explicit step", "missing", 10, segment.ErrUnknownTag, 0, 0},
			{"row step is cut to the ids left", "near", 0, nil, 10, math.MaxInt64},
			{"then the row is exhausted", "near", 1, segment.ErrExhausted, 0, math.MaxInt64},
			{"reaching the maximum exactly", "edge", 10, nil, 10, math.MaxInt64},
			{"then even a step of 1 is refused", "edge", 1, segment.ErrExhausted, 0, math.MaxInt64},
			{"a huge step is cut too", "huge", math.MaxInt64, nil, 10, math.MaxInt64},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				a, err := s.Allocate(ctx, tc.tag, tc.step)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Allocate(%q, %d) error = %v, want %v", tc.tag, tc.step, err, tc.wantErr)
				}
				if err == nil && (a.Step != tc.wantStep || a.MaxID != math.MaxInt64 || a.Start() != near) {
					t.Fatalf("Allocate(%q, %d) = %+v, want a range of %d from %d", tc.tag, tc.step, a, tc.wantStep, int64(near))
				}
				if err != nil && !strings.Contains(err.Error(), tc.tag) {
					t.Errorf("error %q does not name the tag", err)
				}
				if tc.wantMax == 0 {
					return
				}
				tag, err := s.Tag(ctx, tc.tag)
				if err != nil {
					t.Fatal(err)
				}
				if tag.MaxID != tc.wantMax {
					t.Fatalf("max_id = %d, want %d", tag.MaxID, tc.wantMax)
				}
			})
		}
	})
}

func TestAllocateAbove(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "orders", 1, 100)
		steps := []struct {
			name        string
			step, floor int64
			want        segment.Allocation
		}{
			{"a floor above the row moves it", 10, 1000, segment.Allocation{MaxID: 1010, Step: 10, DBStep: 100}},
			{"a floor below the row changes nothing", 10, 5, segment.Allocation{MaxID: 1020, Step: 10, DBStep: 100}},
			{"the row's own step", 0, 5000, segment.Allocation{MaxID: 5100, Step: 100, DBStep: 100}},
		}
		for _, tc := range steps {
			got, err := s.AllocateAbove(ctx, "orders", tc.step, tc.floor)
			if err != nil || got != tc.want {
				t.Fatalf("%s: AllocateAbove(%d, %d) = %+v, %v; want %+v", tc.name, tc.step, tc.floor, got, err, tc.want)
			}
		}
		if a, err := s.AllocateAbove(ctx, "orders", 10, math.MaxInt64-5); err != nil || a.Start() != math.MaxInt64-5 || a.Step != 5 {
			t.Fatalf("AllocateAbove near the int64 maximum: %+v, %v; want the last 5 ids", a, err)
		}
		if _, err := s.AllocateAbove(ctx, "orders", 10, math.MaxInt64); !errors.Is(err, segment.ErrExhausted) {
			t.Fatalf("AllocateAbove at the int64 maximum: %v, want ErrExhausted", err)
		}
		if _, err := s.AllocateAbove(ctx, "missing", 10, 5); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("AllocateAbove of a missing tag: %v, want ErrUnknownTag", err)
		}
	})
}

// TestFailedAllocationYieldsNoRange makes the allocation statement fail
// inside the database, and also run past the store's deadline: neither
// gives a range, and what the database did commit is never handed out by
// a later allocation.
func TestFailedAllocationYieldsNoRange(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	setup := storetest.Open(t, store.MySQL, dsn)
	s, err := store.OpenMySQL(ctx, dsn, store.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	createTag(t, setup, "fails", 1, 100)
	createTag(t, setup, "slow", 1, 100)
	for _, q := range []string{
		`CREATE TRIGGER leaf_test_fail BEFORE UPDATE ON leaf_alloc FOR EACH ROW
BEGIN
  IF NEW.biz_tag = 'fails' AND NEW.max_id > 200 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test';
  END IF;
  IF NEW.biz_tag = 'slow' AND NEW.max_id = 201 THEN
    SET @leaf_test_slept = SLEEP(1);
  END IF;
END`,
	} {
		if _, err := setup.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	first, err := s.Allocate(ctx, "fails", 0)
	if err != nil || first.MaxID != 101 {
		t.Fatalf("first allocation = %+v, %v", first, err)
	}
	for range 3 {
		if a, err := s.Allocate(ctx, "fails", 0); err == nil {
			t.Fatalf("allocation refused by the database gave %+v", a)
		}
	}
	if tag, _ := setup.Tag(ctx, "fails"); tag.MaxID != 101 {
		t.Fatalf("max_id after refused allocations = %d, want 101", tag.MaxID)
	}

	if _, err := s.Allocate(ctx, "slow", 0); err != nil { // 1..100
		t.Fatal(err)
	}
	a, err := s.Allocate(ctx, "slow", 0) // raises to 201 after the deadline
	if err == nil || !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("allocation past the deadline = %+v, %v; want ErrStoreUnavailable", a, err)
	}
	// The database finished the statement after the client gave up: that
	// range is lost, never handed out.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if tag, _ := setup.Tag(ctx, "slow"); tag.MaxID == 201 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow statement never committed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for s.Health().Up == false && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the probe brings the store back
	}
	next, err := s.Allocate(ctx, "slow", 0)
	if err != nil {
		t.Fatal(err)
	}
	if next.Start() < 201 {
		t.Fatalf("allocation after the lost one starts at %d, inside the range the database raised past", next.Start())
	}
}

// TestRowLockedByAnother holds the row of one tag locked, as a long
// transaction of someone else's would: its allocations fail after the
// deadline, retried as lock waits, without taking the store down for
// every other tag. (The probe that clears the suspicion a timed-out call
// raises takes milliseconds; other tags are served again as soon as it
// has answered.)
func TestRowLockedByAnother(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	setup := storetest.Open(t, store.MySQL, dsn)
	var changes atomic.Int32
	s, err := store.OpenMySQL(ctx, dsn, store.Options{Timeout: 1500 * time.Millisecond,
		OnHealth: func(store.Health) { changes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	createTag(t, setup, "locked", 1, 10)
	createTag(t, setup, "free", 1, 10)

	tx, err := setup.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT max_id FROM leaf_alloc WHERE biz_tag = 'locked' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allocate(ctx, "locked", 0); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("Allocate of a locked row = %v, want ErrStoreUnavailable", err)
	}
	var (
		a        segment.Allocation
		deadline = time.Now().Add(time.Second)
	)
	for {
		if a, err = s.Allocate(ctx, "free", 0); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil || a.MaxID != 11 {
		t.Fatalf("Allocate of another tag meanwhile = %+v, %v", a, err)
	}
	if !s.Health().Up || changes.Load() != 0 {
		t.Fatalf("a row locked by another took the whole store down (%d health changes)", changes.Load())
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// A statement that was still waiting on the server when the client
	// gave up may have run once the lock went: its range is lost, never
	// handed out.
	if a, err := s.Allocate(ctx, "locked", 0); err != nil || a.Start() < 11 {
		t.Fatalf("Allocate once the lock is gone = %+v, %v", a, err)
	}
}

func TestAllocateConcurrent(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		const (
			nStores    = 3
			perStore   = 8
			perRoutine = 25
			step       = 10
		)
		stores := b.open(t, nStores)
		createTag(t, stores[0], "orders", 1, step)

		var (
			mu     sync.Mutex
			ranges []segment.Allocation
			wg     sync.WaitGroup
		)
		errs := make(chan error, nStores*perStore)
		for _, s := range stores {
			for g := range perStore {
				wg.Go(func() {
					for i := range perRoutine {
						// Mix explicit and row steps.
						st := int64(0)
						if (g+i)%2 == 1 {
							st = int64(1 + (g+i)%7)
						}
						a, err := s.Allocate(context.Background(), "orders", st)
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						ranges = append(ranges, a)
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		// Sorted by start, the ranges must tile [1, max_id) exactly.
		slices.SortFunc(ranges, func(x, y segment.Allocation) int { return int(x.Start() - y.Start()) })
		next := int64(1)
		for _, r := range ranges {
			if r.Start() != next {
				t.Fatalf("range %d..%d does not start at %d: ranges overlap or leave a gap", r.Start(), r.MaxID-1, next)
			}
			next = r.MaxID
		}
		if want := nStores * perStore * perRoutine; len(ranges) != want {
			t.Fatalf("%d ranges, want %d", len(ranges), want)
		}
		tag, err := stores[0].Tag(context.Background(), "orders")
		if err != nil {
			t.Fatal(err)
		}
		if tag.MaxID != next {
			t.Fatalf("max_id = %d, want %d", tag.MaxID, next)
		}
	})
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

const ttl = time.Minute

func acquire(t testing.TB, s *store.Store, holder string, maxWorkers int64) snowflake.Lease {
	t.Helper()
	l, err := s.Acquire(context.Background(), holder, maxWorkers, ttl)
	if err != nil {
		t.Fatalf("Acquire(%q, %d): %v", holder, maxWorkers, err)
	}
	return l
}

func TestAcquireConcurrent(t *testing.T) {
	tests := []struct {
		name       string
		holders    int
		maxWorkers int64
		wantIDs    int // holders that get an id; the rest get ErrNoWorkerID
	}{
		{"32 holders plenty of ids", 32, 1024, 32},
		{"32 holders for 32 ids", 32, 32, 32},
		{"12 holders for 4 ids", 12, 4, 4},
	}
	each(t, func(t *testing.T, b backend) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				stores := b.open(t, 4)
				var (
					mu    sync.Mutex
					ids   = map[int64]string{}
					noID  int
					wg    sync.WaitGroup
					start = make(chan struct{})
				)
				for i := range tc.holders {
					s := stores[i%len(stores)]
					holder := "holder-" + string(rune('A'+i))
					wg.Go(func() {
						<-start
						l, err := s.Acquire(context.Background(), holder, tc.maxWorkers, ttl)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case errors.Is(err, snowflake.ErrNoWorkerID):
							noID++
						case err != nil:
							t.Errorf("Acquire(%q): %v", holder, err)
						case ids[l.WorkerID] != "":
							t.Errorf("worker id %d given to %q and %q", l.WorkerID, ids[l.WorkerID], holder)
						case l.WorkerID < 0 || l.WorkerID >= tc.maxWorkers:
							t.Errorf("worker id %d outside 0..%d", l.WorkerID, tc.maxWorkers-1)
						default:
							ids[l.WorkerID] = holder
						}
					})
				}
				close(start)
				wg.Wait()
				if len(ids) != tc.wantIDs || noID != tc.holders-tc.wantIDs {
					t.Fatalf("%d distinct ids and %d ErrNoWorkerID, want %d and %d", len(ids), noID, tc.wantIDs, tc.holders-tc.wantIDs)
				}
			})
		}
	})
}

func TestLeases(t *testing.T) {
	ctx := context.Background()
	each(t, func(t *testing.T, b backend) {
		t.Run("fresh lease", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h1", 1024)
			if l.WorkerID != 0 || l.Holder != "h1" || l.LastTimestamp != 0 {
				t.Fatalf("lease %+v", l)
			}
			// Expires is by the database clock; on this machine that is ours.
			if d := time.Until(l.Expires); d < ttl-time.Minute || d > ttl+time.Minute {
				t.Fatalf("expires in %v, want about %v", d, ttl)
			}
			if l2 := acquire(t, s, "h2", 1024); l2.WorkerID != 1 {
				t.Fatalf("second holder got %d, want 1", l2.WorkerID)
			}
		})

		t.Run("the widest pool a layout may have", func(t *testing.T) {
			s := b.store(t)
			for want := range int64(3) {
				if l := acquire(t, s, fmt.Sprintf("h%d", want), 1<<snowflake.MaxWorkerBits); l.WorkerID != want {
					t.Fatalf("lease %+v, want worker id %d", l, want)
				}
			}
		})

		t.Run("same holder gets its id back once released or expired, never while live", func(t *testing.T) {
			s := b.store(t)
			acquire(t, s, "other", 8)
			l := acquire(t, s, "h1", 8)
			if _, err := s.Renew(ctx, l, 1234, ttl); err != nil {
				t.Fatal(err)
			}
			// A second process under the same name gets another id, and
			// cannot renew or release the first one's.
			twin := acquire(t, s, "h1", 8)
			if twin.WorkerID == l.WorkerID || twin.Instance == l.Instance {
				t.Fatalf("second acquisition as h1 got %+v while %+v is live", twin, l)
			}
			posing := l
			posing.Instance = twin.Instance
			if _, err := s.Renew(ctx, posing, 0, ttl); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Renew of another acquisition's lease = %v, want ErrLeaseLost", err)
			}
			if err := s.Release(ctx, posing, 0); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Release of another acquisition's lease = %v, want ErrLeaseLost", err)
			}
			if _, err := s.Renew(ctx, l, 0, ttl); err != nil {
				t.Fatalf("the first acquisition lost its lease: %v", err)
			}
			// Released: the holder's own id comes back first.
			if err := s.Release(ctx, l, 1234); err != nil {
				t.Fatal(err)
			}
			again := acquire(t, s, "h1", 8)
			if again.WorkerID != l.WorkerID || again.LastTimestamp != 1234 || again.Instance == l.Instance {
				t.Fatalf("reacquired %+v, want id %d with last 1234 under a new instance", again, l.WorkerID)
			}
			// Expired without a release, likewise.
			storetest.ExpireLease(t, s, again.WorkerID)
			again = acquire(t, s, "h1", 8)
			if again.WorkerID != l.WorkerID || again.LastTimestamp != 1234 || !again.Expires.After(time.Now()) {
				t.Fatalf("reacquired after expiry %+v, want id %d, live, last 1234", again, l.WorkerID)
			}
		})

		t.Run("expired id is reclaimed with its last timestamp", func(t *testing.T) {
			s := b.store(t)
			old := acquire(t, s, "old", 1)
			if _, err := s.Renew(ctx, old, 1_700_000_000_000, ttl); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Acquire(ctx, "new", 1, ttl); !errors.Is(err, snowflake.ErrNoWorkerID) {
				t.Fatalf("Acquire while held: %v, want ErrNoWorkerID", err)
			}
			storetest.ExpireLease(t, s, old.WorkerID)
			l := acquire(t, s, "new", 1)
			if l.WorkerID != old.WorkerID || l.LastTimestamp != 1_700_000_000_000 || l.Holder != "new" {
				t.Fatalf("reclaimed %+v", l)
			}
			if _, err := s.Renew(ctx, old, 1_700_000_000_001, ttl); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Renew by the old holder: %v, want ErrLeaseLost", err)
			}
			if err := s.Release(ctx, old, 1_700_000_000_002); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Release by the old holder: %v, want ErrLeaseLost", err)
			}
			// The old holder's calls changed nothing.
			l2, err := s.Renew(ctx, l, 0, ttl)
			if err != nil || l2.LastTimestamp != 1_700_000_000_000 {
				t.Fatalf("Renew by the new holder = %+v, %v", l2, err)
			}
		})

		t.Run("expired ids before never used ones", func(t *testing.T) {
			s := b.store(t)
			a := acquire(t, s, "a", 8)
			acquire(t, s, "b", 8)
			storetest.ExpireLease(t, s, a.WorkerID)
			if l := acquire(t, s, "c", 8); l.WorkerID != a.WorkerID {
				t.Fatalf("got id %d, want the expired %d", l.WorkerID, a.WorkerID)
			}
		})

		t.Run("renew records the larger timestamp", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 4)
			for _, tc := range []struct {
				last, want int64
			}{{500, 500}, {300, 500}, {501, 501}, {0, 501}} {
				got, err := s.Renew(ctx, l, tc.last, ttl)
				if err != nil {
					t.Fatal(err)
				}
				if got.LastTimestamp != tc.want || got.WorkerID != l.WorkerID || got.Holder != "h" {
					t.Fatalf("Renew(%d) = %+v, want last %d", tc.last, got, tc.want)
				}
				if got.Expires.Before(l.Expires) {
					t.Fatalf("Renew moved the expiry back from %v to %v", l.Expires, got.Expires)
				}
			}
		})

		t.Run("renew finds a lease gone back in time", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 4)
			l, err := s.Renew(ctx, l, 500, ttl)
			if err != nil {
				t.Fatal(err)
			}
			storetest.RewindLease(t, s, l.WorkerID, 100) // a copy from before the renewal
			_, err = s.Renew(ctx, l, 600, ttl)
			if !errors.Is(err, snowflake.ErrLeaseLost) || !errors.Is(err, snowflake.ErrLeaseRegressed) {
				t.Fatalf("Renew on a row behind the holder's last renewal = %v, want ErrLeaseLost and ErrLeaseRegressed", err)
			}
			got := storetest.Leases(t, s)[0]
			if got.LastTimestamp != 100 || !got.Expires.Equal(l.Expires) {
				t.Fatalf("the refused renewal changed the row: %+v", got)
			}
		})

		t.Run("a row held by another is a loss, or a regression when it predates the holder's renewal", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 1)
			l, err := s.Renew(ctx, l, 500, ttl)
			if err != nil {
				t.Fatal(err)
			}
			// A copy from before this holder took the id: another holder,
			// expiring before the expiry this holder was granted.
			storetest.SetLease(t, s, snowflake.Lease{WorkerID: l.WorkerID, Holder: "earlier", Instance: "x",
				LastTimestamp: 400, Expires: l.Expires.Add(-10 * time.Second)})
			if _, err := s.Renew(ctx, l, 600, ttl); !errors.Is(err, snowflake.ErrLeaseRegressed) {
				t.Fatalf("Renew on a row from before the holder's renewal = %v, want ErrLeaseRegressed", err)
			}
			// A lawful takeover: after the lease expired, with a later expiry.
			storetest.SetLease(t, s, snowflake.Lease{WorkerID: l.WorkerID, Holder: "h", Instance: l.Instance,
				LastTimestamp: 500, Expires: l.Expires})
			storetest.ExpireLease(t, s, l.WorkerID)
			if other := acquire(t, s, "other", 1); other.WorkerID != l.WorkerID {
				t.Fatalf("the other holder got worker id %d, want %d", other.WorkerID, l.WorkerID)
			}
			_, err = s.Renew(ctx, l, 600, ttl)
			if !errors.Is(err, snowflake.ErrLeaseLost) || errors.Is(err, snowflake.ErrLeaseRegressed) {
				t.Fatalf("Renew after a lawful takeover = %v, want ErrLeaseLost alone", err)
			}
		})

		t.Run("renew after expiry when nobody took it", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 4)
			storetest.ExpireLease(t, s, l.WorkerID)
			got, err := s.Renew(ctx, l, 10, ttl)
			if err != nil || !got.Expires.After(time.Now()) {
				t.Fatalf("Renew = %+v, %v", got, err)
			}
		})

		t.Run("renew with a lease never acquired", func(t *testing.T) {
			s := b.store(t)
			_, err := s.Renew(ctx, snowflake.Lease{WorkerID: 3, Holder: "ghost"}, 1, ttl)
			if !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Renew = %v, want ErrLeaseLost", err)
			}
		})

		t.Run("release frees at once and records the last timestamp used", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h1", 1)
			if _, err := s.Acquire(ctx, "h2", 1, ttl); !errors.Is(err, snowflake.ErrNoWorkerID) {
				t.Fatalf("Acquire while held: %v, want ErrNoWorkerID", err)
			}
			if err := s.Release(ctx, l, 2000); err != nil {
				t.Fatal(err)
			}
			l2 := acquire(t, s, "h2", 1)
			if l2.WorkerID != l.WorkerID || l2.LastTimestamp != 2000 {
				t.Fatalf("after release got %+v, want id %d with last 2000", l2, l.WorkerID)
			}
			// A renewal records a bound ahead; the release, the exact
			// last timestamp used, which may be lower.
			if _, err := s.Renew(ctx, l2, 5000, ttl); err != nil {
				t.Fatal(err)
			}
			if err := s.Release(ctx, l2, 3000); err != nil {
				t.Fatal(err)
			}
			if l3 := acquire(t, s, "h3", 1); l3.LastTimestamp != 3000 {
				t.Fatalf("after a release at 3000 got %+v", l3)
			}
		})

		t.Run("exhaustion", func(t *testing.T) {
			s := b.store(t)
			for i := range 4 {
				if l := acquire(t, s, "h"+string(rune('0'+i)), 4); l.WorkerID != int64(i) {
					t.Fatalf("holder %d got id %d", i, l.WorkerID)
				}
			}
			_, err := s.Acquire(ctx, "h4", 4, ttl)
			if !errors.Is(err, snowflake.ErrNoWorkerID) || !strings.Contains(err.Error(), "4") {
				t.Fatalf("Acquire of a fifth id: %v, want ErrNoWorkerID naming 4", err)
			}
			// A larger range has room.
			if l := acquire(t, s, "h4", 5); l.WorkerID != 4 {
				t.Fatalf("with 5 ids got %d", l.WorkerID)
			}
		})

		t.Run("invalid arguments", func(t *testing.T) {
			s := b.store(t)
			for _, tc := range []struct {
				name       string
				holder     string
				maxWorkers int64
				ttl        time.Duration
			}{
				{"empty holder", "", 4, ttl},
				{"holder too long", strings.Repeat("h", store.MaxHolderLen+1), 4, ttl},
				{"no workers", "h", 0, ttl},
				{"too many workers", "h", 1<<snowflake.MaxWorkerBits + 1, ttl},
				{"zero ttl", "h", 4, 0},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if _, err := s.Acquire(ctx, tc.holder, tc.maxWorkers, tc.ttl); err == nil {
						t.Fatal("no error")
					}
				})
			}
		})
	})
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("mysql dsn password not in errors", func(t *testing.T) {
		_, err := store.OpenMySQL(ctx, "leafuser:s3cr3t-pw@tcp(127.0.0.1:1)/leaf?timeout=1s", store.Options{})
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Fatalf("error reveals the password: %v", err)
		}
	})
	t.Run("mysql bad dsn", func(t *testing.T) {
		if _, err := store.OpenMySQL(ctx, "not a dsn", store.Options{}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("sqlite empty path", func(t *testing.T) {
		if _, err := store.OpenSQLite(ctx, "", store.Options{}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("sqlite in memory", func(t *testing.T) {
		s, err := store.OpenSQLite(ctx, ":memory:", store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		createTag(t, s, "m", 1, 5)
		if a, err := s.Allocate(ctx, "m", 0); err != nil || a.MaxID != 6 {
			t.Fatalf("Allocate = %+v, %v", a, err)
		}
	})
}

func BenchmarkAllocate(b *testing.B) {
	s := storetest.SQLiteStore(b)
	createTag(b, s, "bench", 1, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Allocate(ctx, "bench", 0); err != nil {
			b.Fatal(err)
		}
	}
}
