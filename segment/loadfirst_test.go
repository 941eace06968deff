package segment_test

import (
	"context"
	"slices"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
)

// TestLoadFirst: tags learned of together have their first loads taken in
// one call of a BatchAllocator; NextLoaded serves a tag only once it has a
// buffer, and never loads one; a tag loaded already is not loaded again,
// and a name without a row is left to its requests.
func TestLoadFirst(t *testing.T) {
	ctx := context.Background()
	st := segmenttest.NewShared(rowsNamed("t", 50, 1000)...)
	a := newAllocator(t, st.Batched(), newClock())
	if _, loaded, err := a.NextLoaded(ctx, "t0"); loaded || err != nil {
		t.Fatalf("NextLoaded before any load = %v, %v; want not loaded", loaded, err)
	}
	if a.Loaded("t0") || len(st.BatchSizes()) != 0 {
		t.Fatal("NextLoaded loaded the tag")
	}
	mustNext(t, a, "t0")
	names := []string{"nope"}
	for _, r := range rowsNamed("t", 50, 1000) {
		names = append(names, r.Name)
	}
	a.LoadFirst(ctx, names)
	if got := st.BatchSizes(); !slices.Equal(got, []int{1, 50}) {
		t.Fatalf("batches of %v tags, want t0's and one of the 49 others and nope", got)
	}
	seen := map[int64]bool{}
	for _, r := range rowsNamed("t", 50, 1000) {
		id, loaded, err := a.NextLoaded(ctx, r.Name)
		if !loaded || err != nil || seen[id] {
			t.Fatalf("NextLoaded(%s) = %d, %v, %v; want a new id of a loaded tag", r.Name, id, loaded, err)
		}
		seen[id] = true
	}
	if a.Loaded("nope") {
		t.Fatal("a name without a row has a buffer")
	}
	if got := st.AllocateCalls(); got != 0 {
		t.Fatalf("%d calls of Allocate beside the batches", got)
	}
}
