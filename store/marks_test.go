package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/leafid/leaf/storeset"
)

// TestLowerMarks: a mark is set back only while it is within the run
// handed back, above the new value and not above its end (an earlier
// range's end of the run included); a mark raised past the end meanwhile
// stays, and a batch of more marks than one statement takes is set back
// whole.
func TestLowerMarks(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		marks := map[string]int64{"a": 100, "b": 200, "c": 300, "mid": 31, "low": 10}
		for i := range 600 {
			marks[fmt.Sprintf("many-%03d", i)] = 1000
		}
		if err := s.RecordMarks(ctx, "peer", marks); err != nil {
			t.Fatal(err)
		}
		backs := map[string]storeset.MarkBack{
			"a":    {From: 100, To: 60},
			"b":    {From: 150, To: 120}, // b's mark is 200 now: left alone
			"none": {From: 10, To: 5},    // no mark: none made
			"mid":  {From: 71, To: 15},   // the end of an earlier range of the run
			"low":  {From: 71, To: 15},   // below the run: left alone
		}
		for i := range 600 {
			backs[fmt.Sprintf("many-%03d", i)] = storeset.MarkBack{From: 1000, To: 900}
		}
		if err := s.LowerMarks(ctx, "peer", backs); err != nil {
			t.Fatal(err)
		}
		if err := s.LowerMarks(ctx, "other", map[string]storeset.MarkBack{"c": {From: 300, To: 1}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Marks(ctx, "peer", []string{"a", "b", "c", "none", "mid", "low", "many-000", "many-599"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"a": 60, "b": 200, "c": 300, "low": 10, "many-000": 900, "many-599": 900, "mid": 15}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("marks after LowerMarks = %v, want %v", got, want)
		}
	})
}

// TestRecordManyMarks: a second's marks of many tags are written whole,
// more than one statement of SQLite can hold.
func TestRecordManyMarks(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		marks := map[string]int64{}
		for i := range 12000 {
			marks[fmt.Sprintf("tag-%05d", i)] = int64(i + 1)
		}
		if err := s.RecordMarks(ctx, "peer", marks); err != nil {
			t.Fatal(err)
		}
		got, err := s.Marks(ctx, "peer", []string{"tag-00000", "tag-11999"})
		if err != nil || got["tag-00000"] != 1 || got["tag-11999"] != 12000 {
			t.Fatalf("marks = %v, %v", got, err)
		}
	})
}
