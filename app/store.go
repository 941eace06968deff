package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// openStore opens the store, or every --store, and migrates each, or with
// --migrate=false starts watching for the migrations they lack; with
// --store it then opens the set over them, which checks that they are the
// set they record.
//
// A store of a set that does not answer at the start does not fail it,
// as long as another store answers (the set is then checked against the
// stores that answer, and the others once they do): it opens down, its
// readiness check says so, and it is migrated once it answers.
func (a *Server) openStore(ctx context.Context) error {
	a.ready = readiness.NewStores(readiness.StoresOptions{Migrate: a.cfg.Migrate, RequireDurable: a.cfg.RequireDurable, Log: a.log})
	if !a.cfg.Several() {
		st, err := a.cfg.Open(ctx, a.durabilityOptions(store.Options{OnHealth: a.healthLogger("")}, ""))
		if err != nil {
			return err
		}
		a.ready.Add("", st)
		a.log.Info("store open", a.cfg.Describe()...)
	}
	for _, e := range a.cfg.Set {
		st, err := e.Open(ctx, a.durabilityOptions(store.Options{OnHealth: a.healthLogger(e.Name), Timeout: a.cfg.Timeout, AllowDown: true}, e.Name))
		if err != nil {
			return err
		}
		a.ready.Add(e.Name, st)
		if st.Health().Up {
			a.log.Info("store open", e.Describe()...)
			continue
		}
		a.log.Warn("store open, not answering: the other stores serve until it answers",
			append(e.Describe(), "err", st.Health().Err)...)
	}
	if err := a.ready.Migrate(ctx); err != nil {
		return err
	}
	a.ready.Watch(ctx)
	if !a.cfg.Several() {
		return a.refuseSetMember(ctx)
	}
	named := make([]storeset.Named, len(a.ready.All()))
	for i, s := range a.ready.All() {
		named[i] = storeset.Named{Name: s.Name, Store: s.Store, Up: s.Usable}
	}
	var err error
	a.set, err = storeset.Open(ctx, named, storeset.Options{
		CallTimeout:  a.cfg.Timeout,
		FailoverJump: a.cfg.FailoverJump,
		OnStale:      a.logStale,
	})
	if err != nil {
		return err
	}
	set := a.set.Set()
	a.log.Info("set of stores open", "version", set.Version, "fleet", set.Fleet, "stores", strings.Join(set.Names(), ","))
	return nil
}

// closeStores closes the set, which writes its last marks, then every
// store.
func (a *Server) closeStores() []error {
	var errs []error
	if a.set != nil {
		errs = append(errs, a.set.Close())
	}
	if a.ready != nil {
		for _, s := range a.ready.All() {
			errs = append(errs, s.Store.Close())
		}
	}
	return errs
}

// refuseSetMember refuses a single store that belongs to a set of several:
// served alone, its rows would hand out ids outside its class, which other
// stores of the set hand out. A database not migrated yet belongs to none.
func (a *Server) refuseSetMember(ctx context.Context) error {
	r, err := a.ready.All()[0].Store.Record(ctx)
	if err != nil || r.State == storeset.Unjoined {
		return nil
	}
	name := "?"
	if set, err := storeset.Decode(r.Set); err == nil {
		for _, m := range set.Members {
			if m.Store == r.StoreID {
				name = m.Name
			}
		}
	}
	return fmt.Errorf("%w: this database is store %q of a set of stores (version %d, %s): serve it with --store, "+
		"naming every store of the set (leaf store show)", ErrUsage, name, r.Version, r.State)
}

// segmentStore is where the allocator takes its ranges: the store, or the
// set of stores.
func (a *Server) segmentStore() segment.Store {
	if a.set != nil {
		return a.set
	}
	return a.ready.All()[0].Store
}

// kindsStore is where the tag registry reads what kind each tag is: the
// store, or the set of stores, which learns from the same read which rows
// live in its home store.
func (a *Server) kindsStore() service.TagKinds {
	if a.set != nil {
		return a.set
	}
	return a.ready.All()[0].Store
}

// homeStore is where what has one counter lives: the sequences, and the
// ordered, formatted and opaque tags. It is the store, or the home store of
// the set (storeset's home.go).
func (a *Server) homeStore() *store.Store {
	if a.set != nil {
		home := a.set.HomeName()
		for _, s := range a.ready.All() {
			if s.Name == home {
				return s.Store
			}
		}
	}
	return a.ready.All()[0].Store
}

// leaseStore is where snowflake worker ids are leased. With several stores
// it is the set: each store leases only in its own part of the worker-id
// space, so regions never run the same worker id, and a lease lost with
// its store is taken again from another.
func (a *Server) leaseStore() snowflake.LeaseStore {
	if a.set != nil {
		return a.set.Leases()
	}
	return a.ready.All()[0].Store
}
