package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestEveryNameIsExact walks every kind of name leaf keeps in a table. On
// MySQL and MariaDB a comparison ignores trailing spaces (PAD SPACE, which
// utf8mb4_bin is too), and a Leaf table's collation may ignore case and
// accents: a name that differs from a row's only so must reach nothing of
// that row, and a new name that only padding tells apart is refused
// rather than taken for the other. "MySQL, NO PAD leaf_alloc" is a Leaf
// table under MySQL 8.4's default kind of collation (MariaDB's uca1400
// NO PAD stands in), where "x" and "x " are two rows: the twins are made
// by hand there and on SQLite.
func TestEveryNameIsExact(t *testing.T) {
	type check struct {
		name string
		run  func(t *testing.T, s *store.Store, twins bool)
	}
	ctx := context.Background()
	checks := []check{
		{"tags", func(t *testing.T, s *store.Store, twins bool) {
			createTag(t, s, "orders", 1, 10)
			for _, name := range []string{"orders ", "ORDERS", "ORDERS "} {
				if _, err := s.Allocate(ctx, name, 0); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("Allocate(%q) = %v; want ErrUnknownTag", name, err)
				}
				if _, err := s.Tag(ctx, name); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("Tag(%q) = %v; want ErrUnknownTag", name, err)
				}
				if found, err := s.FindTags(ctx, []string{name}); err != nil || len(found) != 0 {
					t.Errorf("FindTags(%q) = %q, %v; want none", name, found, err)
				}
			}
			if _, err := s.CreateTag(ctx, segment.Tag{Name: "orders ", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrInvalidTag) {
				t.Errorf("CreateTag(\"orders \") = %v; want ErrInvalidTag (a name may not end in a space)", err)
			}
			if _, err := s.CreateOrderedTag(ctx, segment.Tag{Name: "fresh ", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrInvalidTag) {
				t.Errorf("CreateOrderedTag(\"fresh \") = %v; want ErrInvalidTag", err)
			}
			if tag, err := s.Tag(ctx, "orders"); err != nil || tag.MaxID != 1 {
				t.Errorf("orders = %+v, %v; want it untouched", tag, err)
			}
		}},
		{"settings of formatted and opaque tags", func(t *testing.T, s *store.Store, twins bool) {
			set := bizid.Settings{Format: "F-{seq}"}
			if _, err := s.CreateSpecialTag(ctx, segment.Tag{Name: "fmt", MaxID: 1, Step: 10}, set); err != nil {
				t.Fatal(err)
			}
			want := "none"
			if twins {
				insertRow(t, s, "fmt ")
				want = "plain"
			}
			if got := kindsOf(t, s, "fmt ")["fmt "]; got != want {
				t.Errorf("LookupTags(\"fmt \") = %s; want %s, never fmt's settings", got, want)
			}
			if twins {
				err := s.SetTagSettings(ctx, bizid.Settings{}, false, bizid.Settings{Tag: "fmt ", Format: "G-{seq}", Reset: bizid.Never})
				if !errors.Is(err, bizid.ErrInvalidFormat) {
					t.Errorf("settings for \"fmt \" beside fmt: %v; want ErrInvalidFormat", err)
				}
			}
		}},
		{"ordered tags and their lease rows", func(t *testing.T, s *store.Store, twins bool) {
			if _, err := s.CreateOrderedTag(ctx, segment.Tag{Name: "ord", MaxID: 1, Step: 10}); err != nil {
				t.Fatal(err)
			}
			if twins {
				insertRow(t, s, "ord ")
			}
			for name, kind := range kindsOf(t, s, "ord ", "ORD") {
				if kind != "none" && kind != "plain" {
					t.Errorf("LookupTags(%q) = %s; want no row or a plain one", name, kind)
				}
			}
			m := sequence.Member{ID: "m", Addr: "m:1"}
			if _, ok, err := s.AcquireSection(ctx, "ord ", sequence.OrderedSection, m, time.Minute); err != nil || ok {
				t.Errorf("AcquireSection(\"ord \") = %v, %v; want no row taken", ok, err)
			}
			for _, r := range sections(t, s) {
				if r.Space == "ord" && r.Holder != "" {
					t.Errorf("%+v was taken through another name", r)
				}
			}
		}},
		{"period rows", func(t *testing.T, s *store.Store, twins bool) {
			set := bizid.Settings{Format: "INV-{date:20060102}-{seq}", Reset: bizid.Day}
			if _, err := s.CreateSpecialTag(ctx, segment.Tag{Name: "inv", MaxID: 1, Step: 10}, set); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"20200101", "20200102"} {
				if err := s.EnsurePeriod(ctx, "inv", key); err != nil {
					t.Fatal(err)
				}
			}
			other := map[string]bool{}
			if store.Dialect(s) == store.SQLite { // the only table here where case tells rows apart
				insertRow(t, s, "INV@20200101")
				other["INV@20200101"] = true
			}
			if twins {
				insertRow(t, s, "inv@20200101 ")
				other["inv@20200101 "] = true
			}
			// A row the collation takes for a period's stands in the way
			// of a new tag that resets, as one of exactly its name does.
			insertRow(t, s, "CASE@20200101")
			_, err := s.CreateSpecialTag(ctx, segment.Tag{Name: "case", MaxID: 1, Step: 10}, set)
			if caseless := store.Dialect(s) == store.MySQL; caseless != errors.Is(err, bizid.ErrInvalidFormat) {
				t.Errorf("CreateSpecialTag(case) beside CASE@20200101: %v; want refused only where case is ignored (%v)", err, caseless)
			}
			if _, err := s.Allocate(ctx, "inv@20200102 ", 0); !errors.Is(err, segment.ErrUnknownTag) {
				t.Errorf("Allocate(\"inv@20200102 \") = %v; want ErrUnknownTag", err)
			}
			// A period's row is served only as inv's texts, and no tag of
			// such a name is created; a name of no period's is a tag.
			for name, kind := range kindsOf(t, s, "inv@20200102", "inv@20200103", "inv@20200102 ", "INV@20200102", "inv@2020", "inv@x0200102") {
				if period := name == "inv@20200102" || name == "inv@20200103"; period != (kind == "period") {
					t.Errorf("LookupTags(%q) = %s; want a period's row only for inv@20200102 and inv@20200103 (not begun)", name, kind)
				}
			}
			if _, err := s.CreateTag(ctx, segment.Tag{Name: "inv@20200103", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrInvalidTag) {
				t.Errorf("CreateTag(inv@20200103) = %v; want ErrInvalidTag", err)
			}
			if _, err := s.CreateOrderedTag(ctx, segment.Tag{Name: "inv@20200103", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrInvalidTag) {
				t.Errorf("CreateOrderedTag(inv@20200103) = %v; want ErrInvalidTag", err)
			}
			createTag(t, s, "inv@2020", 1, 10)
			if n, err := s.PrunePeriods(ctx, "inv", "20200102"); err != nil || n != 1 {
				t.Errorf("PrunePeriods = %d, %v; want the one row of 20200101", n, err)
			}
			for name := range other {
				if _, err := s.Tag(ctx, name); err != nil {
					t.Errorf("%q was pruned with inv's periods: %v", name, err)
				}
			}
		}},
		{"sequence spaces", func(t *testing.T, s *store.Store, twins bool) {
			createSpace(t, s, sequence.Space{Name: "inbox", Step: 100, Sections: 2})
			for _, name := range []string{"inbox ", "INBOX"} {
				if sp, err := s.Space(ctx, name); !errors.Is(err, sequence.ErrUnknownSpace) {
					t.Errorf("Space(%q) = %+v, %v; want ErrUnknownSpace", name, sp, err)
				}
			}
			if _, err := s.CreateSpace(ctx, sequence.Space{Name: "inbox ", Step: 100, Sections: 2}); !errors.Is(err, sequence.ErrInvalidSpace) {
				t.Errorf("CreateSpace(\"inbox \") = %v; want ErrInvalidSpace (a name may not end in a space)", err)
			}
		}},
		{"sections of a space", func(t *testing.T, s *store.Store, twins bool) {
			createSpace(t, s, sequence.Space{Name: "box", Step: 100, Sections: 1})
			m, other := sequence.Member{ID: "m", Addr: "m:1"}, sequence.Member{ID: "o", Addr: "o:1"}
			if _, ok, err := s.AcquireSection(ctx, "box", 0, m, time.Minute); err != nil || !ok {
				t.Fatalf("AcquireSection(box) = %v, %v", ok, err)
			}
			if _, ok, err := s.AcquireSection(ctx, "box ", 0, other, time.Minute); err != nil || ok {
				t.Errorf("AcquireSection(\"box \") = %v, %v; want no row", ok, err)
			}
			if v, err := s.RaiseMax(ctx, "box ", 0, "m", 100); !errors.Is(err, sequence.ErrLeaseLost) {
				t.Errorf("RaiseMax(\"box \") = %d, %v; want ErrLeaseLost (no such section)", v, err)
			}
			if err := s.ReleaseSection(ctx, "box ", 0, "m"); err != nil {
				t.Fatal(err)
			}
			if v, err := s.RaiseMax(ctx, "box", 0, "m", 100); err != nil || v != 100 {
				t.Errorf("RaiseMax(box) = %d, %v; want 100: box's section changed through \"box \"", v, err)
			}
		}},
		{"sequence members", func(t *testing.T, s *store.Store, twins bool) {
			if _, err := sequence.New(sequence.Options{Store: s, Addr: "m:1", ID: "m ", Interval: -1}); err == nil {
				t.Error("a member id that ends in a space was taken")
			}
		}},
		{"snowflake holders", func(t *testing.T, s *store.Store, twins bool) {
			a, err := s.Acquire(ctx, "web1", 16, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Acquire(ctx, "web1 ", 16, time.Minute)
			if err != nil || b.WorkerID == a.WorkerID {
				t.Fatalf("Acquire(\"web1 \") = %+v, %v; want another id than web1's %d", b, err, a.WorkerID)
			}
			if err := s.Release(ctx, b, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Renew(ctx, a, 0, time.Minute); err != nil {
				t.Errorf("web1's lease after \"web1 \" let go of its own: %v", err)
			}
		}},
		{"marks of other stores' tags", func(t *testing.T, s *store.Store, twins bool) {
			if err := s.RecordMarks(ctx, "peer", map[string]int64{"m": 100}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Marks(ctx, "peer", []string{"m", "m ", "M"})
			if err != nil {
				t.Fatal(err)
			}
			// The key of leaf_marks cannot tell "m" from "m " on MySQL:
			// they share one mark, the higher, never none.
			want := map[string]int64{"m": 100}
			if store.Dialect(s) == store.MySQL {
				want["m "] = 100
			}
			if len(got) != len(want) || got["m"] != want["m"] || got["m "] != want["m "] {
				t.Errorf("Marks = %v; want %v", got, want)
			}
		}},
	}

	type backend struct {
		name  string
		open  func(tb testing.TB) *store.Store
		twins bool // leaf_alloc holds "x" and "x " apart
	}
	for _, b := range []backend{
		{"SQLite", storetest.SQLiteStore, true},
		{"MySQL", storetest.MySQLStore, false},
		{"MySQL, NO PAD leaf_alloc", func(t testing.TB) *store.Store {
			s := storetest.MySQLStore(t)
			_, err := s.DB().ExecContext(ctx, "ALTER TABLE leaf_alloc CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_nopad_ai_ci")
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1273 { // unknown collation
				t.Skip("the server has no utf8mb4_uca1400_nopad_ai_ci")
			}
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, true},
	} {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) { c.run(t, s, b.twins) })
			}
		})
	}
}

// insertRow writes a leaf_alloc row behind the store's back, as a Leaf
// table may hold it.
func insertRow(t *testing.T, s *store.Store, name string) {
	t.Helper()
	if _, err := s.DB().ExecContext(context.Background(), "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1000, 10)", name); err != nil {
		t.Fatalf("insert %q: %v", name, err)
	}
}

func sections(t *testing.T, s *store.Store) []sequence.SectionRow {
	t.Helper()
	rows, err := s.Sections(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
