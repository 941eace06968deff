package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/sequence"
)

const lease = 10 * time.Second

type fixture struct {
	clock *testkit.Clock
	store *sequencetest.MemStore
}

func newFixture(t *testing.T, spaces ...sequence.Space) *fixture {
	t.Helper()
	f := &fixture{clock: testkit.NewClock(time.Unix(1_700_000_000, 0), 0)}
	f.store = sequencetest.NewMemStore(f.clock.Now)
	for _, s := range spaces {
		if _, err := f.store.CreateSpace(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// member starts a Sequencer whose rounds the test runs.
func (f *fixture) member(t *testing.T, name string) *sequence.Sequencer {
	t.Helper()
	q, err := sequence.New(sequence.Options{
		Store: f.store, ID: name, Addr: name + ":8080", Lease: lease, Interval: -1, Now: f.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	return q
}

func round(t *testing.T, qs ...*sequence.Sequencer) {
	t.Helper()
	for _, q := range qs {
		if err := q.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func next(t *testing.T, q *sequence.Sequencer, space, key string) int64 {
	t.Helper()
	v, err := q.Next(context.Background(), space, key)
	if err != nil {
		t.Fatalf("next %s/%s: %v", space, key, err)
	}
	return v
}

func TestNextPerKey(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 100, Sections: 4})
	q := f.member(t, "a")
	round(t, q)
	for i := int64(1); i <= 250; i++ {
		if got := next(t, q, "inbox", "alice"); got != i {
			t.Fatalf("alice's number %d is %d", i, got)
		}
	}
	// Another key of any section starts at the section's max_seq when the
	// lease was taken: 0 for a new space.
	if got := next(t, q, "inbox", "bob"); got != 1 {
		t.Fatalf("bob's first number is %d, want 1", got)
	}
	cur, err := q.Current(context.Background(), "inbox", "alice")
	if err != nil || cur != 250 {
		t.Fatalf("current of alice = %d, %v; want 250", cur, err)
	}
	// 250 numbers of alice's section at step 100: three raises there,
	// maybe one more ahead of use (ahead.go), and one for bob's unless he
	// shares it.
	if r := f.store.Raises(); r < 3 || r > 5 {
		t.Fatalf("%d raises of max_seq, want 3 to 5", r)
	}
	first, err := q.NextN(context.Background(), "inbox", "alice", 1000)
	if err != nil || first != 251 {
		t.Fatalf("batch of 1000 starts at %d, %v; want 251", first, err)
	}
	if got := next(t, q, "inbox", "alice"); got != 1251 {
		t.Fatalf("after the batch: %d, want 1251", got)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 100, Sections: 4})
	q := f.member(t, "a")
	round(t, q)
	for _, tc := range []struct {
		name, space, key string
		want             error
	}{
		{"empty key", "inbox", "", sequence.ErrInvalidKey},
		{"long key", "inbox", strings.Repeat("k", sequence.MaxKeyLen+1), sequence.ErrInvalidKey},
		{"not utf-8", "inbox", "a\xffb", sequence.ErrInvalidKey},
		{"unknown space", "outbox", "k", sequence.ErrUnknownSpace},
		{"bad space", "", "k", sequence.ErrInvalidSpace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := q.Next(context.Background(), tc.space, tc.key); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := q.Next(context.Background(), "inbox", strings.Repeat("é", sequence.MaxKeyLen/2)); err != nil {
		t.Fatalf("a key of %d bytes: %v", sequence.MaxKeyLen, err)
	}
}

func TestSpaceValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    sequence.Space
		want error
	}{
		{"ok", sequence.Space{Name: "inbox", Step: 1, Sections: 1}, nil},
		{"no name", sequence.Space{Step: 1, Sections: 1}, sequence.ErrInvalidSpace},
		{"dot", sequence.Space{Name: "..", Step: 1, Sections: 1}, sequence.ErrInvalidSpace},
		{"control", sequence.Space{Name: "a\nb", Step: 1, Sections: 1}, sequence.ErrInvalidSpace},
		{"step 0", sequence.Space{Name: "a", Sections: 1}, sequence.ErrInvalidStep},
		{"no sections", sequence.Space{Name: "a", Step: 1}, sequence.ErrInvalidSections},
		{"too many sections", sequence.Space{Name: "a", Step: 1, Sections: sequence.MaxSections + 1}, sequence.ErrInvalidSections},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.Validate(); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestParallelNext takes numbers of a few keys from many goroutines at
// once: per key no number is given twice, and each caller sees its
// numbers of a key strictly increase.
func TestParallelNext(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 7, Sections: 3})
	q := f.member(t, "a")
	round(t, q)
	const workers, per = 8, 2000
	keys := []string{"a", "b", "c", "d", "e"}
	got := make([]map[string][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		got[w] = make(map[string][]int64)
		wg.Go(func() {
			for i := range per {
				k := keys[(i+w)%len(keys)]
				n := 1 + i%3
				first, err := q.NextN(context.Background(), "inbox", k, n)
				if err != nil {
					t.Error(err)
					return
				}
				for j := range n {
					got[w][k] = append(got[w][k], first+int64(j))
				}
			}
		})
	}
	wg.Wait()
	checkSequences(t, got)
}

// checkSequences fails when a key got a number twice, or when one
// caller's numbers of a key did not strictly increase.
func checkSequences(t *testing.T, got []map[string][]int64) {
	t.Helper()
	seen := make(map[string]map[int64]bool)
	total := 0
	for _, perKey := range got {
		for k, ns := range perKey {
			if seen[k] == nil {
				seen[k] = make(map[int64]bool)
			}
			for i, n := range ns {
				if seen[k][n] {
					t.Fatalf("key %s got %d twice", k, n)
				}
				seen[k][n] = true
				if i > 0 && n <= ns[i-1] {
					t.Fatalf("key %s: %d after %d", k, n, ns[i-1])
				}
				total++
			}
		}
	}
	if total == 0 {
		t.Fatal("no numbers")
	}
}

// TestStopsBeforeLeaseEnds: an owner whose renewals fail stops serving
// while its lease still runs by the store's clock.
func TestStopsBeforeLeaseEnds(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 100, Sections: 1})
	q := f.member(t, "a")
	round(t, q)
	next(t, q, "inbox", "k")
	f.store.Fail(errors.New("store down"))
	f.clock.Add(lease - lease/5 - time.Millisecond)
	next(t, q, "inbox", "k") // still within the deadline, from memory
	if err := q.Round(context.Background()); err == nil {
		t.Fatal("a round with the store down succeeded")
	}
	f.clock.Add(time.Millisecond)
	if _, err := q.Next(context.Background(), "inbox", "k"); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("past the deadline: err = %v, want ErrUnavailable", err)
	}
	f.store.Fail(nil)
	rows, _ := f.store.Sections(context.Background())
	if !rows[0].Live {
		t.Fatal("the lease ran out before the owner stopped serving")
	}
	// Back: the next round renews, and the owner goes on where it was.
	round(t, q)
	if got := next(t, q, "inbox", "k"); got != 3 {
		t.Fatalf("after the outage: %d, want 3", got)
	}
}

// TestMoves: sections spread over the members, go to a member that joins
// and come back when it dies, and every key's numbers go on increasing.
func TestMoves(t *testing.T) {
	const sections = 32
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: sections})
	a := f.member(t, "a")
	round(t, a)
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
	}
	last := make(map[string]int64)
	take := func(qs ...*sequence.Sequencer) {
		t.Helper()
		for _, k := range keys {
			var (
				v   int64
				err error
			)
			for _, q := range qs {
				if v, err = q.Next(context.Background(), "inbox", k); err == nil {
					break
				}
				var no *sequence.NotOwnerError
				if !errors.As(err, &no) {
					t.Fatalf("next %s: %v", k, err)
				}
			}
			if err != nil {
				t.Fatalf("no member serves %s: %v", k, err)
			}
			if v <= last[k] {
				t.Fatalf("key %s: %d after %d", k, v, last[k])
			}
			last[k] = v
		}
	}
	take(a)
	if st := a.Stats(); st.SectionsOwned != sections || st.KeysInMemory != int64(len(keys)) {
		t.Fatalf("stats %+v", st)
	}

	b := f.member(t, "b")
	round(t, b, a) // b joins; a hands over what b wins
	round(t, b)    // b takes it
	sa, sb := a.Stats().SectionsOwned, b.Stats().SectionsOwned
	if sa+sb != sections || sa == 0 || sb == 0 {
		t.Fatalf("a owns %d, b owns %d of %d", sa, sb, sections)
	}
	take(a, b)

	// b dies: its sections are served again once its lease ran out.
	b.Abandon()
	f.clock.Add(lease)
	round(t, a)
	if got := a.Stats().SectionsOwned; got != sections {
		t.Fatalf("a owns %d after b died, want %d", got, sections)
	}
	take(a)
}

