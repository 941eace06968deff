package storeset

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// records reads the record of every store; errs[i] is why store i did not
// answer.
func records(ctx context.Context, named []Named) (recs []Record, errs []error) {
	recs, errs = make([]Record, len(named)), make([]error, len(named))
	var wg sync.WaitGroup
	for i, n := range named {
		wg.Go(func() { recs[i], errs[i] = n.Store.Record(ctx) })
	}
	wg.Wait()
	return recs, errs
}

func newFleet() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// Init makes the stores one set, version 1, with classes in the order
// given. Every store must answer and belong to no set (or to a set that an
// earlier Init of the same stores left half made, which it finishes). The
// set's floor is above every id any of them has issued, so rows that were
// in use need no renumbering: what they issued lies below it. A set of one
// keeps its rows' numbering (floor 0), as a single store has it.
func Init(ctx context.Context, named []Named) (Set, error) {
	if err := distinctNames(named); err != nil {
		return Set{}, err
	}
	recs, errs := records(ctx, named)
	if err := errors.Join(errs...); err != nil {
		return Set{}, fmt.Errorf("every store must answer to make a set: %w", err)
	}
	if err := distinctStores(named, recs); err != nil {
		return Set{}, err
	}
	var resumed *Set
	for i, r := range recs {
		if r.State == Unjoined {
			continue
		}
		set, err := Decode(r.Set)
		if err != nil || set.Version != 1 || !sameMembers(set, named, recs) {
			return Set{}, fmt.Errorf("%w: store %q already belongs to a set (version %d, state %q)", ErrMismatch, named[i].Name, r.Version, r.State)
		}
		resumed = &set
	}
	set := Set{Fleet: newFleet(), Version: 1, Block: DefaultBlock, WorkerSlots: max(DefaultWorkerSlots, int64(len(named)))}
	if resumed != nil {
		set = *resumed
	} else {
		for i, n := range named {
			set.Members = append(set.Members, Member{Name: n.Name, Store: recs[i].StoreID, Class: int64(i), Slot: int64(i)})
		}
		if len(named) > 1 {
			high, err := highest(ctx, named, nil)
			if err != nil {
				return Set{}, err
			}
			set.Floor = high
		}
	}
	if err := set.Validate(); err != nil {
		return Set{}, err
	}
	to := Record{Version: 1, State: Active, Set: set.Encode()}
	for i, n := range named {
		if recs[i].State == Active {
			continue
		}
		if err := setRecord(ctx, n, recs[i], to); err != nil {
			return Set{}, err
		}
	}
	return set, nil
}

