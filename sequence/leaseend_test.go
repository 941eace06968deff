package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/sequence"
)

// keyPerSection is a key of each section of a space of n sections.
func keyPerSection(n int) []string {
	keys := make([]string, n)
	found := 0
	for i := 0; found < n; i++ {
		k := fmt.Sprintf("key-%d", i)
		if sec := sequence.SectionOf(k, n); keys[sec] == "" {
			keys[sec] = k
			found++
		}
	}
	return keys
}

// nextVia asks q for key's next number and follows a NotOwnerError once,
// as the HTTP edge forwards; a forward to a member not in byName (one
// killed) fails, as a connection refused would.
func nextVia(q *sequence.Sequencer, byName map[string]*sequence.Sequencer, key string) (int64, error) {
	v, err := q.Next(context.Background(), "inbox", key)
	var no *sequence.NotOwnerError
	if errors.As(err, &no) {
		to := byName[strings.TrimSuffix(no.Addr, ":8080")]
		if to == nil {
			return 0, fmt.Errorf("forward to %s: connection refused", no.Addr)
		}
		return to.Next(context.Background(), "inbox", key)
	}
	return v, err
}

// TestTakeAtLeaseEnd: when an owner dies, each of its sections is served
// again the moment its lease runs out, through every other member, not at
// the next round after that. The members' rounds (a quarter of a lease
// apart) come an eighth of a lease out of step with the lease's end, so a
// take at the next round would come an eighth of a lease late. The clock
// moves 10 ms at a time; the background rounds would call AtLeaseEnd when
// the first plan is due, the test calls it at every step.
func TestTakeAtLeaseEnd(t *testing.T) {
	const (
		sections = 48
		step     = 10 * time.Millisecond
		killedAt = 50 * time.Millisecond // after b's last renewal
	)
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: sections})
	a, b, c := f.member(t, "a"), f.member(t, "b"), f.member(t, "c")
	byName := map[string]*sequence.Sequencer{"a": a, "b": b, "c": c}
	round(t, a, b, c, a, b, c)
	keys := keyPerSection(sections)
	last := make([]int64, sections)
	var victim []int
	for sec, k := range keys {
		v, err := nextVia(a, byName, k)
		if err != nil {
			t.Fatalf("section %d before the kill: %v", sec, err)
		}
		last[sec] = v
		if f.store.Holder("inbox", sec) == "b" {
			victim = append(victim, sec)
		}
	}
	if len(victim) == 0 || len(victim) == sections {
		t.Fatalf("b holds %d of %d sections", len(victim), sections)
	}

	start := f.clock.Now()
	round(t, b) // b's last renewal
	f.clock.Add(killedAt)
	b.Abandon()
	delete(byName, "b")
	kill := f.clock.Now()
	nextRound := start.Add(lease / 8)
	// served[entry][i] is when victim[i] first answered through entry.
	entries := []*sequence.Sequencer{a, c}
	served := [2][]time.Duration{make([]time.Duration, len(victim)), make([]time.Duration, len(victim))}
	for f.clock.Now().Before(start.Add(2 * lease)) {
		f.clock.Add(step)
		now := f.clock.Now()
		if !now.Before(nextRound) {
			round(t, a, c)
			nextRound = nextRound.Add(lease / 4)
		}
		a.AtLeaseEnd(context.Background())
		c.AtLeaseEnd(context.Background())
		for e, q := range entries {
			for i, sec := range victim {
				if served[e][i] != 0 {
					continue
				}
				v, err := nextVia(q, byName, keys[sec])
				if err != nil {
					continue
				}
				if v <= last[sec] {
					t.Fatalf("section %d: %d after %d", sec, v, last[sec])
				}
				last[sec] = v
				served[e][i] = now.Sub(kill)
			}
		}
		if now.Before(start.Add(lease)) && f.store.Holder("inbox", victim[0]) != "b" {
			t.Fatalf("b's section %d taken %v after b's last renewal, before its lease of %v ran out",
				victim[0], now.Sub(start), lease)
		}
	}
	want := lease - killedAt // the lease's end, from the kill
	for e, q := range entries {
		for i, sec := range victim {
			if got := served[e][i]; got != want {
				t.Errorf("section %d through %s: served again %v after the kill, want %v (the lease ran out %v after it)",
					sec, q.ID(), got, want, want)
			}
		}
	}
	if st := a.Stats().SectionsOwned + c.Stats().SectionsOwned; st != sections {
		t.Fatalf("a and c own %d of %d sections", st, sections)
	}
}

