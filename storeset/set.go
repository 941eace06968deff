package storeset

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/leafid/leaf/segment"
)

// State is where a store stands in its set.
type State string

// States of a store.
const (
	// Unjoined: the store belongs to no set yet.
	Unjoined State = ""
	// Active: the store hands out ids of its class under its set's version.
	Active State = "active"
	// Changing: the set is being changed; the store hands out nothing
	// until the change gives it the new version.
	Changing State = "changing"
	// Retired: the store left the set; it never hands out ids again.
	Retired State = "retired"
)

// Errors of a set of stores.
var (
	// ErrSetChanged: a store's set version or state is not the one the
	// caller took a range under; read the set again.
	ErrSetChanged = errors.New("the set of stores changed")
	// ErrMismatch: the configured stores and the set the stores record
	// disagree; serving would risk overlapping classes.
	ErrMismatch = errors.New("the configured stores do not match the set the stores record")
)

// Record is what one store says about itself: its identity and its copy of
// the set. Version and State are kept beside the set's text so that a
// statement can check them in the same step that takes a range.
type Record struct {
	StoreID string
	Version int64
	State   State
	Set     []byte // the set as JSON; nil before the store joins one
}

// DefaultBlock is the size of a block of the number space: 2^20 ids, just
// above the largest step, so a range is cut short at a block's end rarely
// and by little, while an instance that moves from one store to another
// skips at most (stores - 1) blocks.
const DefaultBlock = 1 << 20

// DefaultWorkerSlots is how many parts the snowflake worker-id space of a
// set is cut into: each store leases worker ids only in its own part, so
// regions never run the same worker id. 16 parts of the default 1,024 ids
// give each store 64 workers.
const DefaultWorkerSlots = 16

// Set is the set of stores that share one number space, as every member
// records it. Version grows with every change; Floor is where the set's
// classes start, above every id issued under earlier versions.
type Set struct {
	Fleet   string   `json:"fleet"`
	Version int64    `json:"version"`
	Floor   int64    `json:"floor,string"`
	Block   int64    `json:"block"`
	Members []Member `json:"members"`
	// WorkerSlots is how many parts the worker-id space is cut into;
	// Retired lists the parts of stores that left the set, never given
	// to another (a worker id of theirs may still run somewhere).
	WorkerSlots int64   `json:"worker_slots"`
	Retired     []int64 `json:"retired_slots,omitempty"`
	// Home names the member where what has one counter lives: sequences,
	// ordered tags, formatted and opaque tags (see the package comment).
	// Sets recorded before it existed have none: their home is the member
	// of class 0, which the next change records.
	Home string `json:"home,omitempty"`
}

// HomeName is the name of the set's home member.
func (s Set) HomeName() string {
	if s.Home != "" {
		return s.Home
	}
	for _, m := range s.Members {
		if m.Class == 0 {
			return m.Name
		}
	}
	return ""
}

// Member is one store of a set.
type Member struct {
	Name  string `json:"name"`
	Store string `json:"store"` // the store's identity, leaf_store.store_id
	Class int64  `json:"class"`
	Slot  int64  `json:"slot"` // its part of the worker-id space
}

// Workers returns the worker ids [lo, hi) that the member named name
// leases, of a worker-id space of maxWorkers ids: its slot's part.
func (s Set) Workers(name string, maxWorkers int64) (lo, hi int64, err error) {
	m, ok := s.Member(name)
	if !ok {
		return 0, 0, fmt.Errorf("store %q is not in the set", name)
	}
	per := maxWorkers / s.WorkerSlots
	if per < 1 {
		return 0, 0, fmt.Errorf("%d worker ids cannot be cut into the set's %d parts: widen the layout's worker field", maxWorkers, s.WorkerSlots)
	}
	return m.Slot * per, (m.Slot + 1) * per, nil
}

// freeSlot returns the lowest worker slot that no member has and no
// retired store had.
func (s Set) freeSlot() (int64, bool) {
	for slot := range s.WorkerSlots {
		if !slices.Contains(s.Retired, slot) && !slices.ContainsFunc(s.Members, func(m Member) bool { return m.Slot == slot }) {
			return slot, true
		}
	}
	return 0, false
}

// Class returns the class of the member named name.
func (s Set) Class(name string) (segment.Class, bool) {
	for _, m := range s.Members {
		if m.Name == name {
			return segment.Class{Floor: s.Floor, Block: s.Block, N: int64(len(s.Members)), K: m.Class}, true
		}
	}
	return segment.Class{}, false
}

