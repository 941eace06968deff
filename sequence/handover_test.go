package sequence_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
)

// releaseFails is a MemStore whose ReleaseSection fails while fail is set,
// as it does when the store stops answering during a handover.
type releaseFails struct {
	*sequencetest.MemStore
	fail atomic.Bool
}

func (s *releaseFails) ReleaseSection(ctx context.Context, space string, section int, holder string) error {
	if s.fail.Load() {
		return errors.New("store not answering")
	}
	return s.MemStore.ReleaseSection(ctx, space, section, holder)
}

// TestHandOverRetried: a member that hands a section over and fails to
// clear its lease clears it at a later round. Before, its renewals kept
// extending the lease of the section it no longer served, the member that
// won the section could never take it, and every request for the
// section's keys answered 503 for as long as the first member lived.
func TestHandOverRetried(t *testing.T) {
	const sections = 16
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: sections})
	st := &releaseFails{MemStore: f.store}
	member := func(name string) *sequence.Sequencer {
		q, err := sequence.New(sequence.Options{Store: st, ID: name, Addr: name + ":8080", Lease: lease, Interval: -1, Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(context.Background()) })
		return q
	}
	a := member("a")
	round(t, a)
	b := member("b")
	st.fail.Store(true)
	round(t, b, a) // b joins; a hands over what b wins, and cannot clear the leases
	st.fail.Store(false)
	for range 3 {
		f.clock.Add(lease / 4)
		round(t, a, b)
	}
	sa, sb := a.Stats().SectionsOwned, b.Stats().SectionsOwned
	if sb == 0 || sa+sb != sections {
		t.Fatalf("a owns %d, b owns %d of %d sections after the failed handover", sa, sb, sections)
	}
	for i := range 100 {
		key := "user-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		var err error
		for _, q := range []*sequence.Sequencer{a, b} {
			if _, err = q.Next(context.Background(), "inbox", key); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("no member serves %s: %v", key, err)
		}
	}
}
