package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// openStore is a store the app opened: the one of --mysql-dsn or
// --sqlite-path, named "", or one of --store.
type openStore struct {
	name string
	st   *store.Store
	// late is set while a store of a set that did not answer at the
	// start has not been migrated (or, with --migrate=false, its schema
	// checked) since: see watchStores.
	late *atomic.Bool
}

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
	if !a.cfg.Several() {
		st, err := a.cfg.Open(ctx, a.durabilityOptions(store.Options{OnHealth: a.healthLogger("")}, ""))
		if err != nil {
			return err
		}
		a.stores = append(a.stores, openStore{st: st, late: new(atomic.Bool)})
		a.log.Info("store open", a.cfg.Describe()...)
	}
	for _, e := range a.cfg.Set {
		st, err := e.Open(ctx, a.durabilityOptions(store.Options{OnHealth: a.healthLogger(e.Name), Timeout: a.cfg.Timeout, AllowDown: true}, e.Name))
		if err != nil {
			return err
		}
		s := openStore{name: e.Name, st: st, late: new(atomic.Bool)}
		a.stores = append(a.stores, s)
		if st.Health().Up {
			a.log.Info("store open", e.Describe()...)
			continue
		}
		s.late.Store(true)
		a.log.Warn("store open, not answering: the other stores serve until it answers",
			append(e.Describe(), "err", st.Health().Err)...)
	}
	if a.cfg.Migrate {
		for _, s := range a.stores {
			if s.late.Load() {
				continue
			}
			applied, err := s.st.Migrate(ctx)
			if err != nil {
				return s.errorf(err)
			}
			logMigrations(a.log.With(s.attrs()...), applied)
		}
	}
	a.watchStores(ctx)
	if !a.cfg.Several() {
		return a.refuseSetMember(ctx)
	}
	named := make([]storeset.Named, len(a.stores))
	for i, s := range a.stores {
		named[i] = storeset.Named{Name: s.name, Store: s.st, Up: func() bool { return s.st.Health().Up && !s.late.Load() }}
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
	for _, s := range a.stores {
		errs = append(errs, s.st.Close())
	}
	return errs
}

// refuseSetMember refuses a single store that belongs to a set of several:
// served alone, its rows would hand out ids outside its class, which other
// stores of the set hand out. A database not migrated yet belongs to none.
func (a *Server) refuseSetMember(ctx context.Context) error {
	r, err := a.stores[0].st.Record(ctx)
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

// errorf names the store in err when there are several.
func (s openStore) errorf(err error) error {
	if s.name == "" {
		return err
	}
	return fmt.Errorf("store %q: %w", s.name, err)
}

// attrs name the store in a log line when there are several.
func (s openStore) attrs() []any {
	if s.name == "" {
		return nil
	}
	return []any{"store", s.name}
}

// segmentStore is where the allocator takes its ranges: the store, or the
// set of stores.
func (a *Server) segmentStore() segment.Store {
	if a.set != nil {
		return a.set
	}
	return a.stores[0].st
}

// homeStore is where what has one counter lives: the sequences, and the
// ordered, formatted and opaque tags. It is the store, or the home store of
// the set (storeset's home.go).
func (a *Server) homeStore() *store.Store {
	if a.set != nil {
		home := a.set.HomeName()
		for _, s := range a.stores {
			if s.name == home {
				return s.st
			}
		}
	}
	return a.stores[0].st
}

// leaseStore is where snowflake worker ids are leased. With several stores
// it is the set: each store leases only in its own part of the worker-id
// space, so regions never run the same worker id, and a lease lost with
// its store is taken again from another.
func (a *Server) leaseStore() snowflake.LeaseStore {
	if a.set != nil {
		return a.set.Leases()
	}
	return a.stores[0].st
}

// logMigrations logs what Store.Migrate applied at the start of serve.
func logMigrations(log *slog.Logger, applied []migrations.Applied) {
	if len(applied) == 0 {
		log.Info("no pending migration")
		return
	}
	for _, m := range applied {
		log.Info("migration applied", "version", m.Version, "name", m.Name, "took", m.Duration.Round(time.Millisecond).String())
	}
}
