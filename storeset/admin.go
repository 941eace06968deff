package storeset

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// records reads the record of every store; errs[i] is why store i did not
// answer (or could not be opened).
func records(ctx context.Context, named []Named) (recs []Record, errs []error) {
	recs, errs = make([]Record, len(named)), make([]error, len(named))
	var wg sync.WaitGroup
	for i, n := range named {
		if n.Err != nil {
			errs[i] = n.Err
			continue
		}
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
// given and the first store as its home. Every store must answer and
// belong to no set (or to a set that an earlier Init of the same stores
// left half made, which it finishes), and none but the home may hold what
// lives in the home store alone. The set's floor is above every id any of
// them has issued, so rows that were in use need no renumbering: what they
// issued lies below it. A set of one keeps its rows' numbering (floor 0),
// as a single store has it.
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
	for _, n := range named[1:] {
		if err := refuseHomeRows(ctx, n); err != nil {
			return Set{}, err
		}
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
		set.Home = named[0].Name
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
	c := &change{named: named, names: names, force: force, byName: map[string]int{}}
	for i, n := range named {
		c.byName[n.Name] = i
	}
	c.recs, c.errs = records(ctx, named)
	if err := distinctStores(named, c.recs); err != nil {
		return Set{}, err
	}
	if err := c.findOld(); err != nil {
		return Set{}, err
	}
	// A change left half way has given some members the next version:
	// finish that one rather than start another.
	c.next, c.resuming = pendingChange(c.recs, c.errs, c.old)
	if err := c.checkMembers(); err != nil {
		return Set{}, err
	}
	if err := c.checkAdded(); err != nil {
		return Set{}, err
	}
	if err := c.freeze(ctx); err != nil {
		return Set{}, err
	}
	if !c.resuming {
		if err := c.plan(ctx); err != nil {
			return Set{}, err
		}
	}
	if err := c.give(ctx); err != nil {
		return Set{}, err
	}
	return c.next, nil
}

// change is one run of Change: the stores given, what they answered, and
// the set they record and the one they are given.
type change struct {
	named  []Named
	byName map[string]int // index in named
	names  []string       // the members of the next set, in order
	force  bool

	recs []Record // what each store answered
	errs []error  // errs[i]: why store i did not answer

	old      Set // the newest set an active or changing store records
	next     Set
	resuming bool // next is the set a change left half way
}

// findOld finds the set the stores record now: the newest one recorded by
// a store that answered and is not retired. Sets of two fleets among them
// are a mismatch.
func (c *change) findOld() error {
	old, ok, err := Newest(c.recs, c.errs, true)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: no store answered with a set: make one with `leaf store init`", ErrMismatch)
	}
	c.old = old
	return nil
}

// checkMembers checks that every member of the old set is given, is the
// database the set names, and answers, unless it is being retired with
// force.
func (c *change) checkMembers() error {
	for _, m := range c.old.Members {
		i, ok := c.byName[m.Name]
		if !ok {
			return fmt.Errorf("%w: store %q of the set (version %d) is not given", ErrMismatch, m.Name, c.old.Version)
		}
		if c.errs[i] == nil && c.recs[i].StoreID != m.Store {
			return fmt.Errorf("%w: %q is database %s, but the set's %q is database %s", ErrMismatch, m.Name, c.recs[i].StoreID, m.Name, m.Store)
		}
		retiring := !slices.Contains(c.names, m.Name)
		if c.errs[i] != nil && !(retiring && c.force) {
			return fmt.Errorf("store %q of the set does not answer; a change needs every member (a store being retired may be left out with --force): %w", m.Name, c.errs[i])
		}
	}
	return nil
}

// checkAdded checks that every store of the next set is given, and that
// each one added answers and belongs to no set (or to the next one, when
// the change is resumed).
func (c *change) checkAdded() error {
	for _, name := range c.names {
		i, ok := c.byName[name]
		if !ok {
			return fmt.Errorf("store %q is not given", name)
		}
		if _, member := c.old.Member(name); !member {
			if c.errs[i] != nil {
				return fmt.Errorf("store %q to add does not answer: %w", name, c.errs[i])
			}
			if c.recs[i].State != Unjoined && !(c.resuming && c.recs[i].Version == c.next.Version) {
				return fmt.Errorf("%w: store %q to add already belongs to a set (version %d)", ErrMismatch, name, c.recs[i].Version)
			}
		}
	}
	return nil
}

// freeze marks the old members that answer as changing: they hand out
// nothing until they are given the next set.
func (c *change) freeze(ctx context.Context) error {
	changing := Record{Version: c.old.Version, State: Changing, Set: c.old.Encode()}
	for _, m := range c.old.Members {
		i := c.byName[m.Name]
		if c.errs[i] != nil || c.recs[i].Version != c.old.Version || c.recs[i].State == Changing {
			continue
		}
		if err := setRecord(ctx, c.named[i], c.recs[i], changing); err != nil {
			return err
		}
		c.recs[i] = Record{StoreID: c.recs[i].StoreID, Version: changing.Version, State: changing.State, Set: changing.Set}
	}
	return nil
}

// plan makes the next set: its floor a failover jump above every id
// issued so far, the members that stay with their worker slots, the
// retired ones' slots never used again, a free slot for each store added,
// and classes in the order of names.
func (c *change) plan(ctx context.Context) error {
	high, err := highest(ctx, c.named, c.errs)
	if err != nil {
		return err
	}
	jump := int64(DefaultFailoverJump)
	old := c.old
	home, err := c.nextHome(ctx)
	if err != nil {
		return err
	}
	next := Set{Fleet: old.Fleet, Version: old.Version + 1, Block: old.Block, WorkerSlots: old.WorkerSlots,
		Retired: slices.Clone(old.Retired), Home: home}
	next.Floor = math.MaxInt64
	if high <= math.MaxInt64-jump {
		next.Floor = high + jump
	}
	for _, m := range old.Members { // a store that stays keeps its worker slot
		if slices.Contains(c.names, m.Name) {
			next.Members = append(next.Members, m)
		} else {
			next.Retired = append(next.Retired, m.Slot)
		}
	}
	for _, name := range c.names {
		if _, ok := old.Member(name); ok {
			continue
		}
		slot, ok := next.freeSlot()
		if !ok {
			return fmt.Errorf("no worker slot left for store %q: the set's %d are used or retired", name, next.WorkerSlots)
		}
		i := c.byName[name]
		next.Members = append(next.Members, Member{Name: name, Store: c.recs[i].StoreID, Slot: slot})
	}
	slices.SortStableFunc(next.Members, func(a, b Member) int {
		return slices.Index(c.names, a.Name) - slices.Index(c.names, b.Name)
	})
	for k := range next.Members {
		next.Members[k].Class = int64(k)
	}
	if err := next.Validate(); err != nil {
		return err
	}
	c.next = next
	return nil
}

// nextHome is the home of the next set: the old one, unless it is retired,
// which only a home that holds nothing of what lives there (HomeRows) may
// be; the first store of the next set is the home then.
func (c *change) nextHome(ctx context.Context) (string, error) {
	home := c.old.HomeName()
	if slices.Contains(c.names, home) {
		return home, nil
	}
	i, ok := c.byName[home]
	if !ok || c.errs[i] != nil {
		return "", fmt.Errorf("store %q is the set's home, where sequences and ordered, formatted and opaque tags live, and does not answer: it cannot be retired", home)
	}
	n, err := c.named[i].Store.HomeRows(ctx)
	if err != nil {
		return "", fmt.Errorf("store %q: %w", home, err)
	}
	if n != 0 {
		return "", fmt.Errorf("store %q is the set's home, where sequences and ordered, formatted and opaque tags live, and holds some: it cannot be retired", home)
	}
	return c.names[0], nil
}

// give records the next set in every store that answers and does not
// have it yet: active in its members, retired in the others.
func (c *change) give(ctx context.Context) error {
	active := Record{Version: c.next.Version, State: Active, Set: c.next.Encode()}
	retired := Record{Version: c.next.Version, State: Retired, Set: c.next.Encode()}
	for i, n := range c.named {
		if c.errs[i] != nil || c.recs[i].Version == c.next.Version {
			continue
		}
		to := active
		if !slices.Contains(c.names, n.Name) {
			to = retired
		}
		if err := setRecord(ctx, n, c.recs[i], to); err != nil {
			return err
		}
	}
	return nil
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
