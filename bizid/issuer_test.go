package bizid

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// memStore is a Store and IDs in memory: a counter per row.
type memStore struct {
	mu       sync.Mutex
	rows     map[string]int64 // the next number of each row
	settings map[string]Settings
	ensures  int
	owns     int // Own calls
}

var errUnknown = errors.New("unknown row")

func newMemStore(sets ...Settings) *memStore {
	m := &memStore{rows: map[string]int64{}, settings: map[string]Settings{}}
	for _, s := range sets {
		m.rows[s.Tag] = 1
		m.settings[s.Tag] = s
	}
	return m
}

// tagOf compiles the settings m keeps of name, as the service's tag
// registry does, or old again when they issue the same ids; nil for a name
// without settings.
func tagOf(is *Issuer, m *memStore, old *Tag, name string) *Tag {
	m.mu.Lock()
	s, ok := m.settings[name]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	return is.Compile(old, s)
}

func (m *memStore) TagSettings(context.Context) ([]Settings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Settings
	for _, s := range m.settings {
		out = append(out, s)
	}
	return out, nil
}

func (m *memStore) EnsurePeriod(_ context.Context, tag, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ensures++
	if key < m.settings[tag].PrunedBefore {
		return ErrPeriodClosed
	}
	if _, ok := m.rows[RowName(tag, key)]; !ok {
		m.rows[RowName(tag, key)] = 1
	}
	return nil
}

func (m *memStore) PrunePeriods(_ context.Context, tag, before string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.settings[tag]
	s.PrunedBefore = max(s.PrunedBefore, before)
	m.settings[tag] = s
	n := 0
	for name := range m.rows {
		if k, ok := strings.CutPrefix(name, tag+RowSep); ok && k < s.PrunedBefore {
			delete(m.rows, name)
			n++
		}
	}
	return n, nil
}

func (m *memStore) Next(ctx context.Context, row string) (int64, error) {
	ns, err := m.NextN(ctx, row, 1)
	if err != nil {
		return 0, err
	}
	return ns[0], nil
}

func (m *memStore) NextN(_ context.Context, row string, n int) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, ok := m.rows[row]
	if !ok {
		return nil, errUnknown
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = next + int64(i)
	}
	m.rows[row] = next + int64(n)
	return out, nil
}

// fakeClock is a clock the test sets.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *fakeClock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

// Own and NextRow make memStore the Owner of a single instance: it owns
// every tag, and takes a row's numbers from its counter, none past limit.
func (m *memStore) Own(context.Context, string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owns++
	return nil
}

func (m *memStore) NextRow(_ context.Context, _, row string, limit int64, n int) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, ok := m.rows[row]
	if !ok {
		return nil, errUnknown
	}
	if limit > 0 && next+int64(n)-1 > limit {
		return nil, &LeftError{Left: max(0, limit-next+1)}
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = next + int64(i)
	}
	m.rows[row] = next + int64(n)
	return out, nil
}

