package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestAllocateBatch: one call answers each tag as Allocate(ctx, tag, 0)
// would, in the order asked, and raises only the rows of exactly the names
// asked.
func TestAllocateBatch(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "orders", 1, 2000)
		createTag(t, s, "订单", 500, 10)
		createTag(t, s, "near", math.MaxInt64-10, 100)
		createTag(t, s, "done", math.MaxInt64-1, 100)
		if _, err := s.DB().ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('zero', 1, 0)"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Allocate(ctx, "done", 0); err != nil { // takes the last id
			t.Fatal(err)
		}
		tags := []string{"ORDERS", "orders", "nope", "订单", "near", "zero", "done", "orders "}
		got, err := s.AllocateBatch(ctx, tags)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			alloc segment.Allocation
			err   error
		}{
			{err: segment.ErrUnknownTag},
			{alloc: segment.Allocation{MaxID: 2001, Step: 2000, DBStep: 2000}},
			{err: segment.ErrUnknownTag},
			{alloc: segment.Allocation{MaxID: 510, Step: 10, DBStep: 10}},
			{alloc: segment.Allocation{MaxID: math.MaxInt64, Step: 10, DBStep: 100}},
			{err: segment.ErrMisconfigured},
			{err: segment.ErrExhausted},
			{err: segment.ErrUnknownTag},
		}
		if len(got) != len(tags) {
			t.Fatalf("%d results for %d tags", len(got), len(tags))
		}
		for i, w := range want {
			r := got[i]
			if w.err != nil {
				if !errors.Is(r.Err, w.err) || !strings.Contains(r.Err.Error(), fmt.Sprintf("%q", tags[i])) {
					t.Errorf("%q: %+v, want an error naming it that wraps %v", tags[i], r, w.err)
				}
				continue
			}
			if r.Err != nil || r.Allocation != w.alloc {
				t.Errorf("%q: %+v, want %+v", tags[i], r, w.alloc)
			}
		}
		for name, maxID := range map[string]int64{"orders": 2001, "订单": 510, "near": math.MaxInt64, "zero": 1, "done": math.MaxInt64} {
			tag, err := s.Tag(ctx, name)
			if err != nil || tag.MaxID != maxID {
				t.Errorf("row %q: %+v, %v; want max_id %d", name, tag, err, maxID)
			}
		}
		if _, err := s.AllocateBatch(ctx, []string{"orders", "订单", "orders"}); err == nil {
			t.Error("AllocateBatch of a name twice: no error")
		}
		if got, err := s.AllocateBatch(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("AllocateBatch(nil) = %+v, %v", got, err)
		}
	})
}

// TestAllocateBatchMany: a batch of many rows, some unknown.
func TestAllocateBatchMany(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		var tags []string
		for i := range 600 {
			tag := fmt.Sprintf("tag-%d", i)
			tags = append(tags, tag)
			if i%3 != 0 {
				createTag(t, s, tag, int64(i+1), int64(10+i))
			}
		}
		got, err := s.AllocateBatch(ctx, tags)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			if i%3 == 0 {
				if !errors.Is(r.Err, segment.ErrUnknownTag) {
					t.Fatalf("%s: %+v, want ErrUnknownTag", tags[i], r)
				}
				continue
			}
			if want := (segment.Allocation{MaxID: int64(i+1) + int64(10+i), Step: int64(10 + i), DBStep: int64(10 + i)}); r.Err != nil || r.Allocation != want {
				t.Fatalf("%s: %+v, want %+v", tags[i], r, want)
			}
		}
	})
}

