package snowflake

// Ids of github.com/bwmarrin/snowflake, whose default layout and epoch are
// this package's defaults (41 bits of milliseconds from Twitter's epoch, 10
// of node, 12 of step): a node given a worker id leased from the fleet
// makes ids that this package reads with that worker id, and the other way
// round.

import (
	"context"
	"testing"
	"time"

	bwsnowflake "github.com/bwmarrin/snowflake"
)

func TestBwmarrinIDs(t *testing.T) {
	if bwsnowflake.Epoch != DefaultEpochMs || bwsnowflake.NodeBits != 10 || bwsnowflake.StepBits != 12 {
		t.Fatalf("bwmarrin/snowflake's defaults changed: epoch %d, %d node bits, %d step bits", bwsnowflake.Epoch, bwsnowflake.NodeBits, bwsnowflake.StepBits)
	}
	node, err := bwsnowflake.NewNode(517)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(context.Background(), Settings{WorkerID: 517})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	theirs := node.Generate()
	ours, err := g.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d, err := g.Decode(theirs.Int64())
	if err != nil || d.WorkerID != 517 || d.Sequence != theirs.Step() || d.TimestampMs() != theirs.Time() || d.TimestampMs() < before-1 {
		t.Errorf("bwmarrin's id %d read as %+v, %v; it says node %d, step %d, time %d", theirs, d, err, theirs.Node(), theirs.Step(), theirs.Time())
	}
	if back := bwsnowflake.ParseInt64(ours); back.Node() != 517 || back.Time() < before-1 {
		t.Errorf("our id %d read by bwmarrin: node %d, time %d", ours, back.Node(), back.Time())
	}
}