// Change replaces the set that the stores record with one of the members
// names, in that order: a store is added by naming it (it must belong to no
// set), retired by leaving it out. named gives every store of the old set
// and every store added. While the change runs the old members hand out
// nothing (their buffers carry the instances); it then gives every member
// the new version, whose floor is above every id issued under the old one,
// and marks a retired store that answers as retired.
//
// Every member of the old set must answer, except those being retired
// when force is true: a store retired while it does not answer keeps its
// old record and must not be given to any instance again (see
// docs/many-stores.md, "Adding and retiring a store while serving").
// A change that stopped half way is finished by running it again.
func Change(ctx context.Context, named []Named, names []string, force bool) (Set, error) {
	if err := distinctNames(named); err != nil {
		return Set{}, err
	}
	byName := map[string]int{}
	for i, n := range named {
		byName[n.Name] = i
	}
	recs, errs := records(ctx, named)
	if err := distinctStores(named, recs); err != nil {
		return Set{}, err
	}
	var old Set
	for i, r := range recs {
		if errs[i] != nil || r.Set == nil || r.State == Unjoined {
			continue
		}
		set, err := Decode(r.Set)
		if err != nil {
			return Set{}, fmt.Errorf("store %q: %w", named[i].Name, err)
		}
		if r.State == Retired || set.Version <= old.Version {
			continue
		}
		if old.Version > 0 && set.Fleet != old.Fleet {
			return Set{}, fmt.Errorf("%w: stores of two fleets (%s and %s)", ErrMismatch, old.Fleet, set.Fleet)
		}
		old = set
	}
	if old.Version == 0 {
		return Set{}, fmt.Errorf("%w: no store answered with a set: make one with `leaf store init`", ErrMismatch)
	}
	// A change left half way has given some members the next version:
	// finish that one rather than start another.
	next, resuming := pendingChange(recs, errs, old)
	for _, m := range old.Members {
		i, ok := byName[m.Name]
		if !ok {
			return Set{}, fmt.Errorf("%w: store %q of the set (version %d) is not given", ErrMismatch, m.Name, old.Version)
		}
		if errs[i] == nil && recs[i].StoreID != m.Store {
			return Set{}, fmt.Errorf("%w: %q is database %s, but the set's %q is database %s", ErrMismatch, m.Name, recs[i].StoreID, m.Name, m.Store)
		}
		retiring := !slices.Contains(names, m.Name)
		if errs[i] != nil && !(retiring && force) {
			return Set{}, fmt.Errorf("store %q of the set does not answer; a change needs every member (a store being retired may be left out with --force): %w", m.Name, errs[i])
		}
	}
	for _, name := range names {
		i, ok := byName[name]
		if !ok {
			return Set{}, fmt.Errorf("store %q is not given", name)
		}
		if _, member := old.Member(name); !member {
			if errs[i] != nil {
				return Set{}, fmt.Errorf("store %q to add does not answer: %w", name, errs[i])
			}
			if recs[i].State != Unjoined && !(resuming && recs[i].Version == next.Version) {
				return Set{}, fmt.Errorf("%w: store %q to add already belongs to a set (version %d)", ErrMismatch, name, recs[i].Version)
			}
		}
	}

	// Freeze the old members that answer.
	changing := Record{Version: old.Version, State: Changing, Set: old.Encode()}
	for _, m := range old.Members {
		i := byName[m.Name]
		if errs[i] != nil || recs[i].Version != old.Version || recs[i].State == Changing {
			continue
		}
		if err := setRecord(ctx, named[i], recs[i], changing); err != nil {
			return Set{}, err
		}
		recs[i] = Record{StoreID: recs[i].StoreID, Version: changing.Version, State: changing.State, Set: changing.Set}
	}

	if !resuming {
		high, err := highest(ctx, named, errs)
		if err != nil {
			return Set{}, err
		}
		jump := int64(DefaultFailoverJump)
		next = Set{Fleet: old.Fleet, Version: old.Version + 1, Block: old.Block, WorkerSlots: old.WorkerSlots,
			Retired: slices.Clone(old.Retired)}
		next.Floor = math.MaxInt64
		if high <= math.MaxInt64-jump {
			next.Floor = high + jump
		}
		for _, m := range old.Members { // a store that stays keeps its worker slot
			if slices.Contains(names, m.Name) {
				next.Members = append(next.Members, m)
			} else {
				next.Retired = append(next.Retired, m.Slot)
			}
		}
		for _, name := range names {
			if _, ok := old.Member(name); ok {
				continue
			}
			slot, ok := next.freeSlot()
			if !ok {
				return Set{}, fmt.Errorf("no worker slot left for store %q: the set's %d are used or retired", name, next.WorkerSlots)
			}
			i := byName[name]
			next.Members = append(next.Members, Member{Name: name, Store: recs[i].StoreID, Slot: slot})
		}
		slices.SortStableFunc(next.Members, func(a, b Member) int {
			return slices.Index(names, a.Name) - slices.Index(names, b.Name)
		})
		for k := range next.Members {
			next.Members[k].Class = int64(k)
		}
		if err := next.Validate(); err != nil {
			return Set{}, err
		}
	}

	active := Record{Version: next.Version, State: Active, Set: next.Encode()}
	retired := Record{Version: next.Version, State: Retired, Set: next.Encode()}
	for i, n := range named {
		if errs[i] != nil || recs[i].Version == next.Version {
			continue
		}
		to := active
		if !slices.Contains(names, n.Name) {
			to = retired
		}
		if err := setRecord(ctx, n, recs[i], to); err != nil {
			return Set{}, err
		}
	}
	return next, nil
}

