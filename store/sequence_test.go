package store_test

import (
	"context"
	"errors"
	"maps"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

func createSpace(t testing.TB, s *store.Store, sp sequence.Space) {
	t.Helper()
	if _, err := s.CreateSpace(context.Background(), sp); err != nil {
		t.Fatalf("create space %+v: %v", sp, err)
	}
}

func TestSpaces(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createSpace(t, s, sequence.Space{Name: "inbox", Step: 100, Sections: 1200})
		createSpace(t, s, sequence.Space{Name: "订单", Step: 1, Sections: 1})
		_, err := s.CreateSpace(ctx, sequence.Space{Name: "inbox", Step: 5, Sections: 3})
		if !errors.Is(err, sequence.ErrSpaceExists) {
			t.Fatalf("second create: %v, want ErrSpaceExists", err)
		}
		got, err := s.Space(ctx, "inbox")
		if err != nil || got != (sequence.Space{Name: "inbox", Step: 100, Sections: 1200}) {
			t.Fatalf("space = %+v, %v", got, err)
		}
		for _, name := range []string{"INBOX", "outbox"} {
			if _, err := s.Space(ctx, name); !errors.Is(err, sequence.ErrUnknownSpace) {
				t.Fatalf("space %q: %v, want ErrUnknownSpace", name, err)
			}
		}
		all, err := s.Spaces(ctx)
		if err != nil || len(all) != 2 {
			t.Fatalf("spaces = %+v, %v", all, err)
		}
		rows, err := s.Sections(ctx)
		if err != nil || len(rows) != 1201 {
			t.Fatalf("%d sections, %v; want 1201", len(rows), err)
		}
		if _, err := s.CreateSpace(ctx, sequence.Space{Name: "x", Step: 0, Sections: 1}); !errors.Is(err, sequence.ErrInvalidStep) {
			t.Fatalf("step 0: %v", err)
		}
	})
}

