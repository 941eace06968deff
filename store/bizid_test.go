package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
)

var daily = bizid.Settings{Format: "ORD-{date:20060102}-{seq:6}", Reset: bizid.Day, TimeZone: "Asia/Shanghai"}

func createSpecial(t testing.TB, s *store.Store, name string, step int64, set bizid.Settings) {
	t.Helper()
	if _, err := s.CreateSpecialTag(context.Background(), segment.Tag{Name: name, MaxID: 1, Step: step}, set); err != nil {
		t.Fatalf("CreateSpecialTag(%q): %v", name, err)
	}
}

// kindsOf says in a word what LookupTags finds each of names to be:
// "none" (no row, no period's), "period", "ordered", "special" or "plain".
func kindsOf(t testing.TB, s *store.Store, names ...string) map[string]string {
	t.Helper()
	rows, err := s.LookupTags(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		r, ok := rows[n]
		switch {
		case !ok:
			out[n] = "none"
		case r.Period != nil:
			out[n] = "period"
		case r.Settings.Ordered:
			out[n] = "ordered"
		case r.Kind == bizid.Special:
			out[n] = "special"
		default:
			out[n] = "plain"
		}
	}
	return out
}

// settingsOf are the settings LookupTags reads of name.
func settingsOf(t testing.TB, s *store.Store, name string) bizid.Settings {
	t.Helper()
	rows, err := s.LookupTags(context.Background(), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return rows[name].Settings
}

func TestSpecialTags(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.store(t)
		createSpecial(t, s, "orders", 10, daily)
		createTag(t, s, "plain", 1, 10)

		// What each name is, read in one statement, exactly the names asked.
		want := map[string]string{"orders": "special", "plain": "plain", "none": "none", "ORDERS": "none"}
		if got := kindsOf(t, s, "orders", "plain", "none", "ORDERS"); !maps.Equal(got, want) {
			t.Fatalf("LookupTags = %v, want %v", got, want)
		}
		if set := settingsOf(t, s, "orders"); set.Format != daily.Format || set.Reset != bizid.Day || set.TimeZone != "Asia/Shanghai" {
			t.Fatalf("LookupTags(orders) = %+v", set)
		}
		all, err := s.TagSettings(ctx)
		if err != nil || len(all) != 1 || all[0].Tag != "orders" {
			t.Fatalf("TagSettings = %+v, %v", all, err)
		}
		if _, err := s.CreateSpecialTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 10}, daily); !errors.Is(err, segment.ErrTagExists) {
			t.Fatalf("second create: %v", err)
		}
		bad := daily
		bad.Format = "ORD-{date:200601}-{seq}"
		if _, err := s.CreateSpecialTag(ctx, segment.Tag{Name: "bad", MaxID: 1, Step: 10}, bad); !errors.Is(err, bizid.ErrInvalidFormat) {
			t.Fatalf("daily reset showing months: %v", err)
		}
		// A plain tag takes a format with a letter; the zone of a formatted
		// tag changes; nothing else does.
		next := bizid.Settings{Tag: "plain", Format: "P-{seq}", Reset: bizid.Never}
		if err := s.SetTagSettings(ctx, bizid.Settings{}, false, next); err != nil {
			t.Fatal(err)
		}
		if got := kindsOf(t, s, "plain")["plain"]; got != "special" {
			t.Fatalf("plain after the format: %s", got)
		}
		if err := s.SetTagSettings(ctx, bizid.Settings{}, false, next); !errors.Is(err, bizid.ErrFixed) {
			t.Fatalf("settings given twice: %v", err)
		}
		moved := daily
		moved.Tag, moved.TimeZone = "orders", "America/New_York"
		if err := s.SetTagSettings(ctx, daily, true, moved); err != nil {
			t.Fatal(err)
		}
		if set := settingsOf(t, s, "orders"); set.TimeZone != "America/New_York" {
			t.Fatalf("zone = %q", set.TimeZone)
		}
	})
}