// TestLeaseEndRenewed: a plan made from a read of a lease that its holder
// renews afterwards takes nothing; the store refuses it, and the holder
// goes on serving.
func TestLeaseEndRenewed(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: 16})
	a, b := f.member(t, "a"), f.member(t, "b")
	byName := map[string]*sequence.Sequencer{"a": a, "b": b}
	round(t, a, b, a, b, a) // a's last round reads b's leases
	keys := keyPerSection(16)
	sec := -1
	for i := range keys {
		if f.store.Holder("inbox", i) == "b" {
			sec = i
			break
		}
	}
	if sec < 0 {
		t.Fatal("b holds no section")
	}
	first, err := nextVia(a, byName, keys[sec])
	if err != nil {
		t.Fatal(err)
	}
	at, ok := a.NextPlan()
	if !ok || !at.Equal(f.clock.Now().Add(lease)) {
		t.Fatalf("a's first plan at %v, %v; want the lease's end, %v", at, ok, f.clock.Now().Add(lease))
	}
	f.clock.Add(lease / 4)
	round(t, b) // renewed after a's read; a runs no round
	f.clock.Add(3 * lease / 4)
	a.AtLeaseEnd(context.Background())
	if h := f.store.Holder("inbox", sec); h != "b" {
		t.Fatalf("section %d held by %q after a's plan, want b", sec, h)
	}
	if got, err := nextVia(a, byName, keys[sec]); err != nil || got != first+1 {
		t.Fatalf("after a's plan: %d, %v; want %d from b", got, err, first+1)
	}
	round(t, a)
	if at, ok := a.NextPlan(); !ok || !at.Equal(f.clock.Now().Add(lease/4)) {
		t.Fatalf("a's plan after its round at %v, %v; want %v", at, ok, f.clock.Now().Add(lease/4))
	}
}

// TestLeaseEndStoreClockBehind: when this member's clock runs ahead of the
// store's, a plan comes due before the lease ran out by the store's clock;
// the store refuses the take, and the section is taken only once the
// lease ran out by the store's clock.
func TestLeaseEndStoreClockBehind(t *testing.T) {
	local := testkit.NewClock(time.Unix(1_700_000_000, 0), 0)
	db := testkit.NewClock(time.Unix(1_700_000_000, 0), 0)
	st := sequencetest.NewMemStore(db.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 10, Sections: 1}); err != nil {
		t.Fatal(err)
	}
	member := func(name string) *sequence.Sequencer {
		q, err := sequence.New(sequence.Options{Store: st, ID: name, Addr: name + ":8080", Lease: lease, Interval: -1, Now: local.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(context.Background()) })
		return q
	}
	a := member("a")
	round(t, a) // a alone: a takes the section
	b := member("b")
	round(t, b)
	if h := st.Holder("inbox", 0); h != "a" {
		t.Fatalf("the section is held by %q, want a", h)
	}
	a.Abandon()
	// The lease's end, by b's clock; the store's clock has moved 5 ms
	// less.
	local.Add(lease)
	db.Add(lease - 5*time.Millisecond)
	b.AtLeaseEnd(context.Background())
	if h := st.Holder("inbox", 0); h != "a" {
		t.Fatalf("the section is held by %q 5 ms before its lease ran out by the store's clock, want a", h)
	}
	if _, err := b.Next(context.Background(), "inbox", "k"); err == nil {
		t.Fatal("b served the section before its lease ran out by the store's clock")
	}
	local.Add(5 * time.Millisecond)
	db.Add(5 * time.Millisecond)
	round(t, b) // what the refused take asked for
	if _, err := b.Next(context.Background(), "inbox", "k"); err != nil {
		t.Fatalf("once the lease ran out: %v", err)
	}
}

// TestTakeAtLeaseEndLoop: the background rounds carry out the plans on
// time. Two members on real time with a lease of 1 s and rounds every
// half lease; b is killed, and every section is served again through a
// within the lease and a little of the kill, where a's next round after
// the lease ran out could come up to half a lease later.
func TestTakeAtLeaseEndLoop(t *testing.T) {
	const (
		sections = 8
		lease    = time.Second
		slack    = 150 * time.Millisecond
	)
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 10, Sections: sections}); err != nil {
		t.Fatal(err)
	}
	member := func(name string) *sequence.Sequencer {
		q, err := sequence.New(sequence.Options{Store: st, ID: name, Addr: name + ":8080", Lease: lease, Interval: lease / 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(context.Background()) })
		return q
	}
	a, b := member("a"), member("b")
	byName := map[string]*sequence.Sequencer{"a": a, "b": b}
	keys := keyPerSection(sections)
	testkit.WaitFor(t, 10*time.Second, "both members serving", func() bool {
		for _, k := range keys {
			if _, err := nextVia(a, byName, k); err != nil {
				return false
			}
		}
		return a.Stats().SectionsOwned > 0 && b.Stats().SectionsOwned > 0
	})
	time.Sleep(lease / 4) // b killed between its rounds
	b.Abandon()
	delete(byName, "b")
	kill := time.Now()
	left := map[string]bool{}
	for _, k := range keys {
		left[k] = true
	}
	for len(left) > 0 && time.Since(kill) < 3*lease {
		for k := range left {
			if _, err := nextVia(a, byName, k); err == nil {
				delete(left, k)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	took := time.Since(kill)
	t.Logf("every section served again %v after the kill (lease %v)", took.Round(time.Millisecond), lease)
	if len(left) > 0 || took > lease+slack {
		t.Fatalf("%d of %d sections served again %v after the kill, want all within %v", sections-len(left), sections, took, lease+slack)
	}
}