func newIssuer(t *testing.T, m *memStore, clock *fakeClock, keys ...string) *Issuer {
	t.Helper()
	var ks [][]byte
	for _, k := range keys {
		ks = append(ks, []byte(k))
	}
	is, err := New(Options{Store: m, IDs: m, Owner: m, Now: clock.Now, Keys: ks,
		IsUnknown: func(err error) bool { return errors.Is(err, errUnknown) }})
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func next(t *testing.T, is *Issuer, tag *Tag) string {
	t.Helper()
	id, err := is.Next(context.Background(), tag)
	if err != nil {
		t.Fatal(err)
	}
	return id.Text
}

// TestResets issues texts over a fake clock that crosses midnight, the
// end of a month, the end of a year and both changes of clocks in New
// York: each period numbers from 1, and the date is the period's.
func TestResets(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tz data:", err)
	}
	tests := []struct {
		name   string
		set    Settings
		steps  []time.Time
		want   []string
		ensure int // rows made sure of
	}{
		{
			name: "midnight",
			set:  Settings{Format: "ORD-{date:20060102}-{seq:6}", Reset: Day, TimeZone: "America/New_York"},
			steps: []time.Time{
				time.Date(2026, 11, 23, 23, 59, 59, 0, ny), time.Date(2026, 11, 23, 23, 59, 59, 999999999, ny),
				time.Date(2026, 11, 24, 0, 0, 0, 0, ny), time.Date(2026, 11, 24, 0, 0, 1, 0, ny),
			},
			want:   []string{"ORD-20261123-000001", "ORD-20261123-000002", "ORD-20261124-000001", "ORD-20261124-000002"},
			ensure: 2,
		},
		{
			name: "spring forward: 2:00 does not exist, the day has 23 hours",
			set:  Settings{Format: "D{date:2006-01-02}/{seq}", Reset: Day, TimeZone: "America/New_York"},
			steps: []time.Time{
				time.Date(2026, 3, 8, 1, 59, 0, 0, ny), time.Date(2026, 3, 8, 3, 0, 0, 0, ny),
				time.Date(2026, 3, 8, 23, 59, 59, 0, ny), time.Date(2026, 3, 9, 0, 0, 0, 0, ny),
			},
			want: []string{"D2026-03-08/1", "D2026-03-08/2", "D2026-03-08/3", "D2026-03-09/1"},
		},
		{
			name: "fall back: 1:30 happens twice, the day has 25 hours",
			set:  Settings{Format: "D{date:20060102 15:04 MST}/{seq}", Reset: Day, TimeZone: "America/New_York"},
			steps: []time.Time{
				time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), // 1:30 EDT
				time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC), // 1:30 EST
				time.Date(2026, 11, 2, 4, 59, 0, 0, time.UTC), // 23:59 EST
				time.Date(2026, 11, 2, 5, 0, 0, 0, time.UTC),  // midnight
			},
			want: []string{"D20261101 01:30 EDT/1", "D20261101 01:30 EST/2", "D20261101 23:59 EST/3", "D20261102 00:00 EST/1"},
		},
		{
			name: "month ends: 30, 31 and a leap February",
			set:  Settings{Format: "INV{date:200601}-{seq:4!}", Reset: Month, TimeZone: "America/New_York"},
			steps: []time.Time{
				time.Date(2028, 2, 29, 23, 59, 59, 0, ny), time.Date(2028, 3, 1, 0, 0, 0, 0, ny),
				time.Date(2028, 3, 31, 23, 59, 0, 0, ny), time.Date(2028, 4, 1, 0, 0, 0, 0, ny),
				time.Date(2028, 4, 30, 12, 0, 0, 0, ny), time.Date(2028, 5, 1, 0, 0, 0, 0, ny),
			},
			want: []string{"INV202802-0001", "INV202803-0001", "INV202803-0002", "INV202804-0001", "INV202804-0002", "INV202805-0001"},
		},
		{
			name:  "year, in UTC",
			set:   Settings{Format: "Y{date:2006}-{seq:3}", Reset: Year},
			steps: []time.Time{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
			want:  []string{"Y2026-001", "Y2027-001"},
		},
		{
			name:  "never: one row, the tag's own",
			set:   Settings{Format: "N-{date:20060102}-{seq}", Reset: Never},
			steps: []time.Time{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
			want:  []string{"N-20261231-1", "N-20270101-2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.set.Tag = "orders"
			if err := tt.set.Validate(); err != nil {
				t.Fatal(err)
			}
			m := newMemStore(tt.set)
			clock := &fakeClock{}
			is := newIssuer(t, m, clock)
			tag := tagOf(is, m, nil, "orders")
			for i, at := range tt.steps {
				clock.Set(at)
				if got := next(t, is, tag); got != tt.want[i] {
					t.Fatalf("at %v: %q, want %q", at, got, tt.want[i])
				}
			}
			if tt.ensure > 0 && m.ensures != tt.ensure {
				t.Fatalf("%d ensures, want %d: one per period", m.ensures, tt.ensure)
			}
		})
	}
}

func TestFixedWidthFull(t *testing.T) {
	set := Settings{Tag: "t", Format: "T{date:20060102}-{seq:2!}", Reset: Day}
	m := newMemStore(set)
	clock := &fakeClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	is := newIssuer(t, m, clock)
	tag := tagOf(is, m, nil, "t")
	if !tag.Owned() {
		t.Fatal("a capped format is not served by one owner")
	}
	// A batch larger than the period holds is refused, and takes nothing.
	if _, err := is.NextN(context.Background(), tag, 100); !errors.Is(err, ErrSequenceFull) {
		t.Fatalf("100 ids of {seq:2!}: %v", err)
	}
	if got := next(t, is, tag); got != "T20261123-01" {
		t.Fatalf("after a refused batch: %q, want the first of the period", got)
	}
	if _, err := is.NextN(context.Background(), tag, 98); err != nil {
		t.Fatal(err)
	}
	_, err := is.Next(context.Background(), tag)
	if !errors.Is(err, ErrSequenceFull) || !strings.Contains(err.Error(), "0 are left") {
		t.Fatalf("the 100th id of {seq:2!}: %v", err)
	}
	clock.Add(24 * time.Hour)
	if got := next(t, is, tag); got != "T20261124-01" {
		t.Fatalf("next day: %q", got)
	}
}