// TestNotOwner: a key of a section another member serves names it.
func TestNotOwner(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: 1})
	a, b := f.member(t, "a"), f.member(t, "b")
	round(t, a, b, a, b)
	owner, other := a, b
	if a.Stats().SectionsOwned == 0 {
		owner, other = b, a
	}
	_, err := other.Next(context.Background(), "inbox", "k")
	var no *sequence.NotOwnerError
	if !errors.As(err, &no) || no.Addr != owner.ID()+":8080" {
		t.Fatalf("err = %v, want NotOwnerError at %s:8080", err, owner.ID())
	}
	next(t, owner, "inbox", "k")
}

func TestRendezvousSpreads(t *testing.T) {
	members := []sequence.Member{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	count := map[string]int{}
	for i := range 300 {
		count[sequence.Rendezvous(members, "inbox", i).ID]++
	}
	for _, m := range members {
		if count[m.ID] < 60 {
			t.Fatalf("member %s wins %d of 300 sections: %v", m.ID, count[m.ID], count)
		}
	}
	// Removing a member moves only its sections.
	for i := range 300 {
		w := sequence.Rendezvous(members, "inbox", i).ID
		if w != "c" && sequence.Rendezvous(members[:2], "inbox", i).ID != w {
			t.Fatalf("section %d moved from %s when c left", i, w)
		}
	}
}

func TestClose(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: 2})
	q, err := sequence.New(sequence.Options{Store: f.store, ID: "a", Addr: "a:1", Lease: lease, Interval: time.Millisecond, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 0, "sections taken", func() bool { return q.Stats().SectionsOwned == 2 })
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Next(context.Background(), "inbox", "k"); !errors.Is(err, sequence.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	for i := range 2 {
		if h := f.store.Holder("inbox", i); h != "" {
			t.Fatalf("section %d still held by %q", i, h)
		}
	}
}

// TestFailedReleaseIsRetried: a section handed over whose release failed
// stays held in the store; the next round releases it rather than renew
// it for ever, and the winner takes it.
func TestFailedReleaseIsRetried(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: 8})
	a, b := f.member(t, "a"), f.member(t, "b")
	round(t, a, b)
	failing := &failRelease{MemStore: f.store}
	a2, err := sequence.New(sequence.Options{Store: failing, ID: "a", Addr: "a:8080", Lease: lease, Interval: -1, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close(context.Background())
	// a2 is a's state from now on (same member id): it owns nothing yet,
	// but the store says a holds every section.
	failing.fail = true
	round(t, a2) // hands over b's sections; the releases fail
	failing.fail = false
	round(t, a2, b)
	if got := a2.Stats().SectionsOwned + b.Stats().SectionsOwned; got != 8 {
		t.Fatalf("%d of 8 sections owned after the retry", got)
	}
	if b.Stats().SectionsOwned == 0 {
		t.Fatal("b took nothing")
	}
}

// failRelease is a store whose releases fail while fail is set.
type failRelease struct {
	*sequencetest.MemStore
	fail bool
}

func (s *failRelease) ReleaseSection(ctx context.Context, space string, section int, holder string) error {
	if s.fail {
		return errors.New("release failed")
	}
	return s.MemStore.ReleaseSection(ctx, space, section, holder)
}

// TestMaxKeys: past Options.MaxKeys a section that takes a new key forgets
// its keys' counters; every key's numbers go on increasing (with gaps),
// none repeats, and the keys held stay near the bound.
func TestMaxKeys(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 1000, Sections: 4})
	q, err := sequence.New(sequence.Options{
		Store: f.store, ID: "a", Addr: "a:8080", Lease: lease, Interval: -1, Now: f.clock.Now, MaxKeys: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	round(t, q)
	last := map[string]int64{}
	most := int64(0)
	for i := range 2000 {
		key := fmt.Sprintf("user-%d", i%37)
		got := next(t, q, "inbox", key)
		if got <= last[key] {
			t.Fatalf("%s: %d after %d", key, got, last[key])
		}
		last[key] = got
		cur, err := q.Current(context.Background(), "inbox", key)
		if err != nil || cur < got {
			t.Fatalf("current of %s = %d, %v after %d", key, cur, err, got)
		}
		most = max(most, q.Stats().KeysInMemory)
	}
	st := q.Stats()
	if most > 11 || st.KeysForgotten == 0 {
		t.Fatalf("at most %d keys held, %d forgotten; want at most 11, some forgotten", most, st.KeysForgotten)
	}
}
