package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leafid/leaf/sequence"
)

// keyOf is a key of the given section.
func keyOf(t *testing.T, section, sections int) string {
	t.Helper()
	for i := range 100000 {
		if k := fmt.Sprintf("k%d", i); sequence.SectionOf(k, sections) == section {
			return k
		}
	}
	t.Fatalf("no key of section %d", section)
	return ""
}

func routes(t *testing.T, q *sequence.Sequencer, space string) sequence.Routes {
	t.Helper()
	r, err := q.Routes(context.Background(), space)
	if err != nil {
		t.Fatalf("routes of %s: %v", space, err)
	}
	if r.Space != space || len(r.Owners) != r.Sections || len(r.Version) != 16 {
		t.Fatalf("routes %+v", r)
	}
	return r
}

// TestRoutes: two members' tables agree, name the member that serves each
// section, and change version when a third member joins and takes some.
func TestRoutes(t *testing.T) {
	const sections = 16
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: sections})
	byAddr := map[string]*sequence.Sequencer{}
	join := func(name string) *sequence.Sequencer {
		q := f.member(t, name)
		byAddr[name+":8080"] = q
		return q
	}
	a, b := join("a"), join("b")
	round(t, a, b, a, b)

	check := func(qs ...*sequence.Sequencer) sequence.Routes {
		t.Helper()
		f.clock.Add(time.Second) // past the table's reuse
		r := routes(t, qs[0], "inbox")
		for _, q := range qs[1:] {
			if o := routes(t, q, "inbox"); o.Version != r.Version || !slices.Equal(o.Members, r.Members) || !slices.Equal(o.Owners, r.Owners) {
				t.Fatalf("%s's table %+v, %s's %+v", qs[0].ID(), r, q.ID(), o)
			}
			if v := q.RoutesVersion("inbox"); v != r.Version {
				t.Fatalf("RoutesVersion %q, the table's %q", v, r.Version)
			}
		}
		if len(r.Members) != len(qs) || !slices.IsSorted(r.Members) {
			t.Fatalf("members %q", r.Members)
		}
		for i, o := range r.Owners {
			if o == sequence.NoOwner {
				t.Fatalf("section %d has no owner: %+v", i, r)
			}
			owner := byAddr[r.Members[o]]
			if _, err := owner.Next(context.Background(), "inbox", keyOf(t, i, sections)); err != nil {
				t.Fatalf("section %d: the owner named, %s: %v", i, r.Members[o], err)
			}
		}
		return r
	}
	before := check(a, b)

	c := join("c")
	// a, then b, hand over what c wins; c takes it; a and b read that.
	round(t, c, a, b, c, a, b)
	after := check(a, b, c)
	if after.Version == before.Version {
		t.Fatalf("version %s unchanged after a member joined", after.Version)
	}
	moved := 0
	for i := range sections {
		if before.Members[before.Owners[i]] != after.Members[after.Owners[i]] {
			moved++
		}
	}
	if moved == 0 || moved == sections {
		t.Fatalf("%d of %d sections moved when a third member joined", moved, sections)
	}
}

// TestRoutesNoOwner: an owner whose leases it cannot renew stops serving
// before they end and names no owner for its sections; the table is reused
// for routesMaxAge, then read again.
func TestRoutesNoOwner(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: 4})
	a := f.member(t, "a")
	round(t, a)
	r := routes(t, a, "inbox")
	if !slices.Equal(r.Members, []string{"a:8080"}) || !slices.Equal(r.Owners, []int{0, 0, 0, 0}) {
		t.Fatalf("routes %+v", r)
	}
	f.store.Fail(errors.New("store down"))
	f.clock.Add(lease - lease/5 - 50*time.Millisecond) // 50 ms before the local deadline
	if got := routes(t, a, "inbox"); got.Version != r.Version {
		t.Fatalf("routes before the deadline %+v", got)
	}
	f.clock.Add(60 * time.Millisecond) // past it, but the table is reused
	if got := routes(t, a, "inbox"); got.Version != r.Version {
		t.Fatalf("the table was read again within its reuse: %+v", got)
	}
	f.clock.Add(100 * time.Millisecond)
	got := routes(t, a, "inbox")
	if len(got.Members) != 0 || !slices.Equal(got.Owners, []int{-1, -1, -1, -1}) || got.Version == r.Version {
		t.Fatalf("routes after the deadline %+v", got)
	}
}

func TestRoutesUnknownSpace(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 10, Sections: 4})
	a := f.member(t, "a")
	if v := a.RoutesVersion("inbox"); v != "" {
		t.Fatalf("version %q of a space not read yet", v)
	}
	if _, err := a.Routes(context.Background(), "nosuch"); !errors.Is(err, sequence.ErrUnknownSpace) {
		t.Fatalf("err = %v", err)
	}
	// A space not known yet is read from the store; before a round, no
	// section has an owner.
	r := routes(t, a, "inbox")
	if !slices.Equal(r.Owners, []int{-1, -1, -1, -1}) {
		t.Fatalf("routes %+v", r)
	}
}
