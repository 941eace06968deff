package fleettest

import (
	"fmt"

	"github.com/leafid/leaf/sequence"
)

// Next checks the numbers a sequence key was answered.
func (l *Ledger) Next(space, key string, seqs []int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["sequence"]++
	k := [2]string{space, key}
	for i, v := range seqs {
		if v <= l.seqs[k] || i > 0 && v != seqs[i-1]+1 {
			return fmt.Errorf("space %q, key %q: %d after %d (batch %v)", space, key, v, l.seqs[k], seqs)
		}
		l.seqs[k] = v
	}
	return nil
}

// Current checks the current number a sequence key was answered: no
// number issued to it before passes it, and every next one will.
func (l *Ledger) Current(space, key string, seq int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["current"]++
	k := [2]string{space, key}
	if seq < l.seqs[k] {
		return fmt.Errorf("space %q, key %q: current %d, below %d issued", space, key, seq, l.seqs[k])
	}
	l.seqs[k] = seq
	return nil
}

// Routes checks a routing table: owners among the instances, one per
// section or none.
func (l *Ledger) Routes(space string, sections int, members []string, owners []int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["routes"]++
	if len(owners) != sections || sections < 1 || sections > sequence.MaxSections {
		return fmt.Errorf("routes of %q: %d sections, %d owners", space, sections, len(owners))
	}
	for _, m := range members {
		if !l.addrs[m] {
			return fmt.Errorf("routes of %q: member %q is no instance", space, m)
		}
	}
	for _, o := range owners {
		if o < sequence.NoOwner || o >= len(members) {
			return fmt.Errorf("routes of %q: owner %d of members %v", space, o, members)
		}
	}
	return nil
}
