package app

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
)

// Durability: every store's settings are read at the start and every
// minute (store/durability.go); what they say is logged when first read
// and when it changes, degrades readiness while a store can forget a
// commit, and is shown on /status and as leaf_store_durable. With
// --require-durable the store itself refuses to hand out numbers while it
// can forget (docs/high-availability.md, "Durability").

// durabilityOptions are the store options of serve that read the settings.
func (a *Server) durabilityOptions(opts store.Options, name string) store.Options {
	opts.CheckDurability = true
	opts.RequireDurable = a.cfg.RequireDurable
	opts.OnDurability = a.durabilityLogger(name)
	opts.RestartJump = a.cfg.FailoverJump
	if opts.RestartJump <= 0 {
		opts.RestartJump = segment.DefaultFailoverJump
	}
	opts.OnRestartJump = a.restartLogger(name)
	return opts
}

// storeJumps counts the jumps this instance made after restarts of one
// store (store/restart.go).
type storeJumps struct {
	name string
	n    *atomic.Uint64
}

// restartLogger counts and logs, at ERROR, each time this instance moved
// every row of the store named name forward after the database started
// again while it could forget commits: one line per restart over the
// fleet, from the instance that found it.
func (a *Server) restartLogger(name string) func(store.RestartJump) {
	log := a.log
	if name != "" {
		log = log.With("store", name)
	}
	n := new(atomic.Uint64)
	a.jumps = append(a.jumps, storeJumps{name: name, n: n})
	return func(j store.RestartJump) {
		n.Add(1)
		a.skipped(everyRow, skipRestartJump, j.Jump*(j.Rows+j.Sections))
		log.Error("the database started again and may have forgotten commits it acknowledged: every row moved forward by the failover jump before any range was taken",
			"nodes", j.Nodes, "jump", j.Jump, "tags_moved", j.Rows, "sections_moved", j.Sections, "why", j.Why)
	}
}

// storesJumped is leaf_store_restart_jumps_total.
func (a *Server) storesJumped() []metrics.StoreCount {
	out := make([]metrics.StoreCount, len(a.jumps))
	for i, j := range a.jumps {
		out[i] = metrics.StoreCount{Store: j.name, N: j.n.Load()}
	}
	return out
}

// durabilityLogger writes one line when the settings of the store named
// name ("" for the one store) are first read and one each time what they
// say changes: a WARN with the settings to change while the store can
// forget a commit.
func (a *Server) durabilityLogger(name string) func(store.Durability) {
	log := a.log
	if name != "" {
		log = log.With("store", name)
	}
	return func(d store.Durability) {
		switch {
		case d.Forgets():
			msg := "the database can forget commits it acknowledged, and hand out again the ranges they took: change its settings"
			if a.cfg.RequireDurable {
				msg += "; until then no range is taken from it (--require-durable)"
			}
			log.Warn(msg, "change", d.Fixes(), "why", d.Reason())
		case d.Known():
			var whys []string
			for _, n := range d.Nodes {
				if n.Known {
					whys = append(whys, n.Why)
				}
			}
			log.Info("the database's settings keep every commit it acknowledged", "settings", whys)
		default:
			var errs []error
			for _, n := range d.Nodes {
				errs = append(errs, n.Err)
			}
			log.Warn("the database's settings could not be read: whether it can forget a commit is not known yet", "err", errors.Join(errs...))
		}
	}
}

// durabilityLines are the stores' settings as /status shows them: one line
// per store, or per node of a store's cluster.
func (a *Server) durabilityLines() []httpapi.DurabilityLine {
	var out []httpapi.DurabilityLine
	for _, s := range a.ready.All() {
		d, ok := s.Store.Durability()
		if !ok {
			continue
		}
		for _, n := range d.Nodes {
			l := httpapi.DurabilityLine{Store: s.Name, Node: n.Node, Known: n.Known, Durable: n.Durable, Why: n.Why, Checked: d.Checked}
			if !n.Known {
				l.Why = fmt.Sprintf("not read: %v", n.Err)
			}
			out = append(out, l)
		}
	}
	return out
}

// storesDurable is leaf_store_durable: the stores whose settings were read.
func (a *Server) storesDurable() []metrics.StoreDurability {
	var out []metrics.StoreDurability
	for _, s := range a.ready.All() {
		if d, ok := s.Store.Durability(); ok && d.Known() {
			out = append(out, metrics.StoreDurability{Store: s.Name, Durable: d.Durable()})
		}
	}
	return out
}
