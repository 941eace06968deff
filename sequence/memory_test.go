package sequence_test

import (
	"context"
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
)

var memoryKeys = flag.Int("keys", 1_000_000, "keys that TestMemoryPerKey puts in memory")

// TestMemoryPerKey holds a key's counter in memory in well under 100 bytes
// (a key of 13 bytes), so ten million keys fit in 1 GiB. The figures are
// logged:
//
//	go test -count=1 -v -run TestMemoryPerKey ./sequence/ -keys 10000000
func TestMemoryPerKey(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 1_000_000_000, Sections: 256}); err != nil {
		t.Fatal(err)
	}
	q, err := sequence.New(sequence.Options{Store: st, Addr: "a:1", Lease: time.Hour, Interval: -1, MaxKeys: int64(*memoryKeys)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(context.Background())
	if err := q.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys := *memoryKeys
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range keys {
		if _, err := q.Next(context.Background(), "inbox", "user-"+strconv.Itoa(100_000_000+i)); err != nil {
			t.Fatal(err)
		}
	}
	per := float64(heap()-before) / float64(keys)
	t.Logf("%d keys of 13 bytes: %.1f bytes of heap per key; peak RSS of the test process %s", keys, per, peakRSS())
	if per > 100 {
		t.Fatalf("%.1f bytes per key, want at most 100", per)
	}
	if got := q.Stats().KeysInMemory; got != int64(keys) {
		t.Fatalf("KeysInMemory = %d", got)
	}
}

// peakRSS is the process's VmHWM, where /proc has it.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
