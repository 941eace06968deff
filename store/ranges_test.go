package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

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

func BenchmarkAllocate(b *testing.B) {
	benchmarkAllocate(b, storetest.SQLiteStore(b))
}

// BenchmarkAllocateMySQL is one range taken from the MySQL server of
// LEAF_TEST_MYSQL_DSN (BENCHMARKS.md: MySQL 9.7 beside MariaDB 10.11).
func BenchmarkAllocateMySQL(b *testing.B) {
	benchmarkAllocate(b, storetest.Open(b, store.MySQL, storetest.MySQL(b)))
}

func benchmarkAllocate(b *testing.B, s *store.Store) {
	createTag(b, s, "bench", 1, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Allocate(ctx, "bench", 0); err != nil {
			b.Fatal(err)
		}
	}
}