// TestPeriodRows: a period's row is created once with max_id 1 and never
// written over; a prune raises the mark, deletes the rows below it and
// nothing else, and the rows below it are never created again.
func TestPeriodRows(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.store(t)
		createSpecial(t, s, "orders", 10, daily)
		createTag(t, s, "orders@x", 1, 10) // not a period: a name that only looks like one
		createSpecial(t, s, "order", 10, daily)

		for range 2 {
			if err := s.EnsurePeriod(ctx, "orders", "20261122"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Allocate(ctx, "orders@20261122", 0)
		if err != nil || got.Start() != 1 || got.Step != 10 {
			t.Fatalf("first range of the period = %+v, %v", got, err)
		}
		if err := s.EnsurePeriod(ctx, "orders", "20261122"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Allocate(ctx, "orders@20261122", 0); got.Start() != 11 {
			t.Fatalf("range after a second ensure starts at %d: the row was written over", got.Start())
		}
		for _, k := range []string{"20261123", "20261124"} {
			if err := s.EnsurePeriod(ctx, "orders", k); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EnsurePeriod(ctx, "order", "20261122"); err != nil {
			t.Fatal(err)
		}

		n, err := s.PrunePeriods(ctx, "orders", "20261124")
		if err != nil || n != 2 {
			t.Fatalf("PrunePeriods = %d, %v; want 2", n, err)
		}
		for name, want := range map[string]bool{
			"orders@20261122": false, "orders@20261123": false, "orders@20261124": true,
			"orders@x": true, "orders": true, "order@20261122": true,
		} {
			_, err := s.Tag(ctx, name)
			if exists := err == nil; exists != want {
				t.Errorf("row %q exists = %v (%v), want %v", name, exists, err, want)
			}
		}
		if err := s.EnsurePeriod(ctx, "orders", "20261123"); !errors.Is(err, bizid.ErrPeriodClosed) {
			t.Fatalf("ensure of a pruned period: %v", err)
		}
		if _, err := s.Tag(ctx, "orders@20261123"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("a pruned period's row came back: %v", err)
		}
		// The mark never goes down.
		if _, err := s.PrunePeriods(ctx, "orders", "20261101"); err != nil {
			t.Fatal(err)
		}
		if set := settingsOf(t, s, "orders"); set.PrunedBefore != "20261124" {
			t.Fatalf("mark = %q", set.PrunedBefore)
		}
		// A tag that resets cannot be created over rows named like its
		// periods.
		createTag(t, s, "inv@2026", 1, 10)
		if _, err := s.CreateSpecialTag(ctx, segment.Tag{Name: "inv", MaxID: 1, Step: 10}, daily); !errors.Is(err, bizid.ErrInvalidFormat) {
			t.Fatalf("create over period-like rows: %v", err)
		}
	})
}

// shiftedClock is a clock the test moves, read with an offset.
type shiftedClock struct {
	base   *atomic.Int64 // Unix nanoseconds
	offset time.Duration
}

func (c shiftedClock) now() time.Time { return time.Unix(0, c.base.Load()).Add(c.offset) }

// TestTwoInstancesAcrossMidnight runs two instances (a store, an allocator
// and an issuer each) on one database, with clocks one second apart, while
// the time crosses midnight in Shanghai, and collects every text both
// issue, singly and in batches: none twice, and every text's date is the
// period it was numbered in.
func TestTwoInstancesAcrossMidnight(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		stores := b.open(t, 2)
		createSpecial(t, stores[0], "orders", 5, daily)
		sh, _ := time.LoadLocation("Asia/Shanghai")
		var base atomic.Int64
		base.Store(time.Date(2026, 11, 23, 23, 59, 57, 0, sh).UnixNano())

		issuers := make([]*bizid.Issuer, 2)
		for i, s := range stores {
			clock := shiftedClock{base: &base, offset: time.Duration(i) * time.Second}
			alloc := segment.New(s, segment.Options{RefreshInterval: -1, Now: clock.now})
			t.Cleanup(func() { alloc.Close() })
			is, err := bizid.New(bizid.Options{
				Store: s, IDs: alloc, Now: clock.now,
				IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) },
			})
			if err != nil {
				t.Fatal(err)
			}
			issuers[i] = is
		}

		set := settingsOf(t, stores[0], "orders")
		const workers = 4
		var (
			mu     sync.Mutex
			seen   = make(map[string]int)
			wg     sync.WaitGroup
			stop   atomic.Bool
			issued atomic.Int64
			active atomic.Int64 // workers still running
		)
		for w := range workers * len(issuers) {
			is := issuers[w%len(issuers)]
			active.Add(1)
			wg.Go(func() {
				defer active.Add(-1)
				tag := is.Compile(nil, set)
				var local []string
				for i := 0; !stop.Load() || i < 50; i++ {
					if i%5 == 0 {
						ids, err := is.NextN(ctx, tag, 7)
						if err != nil {
							t.Error(err)
							return
						}
						for _, id := range ids {
							local = append(local, id.Text)
						}
						issued.Add(int64(len(ids)))
						continue
					}
					id, err := is.Next(ctx, tag)
					if err != nil {
						t.Error(err)
						return
					}
					local = append(local, id.Text)
					issued.Add(1)
				}
				mu.Lock()
				for _, x := range local {
					seen[x]++
				}
				mu.Unlock()
			})
		}
		// Move the time across midnight in steps of 100 ms, each once the
		// workers issued some ids at the time before.
		for range 60 {
			for at := issued.Load(); issued.Load() < at+40 && active.Load() > 0; {
				runtime.Gosched()
			}
			base.Add(int64(100 * time.Millisecond))
		}
		stop.Store(true)
		wg.Wait()

		days := map[string]int{}
		for text, n := range seen {
			if n > 1 {
				t.Errorf("%s issued %d times", text, n)
			}
			var day string
			var seq int
			if _, err := fmt.Sscanf(text, "ORD-%8s-%d", &day, &seq); err != nil {
				t.Fatalf("text %q: %v", text, err)
			}
			days[day]++
		}
		if days["20261123"] == 0 || days["20261124"] == 0 {
			t.Fatalf("texts per day %v: want both sides of midnight", days)
		}
		t.Logf("%d texts, per day %v", len(seen), days)
	})
}
