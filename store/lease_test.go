package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

const ttl = time.Minute

func acquire(t testing.TB, s *store.Store, holder string, maxWorkers int64) snowflake.Lease {
	t.Helper()
	l, err := s.Acquire(context.Background(), holder, maxWorkers, ttl)
	if err != nil {
		t.Fatalf("Acquire(%q, %d): %v", holder, maxWorkers, err)
	}
	return l
}

func TestAcquireConcurrent(t *testing.T) {
	tests := []struct {
		name       string
		holders    int
		maxWorkers int64
		wantIDs    int // holders that get an id; the rest get ErrNoWorkerID
	}{
		{"32 holders plenty of ids", 32, 1024, 32},
		{"32 holders for 32 ids", 32, 32, 32},
		{"12 holders for 4 ids", 12, 4, 4},
	}
	each(t, func(t *testing.T, b backend) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				stores := b.open(t, 4)
				var (
					mu    sync.Mutex
					ids   = map[int64]string{}
					noID  int
					wg    sync.WaitGroup
					start = make(chan struct{})
				)
				for i := range tc.holders {
					s := stores[i%len(stores)]
					holder := "holder-" + string(rune('A'+i))
					wg.Go(func() {
						<-start
						l, err := s.Acquire(context.Background(), holder, tc.maxWorkers, ttl)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case errors.Is(err, snowflake.ErrNoWorkerID):
							noID++
						case err != nil:
							t.Errorf("Acquire(%q): %v", holder, err)
						case ids[l.WorkerID] != "":
							t.Errorf("worker id %d given to %q and %q", l.WorkerID, ids[l.WorkerID], holder)
						case l.WorkerID < 0 || l.WorkerID >= tc.maxWorkers:
							t.Errorf("worker id %d outside 0..%d", l.WorkerID, tc.maxWorkers-1)
						default:
							ids[l.WorkerID] = holder
						}
					})
				}
				close(start)
				wg.Wait()
				if len(ids) != tc.wantIDs || noID != tc.holders-tc.wantIDs {
					t.Fatalf("%d distinct ids and %d ErrNoWorkerID, want %d and %d", len(ids), noID, tc.wantIDs, tc.holders-tc.wantIDs)
				}
			})
		}
	})
}