// TestPrunedPeriodIsClosed: once a period was pruned, an instance whose
// clock is still in it gets ErrPeriodClosed, never a number from a
// recreated row.
func TestPrunedPeriodIsClosed(t *testing.T) {
	set := Settings{Tag: "t", Format: "T{date:20060102}-{seq}", Reset: Day}
	m := newMemStore(set)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	late := &fakeClock{t: now.Add(-4 * 24 * time.Hour)} // four days behind
	ontime := &fakeClock{t: now}
	slow, fleet := newIssuer(t, m, late), newIssuer(t, m, ontime)
	ctx := context.Background()
	st := tagOf(slow, m, nil, "t")
	if got := next(t, slow, st); got != "T20261119-1" {
		t.Fatal(got)
	}
	n, raised, err := fleet.Prune(ctx) // grace 72h: everything before the 20th goes
	if err != nil || n != 1 || len(raised) != 1 || raised[0].PrunedBefore != "20261120" {
		t.Fatalf("Prune = %d, %v, %v", n, raised, err)
	}
	if _, err := slow.Next(ctx, st); !errors.Is(err, ErrPeriodClosed) {
		t.Fatalf("a pruned period: %v", err)
	}
	if _, ok := m.rows["t@20261119"]; ok {
		t.Fatal("the pruned row was created again")
	}
	// Its settings read again tell the slow instance the mark, and it
	// refuses without asking the store.
	if again := tagOf(slow, m, st, "t"); again != st {
		t.Fatal("settings read again, the same ids issued the same way: compiled anew")
	}
	before := m.ensures
	late.Add(-24 * time.Hour)
	if _, err := slow.Next(ctx, st); !errors.Is(err, ErrPeriodClosed) || m.ensures != before {
		t.Fatalf("after a refresh: %v, %d ensures", err, m.ensures-before)
	}
}

func TestOpaqueTag(t *testing.T) {
	const key, key2 = "the fleet's first key, rotated since", "the fleet's second key, for new tags"
	old := Settings{Tag: "users", OpaqueBits: Bits53, KeyID: KeyID([]byte(key))}
	m := newMemStore(old, Settings{Tag: "lost", OpaqueBits: Bits63, KeyID: "0123456789ab"})
	m.rows["plain"] = 1
	clock := &fakeClock{t: time.Now()}
	is := newIssuer(t, m, clock, key2, key)
	ctx := context.Background()
	if id, ok := is.CurrentKeyID(); !ok || id != TagKeyID(KeyID([]byte(key2))) {
		t.Fatalf("current key id %q", id)
	}
	tag := tagOf(is, m, nil, "users")
	seen := map[int64]bool{}
	for i := range 1000 {
		var ids []ID
		if i%2 == 0 {
			id, err := is.Next(ctx, tag)
			if err != nil {
				t.Fatal(err)
			}
			ids = []ID{id}
		} else {
			var err error
			if ids, err = is.NextN(ctx, tag, 3); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			if seen[id.N] || id.N < 1 || id.N >= 1<<53 {
				t.Fatalf("id %d twice or outside 53 bits", id.N)
			}
			seen[id.N] = true
			n, err := tag.Reveal(id.N)
			if err != nil || n < 1 || n > 2000 {
				t.Fatalf("Reveal(%d) = %d, %v", id.N, n, err)
			}
		}
	}
	m.rows["users"] = 1 << 53 // past the domain of 53 bits
	if _, err := is.Next(ctx, tag); !errors.Is(err, ErrExhausted) {
		t.Fatalf("past the domain: %v", err)
	}
	formatted := is.Compile(nil, Settings{Tag: "f", Format: "F{seq}", Reset: Never})
	if _, err := formatted.Reveal(5); !errors.Is(err, ErrNotOpaque) {
		t.Fatalf("reveal of a formatted tag: %v", err)
	}
	lost := tagOf(is, m, nil, "lost")
	if _, err := is.Next(ctx, lost); !errors.Is(err, ErrNoKey) || strings.Contains(err.Error(), key) {
		t.Fatalf("a tag whose key this instance lacks: %v", err)
	}
}

