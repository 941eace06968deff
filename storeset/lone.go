package storeset

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leafid/leaf/segment"
)

// One store served alone. An instance given one store (--mysql-dsn or
// --sqlite-path) serves it through Stores as it serves several: a set of
// one that records nothing. The store takes every range itself, with no
// class, no marks and no record of a set; the rules of a set (a name free
// in every store, no settings for a plain tag) hold by themselves. Each
// method of Stores that an instance calls hands the call to the lone
// store first thing, so that the store serves exactly as it does without
// Stores.

// Lone is the name (Named.Name) of the one store served alone: no store
// of a set is named so (ValidateName).
const Lone = ""

// ErrSetMember: the one store given belongs to a set of stores, whose
// other stores hand out ids of the same space; served alone, it would hand
// out ids they do.
var ErrSetMember = errors.New("the store belongs to a set of stores")

// openLone serves n alone, after checking that it belongs to no set. A
// database whose record cannot be read (not migrated yet, or not
// answering) belongs to none yet.
func openLone(ctx context.Context, n Named) (*Stores, error) {
	if n.Err != nil {
		return nil, n.Err
	}
	if r, err := n.Store.Record(ctx); err == nil && r.State != Unjoined {
		name := "?"
		if set, err := Decode(r.Set); err == nil {
			for _, m := range set.Members {
				if m.Store == r.StoreID {
					name = m.Name
				}
			}
		}
		return nil, fmt.Errorf("%w: this database is store %q of a set of stores (version %d, %s): give it with --store, "+
			"with every other store of the set (leaf store show)", ErrSetMember, name, r.Version, r.State)
	}
	return &Stores{lone: n.Store}, nil
}

// Several reports whether the stores are a set, as against one store
// served alone.
func (s *Stores) Several() bool { return s.lone == nil }

// AllocatorOptions are opts as an allocator over the stores needs them.
// Over a set, ranges come from whichever store answers, each in its own
// part of the number space: asking for one above the last received keeps
// a tag's ids in order in each instance; a load may try every store, each
// call bounded by the call timeout, and read the marks of the others.
func (s *Stores) AllocatorOptions(opts segment.Options) segment.Options {
	if s.lone != nil {
		return opts
	}
	opts.AboveReceived = true
	opts.LoadTimeout = time.Duration(2*len(s.members))*s.opts.CallTimeout + time.Second
	return opts
}