func TestLeases(t *testing.T) {
	ctx := context.Background()
	each(t, func(t *testing.T, b backend) {
		t.Run("fresh lease", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h1", 1024)
			if l.WorkerID != 0 || l.Holder != "h1" || l.LastTimestamp != 0 {
				t.Fatalf("lease %+v", l)
			}
			// Expires is by the database clock; on this machine that is ours.
			if d := time.Until(l.Expires); d < ttl-time.Minute || d > ttl+time.Minute {
				t.Fatalf("expires in %v, want about %v", d, ttl)
			}
			if l2 := acquire(t, s, "h2", 1024); l2.WorkerID != 1 {
				t.Fatalf("second holder got %d, want 1", l2.WorkerID)
			}
		})

		t.Run("the widest pool a layout may have", func(t *testing.T) {
			s := b.store(t)
			for want := range int64(3) {
				if l := acquire(t, s, fmt.Sprintf("h%d", want), 1<<snowflake.MaxWorkerBits); l.WorkerID != want {
					t.Fatalf("lease %+v, want worker id %d", l, want)
				}
			}
		})

		t.Run("the widest pool past 1023 and to its last id", func(t *testing.T) {
			s := b.store(t)
			const pool = 1 << snowflake.MaxWorkerBits
			storetest.HoldLeases(t, s, 0, 1024)
			if l := acquire(t, s, "h1024", pool); l.WorkerID != 1024 {
				t.Fatalf("lease %+v, want worker id 1024", l)
			}
			storetest.HoldLeases(t, s, 1025, pool-1)
			l := acquire(t, s, "hlast", pool)
			if l.WorkerID != pool-1 {
				t.Fatalf("lease %+v, want worker id %d", l, pool-1)
			}
			if _, err := s.Renew(ctx, l, 1234, ttl); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Acquire(ctx, "one more", pool, ttl); !errors.Is(err, snowflake.ErrNoWorkerID) {
				t.Fatalf("Acquire with all %d ids held = %v, want ErrNoWorkerID", pool, err)
			}
			if err := s.Release(ctx, l, 2345); err != nil {
				t.Fatal(err)
			}
			if again := acquire(t, s, "hlast", pool); again.WorkerID != pool-1 || again.LastTimestamp != 2345 {
				t.Fatalf("lease after the release %+v, want worker id %d with last timestamp 2345", again, pool-1)
			}
		})

		t.Run("same holder gets its id back once released or expired, never while live", func(t *testing.T) {
			s := b.store(t)
			acquire(t, s, "other", 8)
			l := acquire(t, s, "h1", 8)
			if _, err := s.Renew(ctx, l, 1234, ttl); err != nil {
				t.Fatal(err)
			}
			// A second process under the same name gets another id, and
			// cannot renew or release the first one's.
			twin := acquire(t, s, "h1", 8)
			if twin.WorkerID == l.WorkerID || twin.Instance == l.Instance {
				t.Fatalf("second acquisition as h1 got %+v while %+v is live", twin, l)
			}
			posing := l
			posing.Instance = twin.Instance
			if _, err := s.Renew(ctx, posing, 0, ttl); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Renew of another acquisition's lease = %v, want ErrLeaseLost", err)
			}
			if err := s.Release(ctx, posing, 0); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Release of another acquisition's lease = %v, want ErrLeaseLost", err)
			}
			if _, err := s.Renew(ctx, l, 0, ttl); err != nil {
				t.Fatalf("the first acquisition lost its lease: %v", err)
			}
			// Released: the holder's own id comes back first.
			if err := s.Release(ctx, l, 1234); err != nil {
				t.Fatal(err)
			}
			again := acquire(t, s, "h1", 8)
			if again.WorkerID != l.WorkerID || again.LastTimestamp != 1234 || again.Instance == l.Instance {
				t.Fatalf("reacquired %+v, want id %d with last 1234 under a new instance", again, l.WorkerID)
			}
			// Expired without a release, likewise.
			storetest.ExpireLease(t, s, again.WorkerID)
			again = acquire(t, s, "h1", 8)
			if again.WorkerID != l.WorkerID || again.LastTimestamp != 1234 || !again.Expires.After(time.Now()) {
				t.Fatalf("reacquired after expiry %+v, want id %d, live, last 1234", again, l.WorkerID)
			}
		})

		t.Run("expired id is reclaimed with its last timestamp", func(t *testing.T) {
			s := b.store(t)
			old := acquire(t, s, "old", 1)
			if _, err := s.Renew(ctx, old, 1_700_000_000_000, ttl); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Acquire(ctx, "new", 1, ttl); !errors.Is(err, snowflake.ErrNoWorkerID) {
				t.Fatalf("Acquire while held: %v, want ErrNoWorkerID", err)
			}
			storetest.ExpireLease(t, s, old.WorkerID)
			l := acquire(t, s, "new", 1)
			if l.WorkerID != old.WorkerID || l.LastTimestamp != 1_700_000_000_000 || l.Holder != "new" {
				t.Fatalf("reclaimed %+v", l)
			}
			if _, err := s.Renew(ctx, old, 1_700_000_000_001, ttl); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Renew by the old holder: %v, want ErrLeaseLost", err)
			}
			if err := s.Release(ctx, old, 1_700_000_000_002); !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Release by the old holder: %v, want ErrLeaseLost", err)
			}
			// The old holder's calls changed nothing.
			l2, err := s.Renew(ctx, l, 0, ttl)
			if err != nil || l2.LastTimestamp != 1_700_000_000_000 {
				t.Fatalf("Renew by the new holder = %+v, %v", l2, err)
			}
		})

		t.Run("expired ids before never used ones", func(t *testing.T) {
			s := b.store(t)
			a := acquire(t, s, "a", 8)
			acquire(t, s, "b", 8)
			storetest.ExpireLease(t, s, a.WorkerID)
			if l := acquire(t, s, "c", 8); l.WorkerID != a.WorkerID {
				t.Fatalf("got id %d, want the expired %d", l.WorkerID, a.WorkerID)
			}
		})

		t.Run("renew records the larger timestamp", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 4)
			for _, tc := range []struct {
				last, want int64
			}{{500, 500}, {300, 500}, {501, 501}, {0, 501}} {
				got, err := s.Renew(ctx, l, tc.last, ttl)
				if err != nil {
					t.Fatal(err)
				}
				if got.LastTimestamp != tc.want || got.WorkerID != l.WorkerID || got.Holder != "h" {
					t.Fatalf("Renew(%d) = %+v, want last %d", tc.last, got, tc.want)
				}
				if got.Expires.Before(l.Expires) {
					t.Fatalf("Renew moved the expiry back from %v to %v", l.Expires, got.Expires)
				}
			}
		})

		t.Run("renew finds a lease gone back in time", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 4)
			l, err := s.Renew(ctx, l, 500, ttl)
			if err != nil {
				t.Fatal(err)
			}
			storetest.RewindLease(t, s, l.WorkerID, 100) // a copy from before the renewal
			_, err = s.Renew(ctx, l, 600, ttl)
			if !errors.Is(err, snowflake.ErrLeaseLost) || !errors.Is(err, snowflake.ErrLeaseRegressed) {
				t.Fatalf("Renew on a row behind the holder's last renewal = %v, want ErrLeaseLost and ErrLeaseRegressed", err)
			}
			got := storetest.Leases(t, s)[0]
			if got.LastTimestamp != 100 || !got.Expires.Equal(l.Expires) {
				t.Fatalf("the refused renewal changed the row: %+v", got)
			}
		})

		t.Run("a row held by another is a loss, or a regression when it predates the holder's renewal", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 1)
			l, err := s.Renew(ctx, l, 500, ttl)
			if err != nil {
				t.Fatal(err)
			}
			// A copy from before this holder took the id: another holder,
			// expiring before the expiry this holder was granted.
			storetest.SetLease(t, s, snowflake.Lease{WorkerID: l.WorkerID, Holder: "earlier", Instance: "x",
				LastTimestamp: 400, Expires: l.Expires.Add(-10 * time.Second)})
			if _, err := s.Renew(ctx, l, 600, ttl); !errors.Is(err, snowflake.ErrLeaseRegressed) {
				t.Fatalf("Renew on a row from before the holder's renewal = %v, want ErrLeaseRegressed", err)
			}
			// A lawful takeover: after the lease expired, with a later expiry.
			storetest.SetLease(t, s, snowflake.Lease{WorkerID: l.WorkerID, Holder: "h", Instance: l.Instance,
				LastTimestamp: 500, Expires: l.Expires})
			storetest.ExpireLease(t, s, l.WorkerID)
			if other := acquire(t, s, "other", 1); other.WorkerID != l.WorkerID {
				t.Fatalf("the other holder got worker id %d, want %d", other.WorkerID, l.WorkerID)
			}
			_, err = s.Renew(ctx, l, 600, ttl)
			if !errors.Is(err, snowflake.ErrLeaseLost) || errors.Is(err, snowflake.ErrLeaseRegressed) {
				t.Fatalf("Renew after a lawful takeover = %v, want ErrLeaseLost alone", err)
			}
		})

		t.Run("renew after expiry when nobody took it", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h", 4)
			storetest.ExpireLease(t, s, l.WorkerID)
			got, err := s.Renew(ctx, l, 10, ttl)
			if err != nil || !got.Expires.After(time.Now()) {
				t.Fatalf("Renew = %+v, %v", got, err)
			}
		})

		t.Run("renew with a lease never acquired", func(t *testing.T) {
			s := b.store(t)
			_, err := s.Renew(ctx, snowflake.Lease{WorkerID: 3, Holder: "ghost"}, 1, ttl)
			if !errors.Is(err, snowflake.ErrLeaseLost) {
				t.Fatalf("Renew = %v, want ErrLeaseLost", err)
			}
		})

		t.Run("release frees at once and records the last timestamp used", func(t *testing.T) {
			s := b.store(t)
			l := acquire(t, s, "h1", 1)
			if _, err := s.Acquire(ctx, "h2", 1, ttl); !errors.Is(err, snowflake.ErrNoWorkerID) {
				t.Fatalf("Acquire while held: %v, want ErrNoWorkerID", err)
			}
			if err := s.Release(ctx, l, 2000); err != nil {
				t.Fatal(err)
			}
			l2 := acquire(t, s, "h2", 1)
			if l2.WorkerID != l.WorkerID || l2.LastTimestamp != 2000 {
				t.Fatalf("after release got %+v, want id %d with last 2000", l2, l.WorkerID)
			}
			// A renewal records a bound ahead; the release, the exact
			// last timestamp used, which may be lower.
			if _, err := s.Renew(ctx, l2, 5000, ttl); err != nil {
				t.Fatal(err)
			}
			if err := s.Release(ctx, l2, 3000); err != nil {
				t.Fatal(err)
			}
			if l3 := acquire(t, s, "h3", 1); l3.LastTimestamp != 3000 {
				t.Fatalf("after a release at 3000 got %+v", l3)
			}
		})

		t.Run("exhaustion", func(t *testing.T) {
			s := b.store(t)
			for i := range 4 {
				if l := acquire(t, s, "h"+string(rune('0'+i)), 4); l.WorkerID != int64(i) {
					t.Fatalf("holder %d got id %d", i, l.WorkerID)
				}
			}
			_, err := s.Acquire(ctx, "h4", 4, ttl)
			if !errors.Is(err, snowflake.ErrNoWorkerID) || !strings.Contains(err.Error(), "4") {
				t.Fatalf("Acquire of a fifth id: %v, want ErrNoWorkerID naming 4", err)
			}
			// A larger range has room.
			if l := acquire(t, s, "h4", 5); l.WorkerID != 4 {
				t.Fatalf("with 5 ids got %d", l.WorkerID)
			}
		})

		t.Run("invalid arguments", func(t *testing.T) {
			s := b.store(t)
			for _, tc := range []struct {
				name       string
				holder     string
				maxWorkers int64
				ttl        time.Duration
			}{
				{"empty holder", "", 4, ttl},
				{"holder too long", strings.Repeat("h", store.MaxHolderLen+1), 4, ttl},
				{"no workers", "h", 0, ttl},
				{"too many workers", "h", 1<<snowflake.MaxWorkerBits + 1, ttl},
				{"zero ttl", "h", 4, 0},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if _, err := s.Acquire(ctx, tc.holder, tc.maxWorkers, tc.ttl); err == nil {
						t.Fatal("no error")
					}
				})
			}
		})
	})
}
