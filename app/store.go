package app

import (
	"context"
	"strings"

	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// openStore opens the store, or every --store, and migrates each, or with
// --migrate=false starts watching for the migrations they lack; then it
// serves them through storeset.Stores: one store alone (which it refuses
// when the store belongs to a set), or the set over them, which checks
// that they are the set they record.
//
// A store of a set that does not answer at the start does not fail it,
// as long as another store answers (the set is then checked against the
// stores that answer, and the others once they do): it opens down, its
// readiness check says so, and it is migrated once it answers. One store
// alone must answer.
func (a *Server) openStore(ctx context.Context) error {
	a.ready = readiness.NewStores(readiness.StoresOptions{Migrate: a.cfg.Migrate, RequireDurable: a.cfg.RequireDurable, Log: a.log})
	opened := OpenStores(ctx, a.cfg.StoreConfig, OpenOptions{Options: func(e StoreEntry) store.Options {
		return a.durabilityOptions(store.Options{OnHealth: a.healthLogger(e.Name), Timeout: a.cfg.Timeout}, e.Name)
	}})
	if err := opened.Err(); err != nil {
		opened.Close()
		return err
	}
	for i, e := range opened.Entries {
		st := opened.Stores[i]
		a.ready.Add(e.Name, st)
		if st.Health().Up {
			a.log.Info("store open", e.Describe()...)
			a.warnClearLink(ctx, e, st)
			continue
		}
		a.log.Warn("store open, not answering: the other stores serve until it answers",
			append(e.Describe(), "err", st.Health().Err)...)
	}
	if err := a.ready.Migrate(ctx); err != nil {
		return err
	}
	a.ready.Watch(ctx)
	var err error
	a.opened = opened
	a.set, err = opened.OpenSet(ctx, func(i int) bool { return a.ready.All()[i].Usable() }, storeset.Options{
		CallTimeout:  a.cfg.Timeout,
		FailoverJump: a.cfg.FailoverJump,
		OnStale:      a.logStale,
		OnChange:     a.logSetChange,
	})
	if err != nil || !a.set.Several() {
		return err
	}
	set := a.set.Set()
	a.log.Info("set of stores open", "version", set.Version, "fleet", set.Fleet, "stores", strings.Join(set.Names(), ","))
	return nil
}

// logSetChange writes the change of the set of stores an instance
// adopts to the admin trail: the versions and the stores before and
// after (leaf store add and retire write the set; each instance learns
// of it at its next read).
func (a *Server) logSetChange(before, after storeset.Set) {
	a.log.Info("admin: store set changed", "version_before", before.Version, "version", after.Version,
		"stores_before", strings.Join(before.Names(), ","), "stores", strings.Join(after.Names(), ","))
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

// homeStore is where what has one counter lives: the sequences, and the
// ordered, formatted and opaque tags. It is the one store, or the home
// store of the set (storeset's home.go).
func (a *Server) homeStore() *store.Store {
	return a.opened.Stores[max(a.opened.Home(a.set), 0)]
}

// warnClearLink says, at WARN, that the link to a MySQL store whose DSN
// asks tls=preferred fell back to clear text: the driver does so without
// a word, and the operator asked for TLS.
func (a *Server) warnClearLink(ctx context.Context, e StoreEntry, st *store.Store) {
	if e.Cfg == nil || !e.Cfg.AllowFallbackToPlaintext || e.TLS != nil {
		return
	}
	if on, err := st.LinkEncrypted(ctx); err == nil && !on {
		a.log.Warn("store open over a link in clear: its DSN says tls=preferred, and the server speaks no TLS; "+
			"give --mysql-tls-ca (or tls=true) to refuse clear text", e.Describe()...)
	}
}