func TestSectionLease(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		stores := b.open(t, 2)
		s1, s2 := stores[0], stores[1]
		ctx := context.Background()
		createSpace(t, s1, sequence.Space{Name: "inbox", Step: 100, Sections: 2})
		a, c := sequence.Member{ID: "a", Addr: "a:1"}, sequence.Member{ID: "c", Addr: "c:1"}

		max, ok, err := s1.AcquireSection(ctx, "inbox", 0, a, time.Minute)
		if err != nil || !ok || max != 0 {
			t.Fatalf("acquire = %d, %v, %v", max, ok, err)
		}
		if _, ok, err := s2.AcquireSection(ctx, "inbox", 0, c, time.Minute); err != nil || ok {
			t.Fatalf("a live lease was taken: %v, %v", ok, err)
		}
		if v, err := s1.RaiseMax(ctx, "inbox", 0, "a", 100); err != nil || v != 100 {
			t.Fatalf("raise = %d, %v", v, err)
		}
		if _, err := s2.RaiseMax(ctx, "inbox", 0, "c", 100); !errors.Is(err, sequence.ErrLeaseLost) {
			t.Fatalf("raise by a non-holder: %v", err)
		}
		if err := s1.RenewSections(ctx, "a", time.Minute); err != nil {
			t.Fatal(err)
		}
		rows, err := s2.Sections(ctx)
		if err != nil || rows[0].Holder != "a" || rows[0].Addr != "a:1" || !rows[0].Live || rows[1].Live {
			t.Fatalf("sections = %+v, %v", rows, err)
		}
		// What is left of the lease, by the database's clock: a minute
		// less the time since the renewal; nothing of a lease not held.
		if l := rows[0].Left; l <= 50*time.Second || l > time.Minute || rows[1].Left != 0 {
			t.Fatalf("lease left %v and %v, want under a minute and 0", l, rows[1].Left)
		}

		// a dies: once its lease ran out, c takes the section above max_seq.
		storetest.ExpireMember(t, s1, "a")
		max, ok, err = s2.AcquireSection(ctx, "inbox", 0, c, time.Minute)
		if err != nil || !ok || max != 100 {
			t.Fatalf("takeover = %d, %v, %v; want 100", max, ok, err)
		}
		if _, err := s1.RaiseMax(ctx, "inbox", 0, "a", 100); !errors.Is(err, sequence.ErrLeaseLost) {
			t.Fatalf("raise by the old owner: %v", err)
		}
		// A release frees the section at once.
		if err := s2.ReleaseSection(ctx, "inbox", 0, "c"); err != nil {
			t.Fatal(err)
		}
		if max, ok, err := s1.AcquireSection(ctx, "inbox", 0, a, time.Minute); err != nil || !ok || max != 100 {
			t.Fatalf("after release = %d, %v, %v", max, ok, err)
		}

		// Members.
		for _, m := range []sequence.Member{a, c} {
			if err := s1.Heartbeat(ctx, m, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if err := s1.Heartbeat(ctx, sequence.Member{ID: "a", Addr: "a:2"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		storetest.ExpireMember(t, s1, "c")
		ms, err := s2.Members(ctx)
		if err != nil || len(ms) != 1 || ms[0] != (sequence.Member{ID: "a", Addr: "a:2"}) {
			t.Fatalf("members = %+v, %v", ms, err)
		}
		if err := s2.Leave(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if ms, err := s2.Members(ctx); err != nil || len(ms) != 0 {
			t.Fatalf("members after leave = %+v, %v", ms, err)
		}
	})
}

func TestRaiseMaxExhausted(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createSpace(t, s, sequence.Space{Name: "inbox", Step: 100, Sections: 1})
		if _, _, err := s.AcquireSection(ctx, "inbox", 0, sequence.Member{ID: "a", Addr: "a:1"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RaiseMax(ctx, "inbox", 0, "a", math.MaxInt64-10); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RaiseMax(ctx, "inbox", 0, "a", 11); !errors.Is(err, sequence.ErrExhausted) {
			t.Fatalf("past the maximum: %v", err)
		}
	})
}

// TestRaiseMaxConcurrent: raises from many connections never answer the
// same value.
func TestRaiseMaxConcurrent(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		stores := b.open(t, 3)
		ctx := context.Background()
		createSpace(t, stores[0], sequence.Space{Name: "inbox", Step: 10, Sections: 1})
		if _, _, err := stores[0].AcquireSection(ctx, "inbox", 0, sequence.Member{ID: "a", Addr: "a:1"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		var (
			mu   sync.Mutex
			seen = map[int64]bool{}
			wg   sync.WaitGroup
		)
		for i := range 12 {
			s := stores[i%len(stores)]
			wg.Go(func() {
				for range 20 {
					v, err := s.RaiseMax(ctx, "inbox", 0, "a", 10)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if seen[v] {
						t.Errorf("max_seq %d answered twice", v)
					}
					seen[v] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 240 {
			t.Fatalf("%d distinct values, want 240", len(seen))
		}
	})
}

func TestOrderedTags(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		if _, err := s.CreateOrderedTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 10}); err != nil {
			t.Fatal(err)
		}
		createTag(t, s, "plain", 1, 10)
		if _, err := s.CreateOrderedTag(ctx, segment.Tag{Name: "plain", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrTagExists) {
			t.Fatalf("ordered over a plain tag: %v", err)
		}
		if names, err := s.OrderedTags(ctx); err != nil || len(names) != 1 || names[0] != "orders" {
			t.Fatalf("ordered tags = %q, %v", names, err)
		}
		want := map[string]string{"plain": "plain", "orders": "ordered", "nope": "none", "ORDERS": "none"}
		if got := kindsOf(t, s, "plain", "orders", "nope", "ORDERS"); !maps.Equal(got, want) {
			t.Fatalf("LookupTags = %v, want %v", got, want)
		}
		for i, want := range [][2]int64{{1, 10}, {11, 20}} {
			first, last, err := s.RaiseRow(ctx, "orders", 0, 0)
			if err != nil || first != want[0] || last != want[1] {
				t.Fatalf("raise %d = %d..%d, %v; want %v", i, first, last, err, want)
			}
		}
		// A raise whose answer was lost, tried again: the range it made
		// is the one returned, not one above it.
		if first, last, err := store.RaiseRowLosing(ctx, s, "orders", 0, 1); err != nil || first != 21 || last != 30 {
			t.Fatalf("a raise whose answer was lost = %d..%d, %v; want 21..30, the range it made", first, last, err)
		}
		// Up to a limit: a step, then what is left, then full without a
		// write.
		for i, want := range [][2]int64{{31, 34}} {
			first, last, err := s.RaiseRow(ctx, "orders", 34, 0)
			if err != nil || first != want[0] || last != want[1] {
				t.Fatalf("raise %d up to 34 = %d..%d, %v; want %v", i, first, last, err, want)
			}
		}
		before, err := s.Tag(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.RaiseRow(ctx, "orders", 34, 0); !errors.Is(err, sequence.ErrFull) {
			t.Fatalf("raise of a full row: %v, want ErrFull", err)
		}
		if after, err := s.Tag(ctx, "orders"); err != nil || after.MaxID != 35 || !after.UpdateTime.Equal(before.UpdateTime) {
			t.Fatalf("a full row after a refused raise: %+v, %v; want max_id 35, not written", after, err)
		}
		if done, err := s.HandBack(ctx, "orders", 35, 33); err != nil || !done {
			t.Fatalf("hand back 33..34: %v, %v", done, err)
		}
		if first, last, err := s.RaiseRow(ctx, "orders", 34, 0); err != nil || first != 33 || last != 34 {
			t.Fatalf("raise after a hand back = %d..%d, %v; want 33..34", first, last, err)
		}
		// A plain tag made ordered keeps its row and gets its lease row.
		if err := s.EnsureOrdered(ctx, "plain"); err != nil {
			t.Fatal(err)
		}
		if err := s.EnsureOrdered(ctx, "plain"); err != nil {
			t.Fatalf("EnsureOrdered twice: %v", err)
		}
		if got := kindsOf(t, s, "plain")["plain"]; got != "ordered" {
			t.Fatalf("plain after EnsureOrdered: %s", got)
		}
		if err := s.EnsureOrdered(ctx, "nope"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("EnsureOrdered of no tag: %v", err)
		}
		// The lease row is a section like any other.
		if _, ok, err := s.AcquireSection(ctx, "orders", sequence.OrderedSection, sequence.Member{ID: "a", Addr: "a:1"}, time.Minute); err != nil || !ok {
			t.Fatalf("acquire the ordered tag: %v, %v", ok, err)
		}
	})
}