// TestAllocateBatchLatin1: a name a latin1 table cannot hold is unknown,
// and does not keep the names beside it from their ranges.
func TestAllocateBatchLatin1(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, store.MySQL, storetest.MySQL(t))
	if _, err := s.DB().ExecContext(ctx, "ALTER TABLE leaf_alloc CONVERT TO CHARACTER SET latin1"); err != nil {
		t.Fatal(err)
	}
	createTag(t, s, "été", 1, 10)
	createTag(t, s, "orders", 1, 10)
	got, err := s.AllocateBatch(ctx, []string{"订单", "été", "orders", "ORDERS"})
	if err != nil {
		t.Fatal(err)
	}
	for i, known := range []bool{false, true, true, false} {
		if known && (got[i].Err != nil || got[i].Start() != 1 || got[i].Step != 10) {
			t.Errorf("result %d: %+v, want the range from 1", i, got[i])
		}
		if !known && !errors.Is(got[i].Err, segment.ErrUnknownTag) {
			t.Errorf("result %d: %+v, want ErrUnknownTag", i, got[i])
		}
	}
}

// TestAllocateBatchConcurrent: batches and single raises of the same rows
// from several stores on one database, at once, never hand out an id twice
// and leave no gap: every row's ranges tile it from 1 to its max_id.
func TestAllocateBatchConcurrent(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		const (
			nStores    = 3
			perStore   = 6
			perRoutine = 15
			nTags      = 12
		)
		stores := b.open(t, nStores)
		var tags []string
		for i := range nTags {
			tags = append(tags, fmt.Sprintf("t%02d", i))
			createTag(t, stores[0], tags[i], 1, int64(5+i))
		}
		var (
			mu     sync.Mutex
			ranges = map[string][]segment.Allocation{}
			wg     sync.WaitGroup
		)
		errs := make(chan error, nStores*perStore)
		for _, s := range stores {
			for g := range perStore {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 7))
					for i := range perRoutine {
						ctx := context.Background()
						if (g+i)%3 == 0 {
							tag := tags[r.IntN(nTags)]
							a, err := s.Allocate(ctx, tag, 0)
							if err != nil {
								errs <- err
								return
							}
							mu.Lock()
							ranges[tag] = append(ranges[tag], a)
							mu.Unlock()
							continue
						}
						some := slices.Clone(tags)
						r.Shuffle(len(some), func(i, j int) { some[i], some[j] = some[j], some[i] })
						some = some[:1+r.IntN(nTags)]
						res, err := s.AllocateBatch(ctx, some)
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						for k, x := range res {
							if x.Err != nil {
								errs <- x.Err
							}
							ranges[some[k]] = append(ranges[some[k]], x.Allocation)
						}
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
		for _, tag := range tags {
			rs := ranges[tag]
			slices.SortFunc(rs, func(x, y segment.Allocation) int { return int(x.Start() - y.Start()) })
			next := int64(1)
			for _, r := range rs {
				if r.Start() != next {
					t.Fatalf("%s: range %d..%d does not start at %d: ranges overlap or leave a gap", tag, r.Start(), r.MaxID-1, next)
				}
				next = r.MaxID
			}
			row, err := stores[0].Tag(context.Background(), tag)
			if err != nil {
				t.Fatal(err)
			}
			if row.MaxID != next {
				t.Fatalf("%s: max_id = %d, want %d", tag, row.MaxID, next)
			}
		}
	})
}

// TestAllocateBatchRowMoved: the compare-and-set of a batch matches only
// rows still as they were read, so a batch that read a row before another
// raise of it hands nothing out.
func TestAllocateBatchRowMoved(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "a", 1, 10)
		createTag(t, s, "b", 1, 10)
		if _, err := s.Allocate(ctx, "b", 0); err != nil { // b moves to 11
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			maxIDs map[string]int64
			want   bool
		}{
			{"every row as read", map[string]int64{"a": 1, "b": 11}, true},
			{"one row moved since", map[string]int64{"a": 1, "b": 1}, false},
			{"the one row moved since", map[string]int64{"b": 1}, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ok, err := store.RaiseAsRead(ctx, s, tc.maxIDs)
				if err != nil || ok != tc.want {
					t.Fatalf("RaiseAsRead(%v) = %v, %v; want %v", tc.maxIDs, ok, err, tc.want)
				}
			})
		}
	})
}
