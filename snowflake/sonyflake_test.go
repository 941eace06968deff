package snowflake

// Sonyflake's ids, made by github.com/sony/sonyflake itself, read by this
// package with sonyflake's layout and epoch, and the other way round.

import (
	"context"
	"testing"
	"time"

	"github.com/sony/sonyflake"
)

// sonyflakeMachineID is a machine id with bits set at both ends of its 16.
const sonyflakeMachineID = 0xBEEF

// sonyflakeStarts are the epochs tried: sonyflake's default start time,
// and one of our own. Sonyflake counts whole units of 10 ms of the Unix
// clock, so an epoch that is a multiple of 10 ms makes the same units.
var sonyflakeStarts = []time.Time{
	time.UnixMilli(sonyflakeEpochMs).UTC(),
	time.Date(2024, 2, 29, 12, 34, 56, 780_000_000, time.UTC),
}

// newSonyflakeGenerator is a generator with sonyflake's layout, the epoch
// start and the fixed worker id sonyflakeMachineID.
func newSonyflakeGenerator(tb testing.TB, start time.Time) *Generator {
	tb.Helper()
	return newTestGenerator(tb, Settings{
		Layout:   sonyflakeLayout(),
		EpochMs:  start.UnixMilli(),
		WorkerID: sonyflakeMachineID,
	})
}

// TestDecodeSonyflakeIDs: an id made by sonyflake decodes to its time,
// sequence and machine id, and is the id this package composes of them.
func TestDecodeSonyflakeIDs(t *testing.T) {
	for _, start := range sonyflakeStarts {
		t.Run(start.Format(time.RFC3339Nano), func(t *testing.T) {
			sf, err := sonyflake.New(sonyflake.Settings{
				StartTime: start,
				MachineID: func() (uint16, error) { return sonyflakeMachineID, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			g := newSonyflakeGenerator(t, start)
			before := time.Now()
			// 300 ids: more than the 256 of one unit, so the sequence
			// wraps into the next unit at least once.
			for i := range 300 {
				u, err := sf.NextID()
				if err != nil {
					t.Fatal(err)
				}
				id := int64(u)
				d, err := g.Decode(id)
				if err != nil {
					t.Fatalf("Decode(%d): %v", id, err)
				}
				wantTime := start.Add(sonyflake.ElapsedTime(u))
				if d.WorkerID != int64(sonyflake.MachineID(u)) || d.WorkerID != sonyflakeMachineID ||
					d.Sequence != int64(sonyflake.SequenceNumber(u)) || !d.Time.Equal(wantTime) {
					t.Fatalf("id %d: Decode = %+v, want machine id %d, sequence %d, time %s",
						i, d, sonyflake.MachineID(u), sonyflake.SequenceNumber(u), wantTime)
				}
				if d.Time.Before(before.Add(-10*ms)) || d.Time.After(time.Now().Add(10*ms)) {
					t.Fatalf("id %d decodes to %s, issued between %s and now", i, d.Time, before)
				}
				if back := g.compose(int64(sonyflake.Decompose(u)["time"]), d.WorkerID, d.Sequence); back != id {
					t.Fatalf("id %d: its parts compose to %d", id, back)
				}
			}
		})
	}
}

// TestSonyflakeDecomposesOurIDs: sonyflake takes this package's ids apart
// into their time, sequence and worker id.
func TestSonyflakeDecomposesOurIDs(t *testing.T) {
	for _, start := range sonyflakeStarts {
		t.Run(start.Format(time.RFC3339Nano), func(t *testing.T) {
			g := newSonyflakeGenerator(t, start)
			ids, err := g.NextN(context.Background(), 300)
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				d, err := g.Decode(id)
				if err != nil {
					t.Fatal(err)
				}
				parts := sonyflake.Decompose(uint64(id))
				wantUnits := uint64(d.Time.Sub(start) / (10 * ms))
				if parts["msb"] != 0 || parts["time"] != wantUnits || parts["sequence"] != uint64(d.Sequence) ||
					parts["machine-id"] != sonyflakeMachineID || parts["id"] != uint64(id) {
					t.Fatalf("id %d (%d): sonyflake.Decompose = %v, want time %d, sequence %d, machine-id %d",
						i, id, parts, wantUnits, d.Sequence, sonyflakeMachineID)
				}
				if got := start.Add(sonyflake.ElapsedTime(uint64(id))); !got.Equal(d.Time) {
					t.Fatalf("id %d: sonyflake.ElapsedTime gives %s, Decode %s", id, got, d.Time)
				}
			}
		})
	}
}
