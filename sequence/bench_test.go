package sequence_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
)

func benchSequencer(b *testing.B) *sequence.Sequencer {
	b.Helper()
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 1_000_000, Sections: 64}); err != nil {
		b.Fatal(err)
	}
	q, err := sequence.New(sequence.Options{Store: st, Addr: "a:1", Lease: time.Hour, Interval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = q.Close(context.Background()) })
	if err := q.Round(context.Background()); err != nil {
		b.Fatal(err)
	}
	return q
}

// BenchmarkNext takes numbers of keys held in memory, from every core.
func BenchmarkNext(b *testing.B) {
	q := benchSequencer(b)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i)
		if _, err := q.Next(context.Background(), "inbox", keys[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := q.Next(context.Background(), "inbox", keys[i&1023]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}