// Member returns the member named name.
func (s Set) Member(name string) (Member, bool) {
	i := slices.IndexFunc(s.Members, func(m Member) bool { return m.Name == name })
	if i < 0 {
		return Member{}, false
	}
	return s.Members[i], true
}

// Names lists the members' names, in class order.
func (s Set) Names() []string {
	out := make([]string, len(s.Members))
	for i, m := range s.Members {
		out[i] = m.Name
	}
	return out
}

// Validate checks that s can be served: a fleet, a version, classes 0..N-1
// each once, distinct names and identities, and a block that holds the
// largest step.
func (s Set) Validate() error {
	if s.Fleet == "" || s.Version < 1 || len(s.Members) == 0 {
		return fmt.Errorf("set: fleet %q, version %d, %d members", s.Fleet, s.Version, len(s.Members))
	}
	names, stores, classes, slots := map[string]bool{}, map[string]bool{}, map[int64]bool{}, map[int64]bool{}
	for _, slot := range s.Retired {
		slots[slot] = true
	}
	for _, m := range s.Members {
		if err := ValidateName(m.Name); err != nil {
			return err
		}
		if names[m.Name] || stores[m.Store] || classes[m.Class] || slots[m.Slot] || m.Store == "" {
			return fmt.Errorf("set: member %q (store %s, class %d, worker slot %d) repeats a name, store, class or slot", m.Name, m.Store, m.Class, m.Slot)
		}
		if m.Slot < 0 || m.Slot >= s.WorkerSlots {
			return fmt.Errorf("set: member %q has worker slot %d of %d", m.Name, m.Slot, s.WorkerSlots)
		}
		names[m.Name], stores[m.Store], classes[m.Class], slots[m.Slot] = true, true, true, true
	}
	for k := range int64(len(s.Members)) {
		if !classes[k] {
			return fmt.Errorf("set: no member has class %d of %d", k, len(s.Members))
		}
	}
	if s.Home != "" && !names[s.Home] {
		return fmt.Errorf("set: its home %q is not a member", s.Home)
	}
	c, _ := s.Class(s.Members[0].Name)
	return c.Validate()
}

// ValidateName reports whether name can name a store: 1 to 32 letters,
// digits, '-' or '_'.
func ValidateName(name string) error {
	if name == "" || len(name) > 32 || strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) >= 0 {
		return fmt.Errorf("store name %q: want 1 to 32 letters, digits, '-' or '_'", name)
	}
	return nil
}

// Encode is the set as a store records it.
func (s Set) Encode() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Set always marshals
	}
	return b
}

// Decode reads a set a store recorded.
func Decode(b []byte) (Set, error) {
	var s Set
	if err := json.Unmarshal(b, &s); err != nil {
		return Set{}, fmt.Errorf("decode the set of stores: %w", err)
	}
	return s, s.Validate()
}

// Newest is the set of the highest version that the records of the stores
// that answered hold (errs[i] says why store i did not), leaving out the
// stores that belong to no set and, when active is set, the records of
// retired stores; ok is false when none holds one. Records of two fleets
// are ErrMismatch: they are not one set. Every reader of the stores'
// records takes the set in force by this one rule: an instance opening the
// set, a change of the set, and leaf store show.
func Newest(recs []Record, errs []error, active bool) (set Set, ok bool, err error) {
	for i, r := range recs {
		if errs[i] != nil || r.Set == nil || r.State == Unjoined || active && r.State == Retired {
			continue
		}
		got, err := Decode(r.Set)
		if err != nil {
			return Set{}, false, fmt.Errorf("the record of store %d: %w", i+1, err)
		}
		if ok && got.Fleet != set.Fleet {
			return Set{}, false, fmt.Errorf("%w: stores of two fleets (%s and %s)", ErrMismatch, set.Fleet, got.Fleet)
		}
		if !ok || got.Version > set.Version {
			set, ok = got, true
		}
	}
	return set, ok, nil
}

// Describe is a person's summary of a set.
func (s Set) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "set version %d of fleet %s: floor %d, blocks of %d ids\n", s.Version, s.Fleet, s.Floor, s.Block)
	home := s.HomeName()
	for _, m := range s.Members {
		fmt.Fprintf(&b, "  %s: class %d of %d, worker slot %d of %d, store id %s", m.Name, m.Class, len(s.Members), m.Slot, s.WorkerSlots, m.Store)
		if m.Name == home {
			b.WriteString(", home")
		}
		b.WriteString("\n")
	}
	return b.String()
}
