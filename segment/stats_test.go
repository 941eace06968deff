package segment_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

// eachTag returns EachTag's figures by tag, and its totals.
func eachTag(a *segment.Allocator) (map[string]segment.TagStats, segment.Totals) {
	out := map[string]segment.TagStats{}
	t := a.EachTag(func(st segment.TagStats) { out[st.Tag] = st })
	return out, t
}

// statsOf is what EachTag should say of a buffer that Snapshot describes.
func statsOf(b segment.BufferState) segment.TagStats {
	st := segment.TagStats{Tag: b.Tag, Issued: b.Issued, Loads: b.Loads, LoadFailures: b.LoadFailures,
		Waits: b.Waits, WaitedLoads: b.WaitedLoads, Regressions: b.Regressions, Step: b.Step, Failing: b.LastError != ""}
	for _, s := range b.Segments {
		if s != nil {
			st.Remaining += s.Remaining
		}
	}
	return st
}

// TestEachTagAgreesWithSnapshot: EachTag reads each tag's figures as
// Snapshot shows them, a failing load and a regression included, and sums
// them.
func TestEachTagAgreesWithSnapshot(t *testing.T) {
	st := segmenttest.New(
		segment.Tag{Name: "a", MaxID: 1, Step: 10},
		segment.Tag{Name: "b", MaxID: 1, Step: 10},
		segment.Tag{Name: "c", MaxID: 1, Step: 10},
	)
	var seen regressions
	a := newFencedAllocator(t, st, 1000, &seen)
	settled := func(tag string) func() bool {
		return func() bool { return !state(t, a, tag).Loading }
	}

	take(t, a, "a", 1, 25) // three ranges of a
	testkit.WaitFor(t, 0, "a's prefetch", settled("a"))
	mustNext(t, a, "b")
	testkit.WaitFor(t, 0, "b's prefetch", settled("b"))
	high := state(t, a, "b").HighMaxID
	rewind(st, "b", 1) // b's next load finds its row behind
	for range 25 {
		mustNext(t, a, "b")
	}
	testkit.WaitFor(t, 0, "b's prefetch", settled("b"))
	if got := state(t, a, "b"); got.Regressions != 1 || got.HighMaxID <= high {
		t.Fatalf("b = %+v, want one regression", got)
	}
	mustNext(t, a, "c")
	testkit.WaitFor(t, 0, "c's prefetch", settled("c"))
	st.SetFail(errDown)
	for range 9 { // c's first range, then a load that fails
		mustNext(t, a, "c")
	}
	if _, err := a.Next(context.Background(), "c"); err == nil {
		t.Fatal("c issued an id with the store down")
	}
	if got := state(t, a, "c"); got.LastError == "" {
		t.Fatalf("c = %+v, want its last load failed", got)
	}
	st.SetFail(nil)

	got, totals := eachTag(a)
	var want segment.Totals
	for _, b := range a.Snapshot() {
		w := statsOf(b)
		if got[b.Tag] != w {
			t.Errorf("EachTag's %s = %+v, want %+v", b.Tag, got[b.Tag], w)
		}
		want.Tags++
		if w.Failing {
			want.Failing++
		}
		want.Issued += w.Issued
		want.Loads += w.Loads
		want.LoadFailures += w.LoadFailures
		want.Waits += w.Waits
		want.Regressions += w.Regressions
	}
	if len(got) != 3 || totals != want || totals.Failing != 1 || totals.Regressions != 1 {
		t.Errorf("EachTag saw %d tags, totals %+v; want 3 and %+v", len(got), totals, want)
	}

	if s, ok := a.State("a"); !ok || s.Tag != "a" || s.Issued != 25 {
		t.Errorf("State(a) = %+v, %v", s, ok)
	}
	if _, ok := a.State("nosuchtag"); ok {
		t.Error("State of a tag without a buffer is found")
	}
}

// TestTotalsKeepDroppedTags: a tag dropped from the store takes its
// figures out of EachTag but not its counts out of the totals, which never
// go down; a tag that comes back counts again from nothing.
func TestTotalsKeepDroppedTags(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "a", MaxID: 1, Step: 10}, segment.Tag{Name: "b", MaxID: 1, Step: 10})
	a := newAllocator(t, st, newClock())
	ctx := context.Background()
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	take(t, a, "a", 1, 5)
	take(t, a, "b", 1, 7)
	testkit.WaitFor(t, 0, "the prefetches", func() bool { return !state(t, a, "a").Loading && !state(t, a, "b").Loading })
	_, before := eachTag(a)
	if before.Tags != 2 || before.Issued != 12 || before.Loads != 4 {
		t.Fatalf("totals = %+v, want 2 tags, 12 issued, 4 loads", before)
	}

	row, err := st.Tag(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	st.Delete("b")
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	got, after := eachTag(a)
	if _, ok := got["b"]; ok || after.Tags != 1 || after.Issued != before.Issued || after.Loads != before.Loads {
		t.Fatalf("after b was dropped: tags %v, totals %+v; want b gone and the counts of %+v", got, after, before)
	}

	st.Put(row)
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	mustNext(t, a, "b")
	got, again := eachTag(a)
	if got["b"].Issued != 1 || again.Issued != before.Issued+1 || again.Tags != 2 {
		t.Fatalf("b back: %+v, totals %+v; want 1 issued and the totals one up", got["b"], again)
	}
}

// The cost of reading every tag, at 100,000 tags:
//
//	go test -run '^$' -bench 'Snapshot|EachTag' -benchmem ./segment/
func BenchmarkSnapshot(b *testing.B) {
	a := manyTags(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if n := len(a.Snapshot()); n != 100_000 {
			b.Fatalf("%d tags", n)
		}
	}
}

func BenchmarkEachTag(b *testing.B) {
	a := manyTags(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		var issued uint64
		if t := a.EachTag(func(st segment.TagStats) { issued += st.Issued }); t.Tags != 100_000 || issued != t.Issued {
			b.Fatalf("totals %+v, %d issued", t, issued)
		}
	}
}

// manyTags returns an allocator with n tags loaded, one id taken of each.
func manyTags(tb testing.TB, n int) *segment.Allocator {
	tb.Helper()
	rows := make([]segment.Tag, n)
	for i := range rows {
		rows[i] = segment.Tag{Name: fmt.Sprintf("service-%d:table-%d", i%97, i), MaxID: 1, Step: 1000}
	}
	a := newAllocator(tb, segmenttest.New(rows...), newClock())
	ctx := context.Background()
	if err := a.Refresh(ctx); err != nil {
		tb.Fatal(err)
	}
	for _, r := range rows {
		if _, err := a.Next(ctx, r.Name); err != nil {
			tb.Fatal(err)
		}
	}
	return a
}
