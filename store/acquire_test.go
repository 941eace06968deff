package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store/storetest"
)

// TestAcquireSections: one call takes every section whose lease is free or
// the member's already, answers each one's max_seq, leaves a live lease of
// another alone, matches names exactly, and takes more sections than one
// statement holds; ReleaseSections frees them all at once.
func TestAcquireSections(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		stores := b.open(t, 2)
		s1, s2 := stores[0], stores[1]
		ctx := context.Background()
		createSpace(t, s1, sequence.Space{Name: "inbox", Step: 100, Sections: 1100})
		a, c := sequence.Member{ID: "a", Addr: "a:1"}, sequence.Member{ID: "c", Addr: "c:1"}
		if _, ok, err := s1.AcquireSection(ctx, "inbox", 1, a, time.Minute); err != nil || !ok {
			t.Fatalf("acquire = %v, %v", ok, err)
		}
		if v, err := s1.RaiseMax(ctx, "inbox", 1, "a", 100); err != nil || v != 100 {
			t.Fatalf("raise = %d, %v", v, err)
		}
		if _, ok, err := s1.AcquireSection(ctx, "inbox", 2, c, time.Minute); err != nil || !ok {
			t.Fatalf("acquire = %v, %v", ok, err)
		}
		var ids []sequence.SectionID
		for i := range 1100 {
			ids = append(ids, sequence.SectionID{Space: "inbox", Section: i})
		}
		ids = append(ids, sequence.SectionID{Space: "INBOX", Section: 0})
		got, err := s2.AcquireSections(ctx, ids, a, time.Minute)
		if err != nil || len(got) != len(ids) {
			t.Fatalf("acquire %d sections = %d answers, %v", len(ids), len(got), err)
		}
		for i, g := range got {
			want := sequence.Acquired{OK: true}
			switch {
			case i == 1:
				want.MaxSeq = 100 // a's already, raised
			case i == 2:
				want.OK = false // c's live lease
			case i == len(ids)-1:
				want.OK = false // no such space: INBOX is not inbox
			}
			if g != want {
				t.Fatalf("section %+v: %+v, want %+v", ids[i], g, want)
			}
		}
		rows, err := s1.Sections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, r := range rows {
			if r.Holder == "a" && r.Live {
				held++
			}
		}
		if held != 1099 {
			t.Fatalf("a holds %d sections, want 1099 (all but c's)", held)
		}
		// One statement frees every lease of a, and no other.
		if err := s2.ReleaseSections(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		rows, err = s1.Sections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Holder == "a" || r.Live != (r.Section == 2) {
				t.Fatalf("after a's release: %+v", r)
			}
		}
		// Once a's lease ran out, c takes them all.
		storetest.ExpireMember(t, s1, "a")
		got, err = s2.AcquireSections(ctx, ids[:3], c, time.Minute)
		if err != nil || got[0] != (sequence.Acquired{OK: true}) || got[1] != (sequence.Acquired{MaxSeq: 100, OK: true}) || !got[2].OK {
			t.Fatalf("takeover = %+v, %v", got, err)
		}
	})
}