// pendingChange finds a set newer than old that a change left on some
// members.
func pendingChange(recs []Record, errs []error, old Set) (Set, bool) {
	for i, r := range recs {
		if errs[i] != nil || r.Version != old.Version+1 || r.Set == nil {
			continue
		}
		if set, err := Decode(r.Set); err == nil && set.Fleet == old.Fleet {
			return set, true
		}
	}
	return Set{}, false
}

// highest is the highest max_id any answering store has, or has recorded of
// another store: above every id issued so far, but for ranges taken in the
// last moments from a store that does not answer, which the failover jump
// covers.
func highest(ctx context.Context, named []Named, skip []error) (int64, error) {
	var high int64
	for i, n := range named {
		if skip != nil && skip[i] != nil {
			continue
		}
		h, err := n.Store.Highest(ctx)
		if err != nil {
			return 0, fmt.Errorf("store %q: %w", n.Name, err)
		}
		high = max(high, h)
		r, err := n.Store.Record(ctx)
		if err != nil {
			return 0, fmt.Errorf("store %q: %w", n.Name, err)
		}
		for _, o := range named {
			if o.Name == n.Name {
				continue
			}
			if set, err := Decode(r.Set); err == nil {
				if m, ok := set.Member(o.Name); ok {
					hm, err := n.Store.HighestMark(ctx, m.Store)
					if err != nil {
						return 0, fmt.Errorf("store %q: %w", n.Name, err)
					}
					high = max(high, hm)
				}
			}
		}
	}
	return high, nil
}

func setRecord(ctx context.Context, n Named, from, to Record) error {
	ok, err := n.Store.SetRecord(ctx, from, to)
	if err != nil {
		return fmt.Errorf("store %q: %w", n.Name, err)
	}
	if !ok {
		return fmt.Errorf("store %q: its record changed meanwhile (another change running?); run the command again", n.Name)
	}
	return nil
}

func distinctNames(named []Named) error {
	seen := map[string]bool{}
	for _, n := range named {
		if err := ValidateName(n.Name); err != nil {
			return err
		}
		if seen[n.Name] {
			return fmt.Errorf("store %q is given twice", n.Name)
		}
		seen[n.Name] = true
	}
	return nil
}

func distinctStores(named []Named, recs []Record) error {
	byID := map[string]string{}
	for i, r := range recs {
		if r.StoreID == "" {
			continue
		}
		if other, ok := byID[r.StoreID]; ok {
			return fmt.Errorf("%w: stores %q and %q are the same database (store id %s)", ErrMismatch, other, named[i].Name, r.StoreID)
		}
		byID[r.StoreID] = named[i].Name
	}
	return nil
}

// sameMembers reports whether set's members are named's stores, in order.
func sameMembers(set Set, named []Named, recs []Record) bool {
	if len(set.Members) != len(named) {
		return false
	}
	for i, m := range set.Members {
		if m.Name != named[i].Name || m.Store != recs[i].StoreID || m.Class != int64(i) {
			return false
		}
	}
	return true
}

// Describe is a person's summary of a set.
func (s Set) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "set version %d of fleet %s: floor %d, blocks of %d ids\n", s.Version, s.Fleet, s.Floor, s.Block)
	for _, m := range s.Members {
		fmt.Fprintf(&b, "  %s: class %d of %d, worker slot %d of %d, store id %s\n", m.Name, m.Class, len(s.Members), m.Slot, s.WorkerSlots, m.Store)
	}
	return b.String()
}