func TestCheckChange(t *testing.T) {
	f := Settings{Tag: "t", Format: "ORD-{date:20060102}-{seq}", Reset: Day, TimeZone: "Asia/Shanghai"}
	tests := []struct {
		name     string
		old      Settings
		had      bool
		next     Settings
		wantFail bool
	}{
		{"plain takes a format with a letter", Settings{}, false, f, false},
		{"plain takes an all-digit format", Settings{}, false, Settings{Format: "{date:20060102}{seq:4}", Reset: Day}, true},
		{"plain becomes opaque", Settings{}, false, Settings{OpaqueBits: 63}, true},
		{"zone changes", f, true, Settings{Format: f.Format, Reset: Day, TimeZone: "UTC"}, false},
		{"format changes", f, true, Settings{Format: "ORD-{date:20060102}-{seq:6}", Reset: Day}, true},
		{"reset changes", f, true, Settings{Format: f.Format, Reset: Month}, true},
		{"opaque changes", Settings{OpaqueBits: 63}, true, Settings{OpaqueBits: 53}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckChange(tt.old, tt.had, tt.next)
			if (err != nil) != tt.wantFail || err != nil && !errors.Is(err, ErrFixed) {
				t.Fatalf("CheckChange = %v", err)
			}
		})
	}
}

// TestSettingsWithoutFormatOrOpaque: settings that make a tag neither
// formatted nor opaque are refused (an API call that gave "format": ""
// stored them, and the tag then had nothing to issue its ids by), and a
// tag stored with them before is refused as not numeric, in a get as in
// a batch, rather than issued from a template it lacks.
func TestSettingsWithoutFormatOrOpaque(t *testing.T) {
	for _, set := range []Settings{{Tag: "empty"}, {Tag: "ordered", Ordered: true}, {Tag: "never", Reset: Never}} {
		if err := set.Validate(); !errors.Is(err, ErrInvalidFormat) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidFormat", set, err)
		}
	}
	m := newMemStore(Settings{Tag: "empty"}, Settings{Tag: "ordered", Ordered: true})
	is := newIssuer(t, m, &fakeClock{t: time.Now()})
	ctx := context.Background()
	for _, name := range []string{"empty", "ordered"} {
		tag := tagOf(is, m, nil, name)
		if _, err := is.Next(ctx, tag); !errors.Is(err, ErrNotNumeric) {
			t.Errorf("Next of %q = %v, want ErrNotNumeric", name, err)
		}
		if _, err := is.NextN(ctx, tag, 3); !errors.Is(err, ErrNotNumeric) {
			t.Errorf("NextN of %q = %v, want ErrNotNumeric", name, err)
		}
	}
}

// TestOpaquePerTag: new opaque tags made with one key each get a
// permutation of their own: their k-th ids differ, and none is another
// tag's; a tag made before per-tag permutations (its key id unmarked)
// keeps the permutation it shares with the tags of its key, so it never
// issues again an id it gave; a key id marked for a key this instance
// lacks is refused, never served with another permutation.
func TestOpaquePerTag(t *testing.T) {
	const key = "the fleet's opaque key, for tests"
	fp := KeyID([]byte(key))
	m := newMemStore(
		Settings{Tag: "users", OpaqueBits: Bits63, KeyID: TagKeyID(fp)},
		Settings{Tag: "orders", OpaqueBits: Bits63, KeyID: TagKeyID(fp)},
		Settings{Tag: "legacy", OpaqueBits: Bits63, KeyID: fp},
		Settings{Tag: "other", OpaqueBits: Bits63, KeyID: TagKeyID("0123456789ab")},
	)
	is := newIssuer(t, m, &fakeClock{t: time.Now()}, key)
	ctx := context.Background()
	first := func(name string) []int64 {
		tag := tagOf(is, m, nil, name)
		var out []int64
		for range 3 {
			id, err := is.Next(ctx, tag)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, id.N)
		}
		return out
	}
	users, orders, legacy := first("users"), first("orders"), first("legacy")
	for k := range users {
		if users[k] == orders[k] {
			t.Errorf("the %d-th ids of two new tags are both %d", k+1, users[k])
		}
	}
	shared, err := NewCipher([]byte(key), Bits63)
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range legacy {
		if n, err := shared.Decode(id); err != nil || n != int64(k+1) {
			t.Errorf("the tag made before: its %d-th id %d decodes to %d, %v under the shared permutation", k+1, id, n, err)
		}
	}
	if _, err := is.Next(ctx, tagOf(is, m, nil, "other")); !errors.Is(err, ErrNoKey) {
		t.Errorf("a tag marked for a key this instance lacks: %v, want ErrNoKey", err)
	}
	if fp2, own := SplitKeyID(TagKeyID(fp)); fp2 != fp || !own {
		t.Errorf("SplitKeyID(TagKeyID) = %s, %v", fp2, own)
	}
	if fp2, own := SplitKeyID(fp); fp2 != fp || own {
		t.Errorf("SplitKeyID of an unmarked id = %s, %v", fp2, own)
	}
}
