package readiness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/throttle"
)

// Store is a store an instance serves from, as its readiness sees it.
type Store struct {
	// Name is the store's name in a set; "" for an instance's one store.
	Name  string
	Store *store.Store
	// late is set while a store that did not answer when it was opened
	// has not been migrated (or its schema checked) since: see Watch.
	late atomic.Bool
}

// Usable reports whether the store answers and has been migrated (or its
// schema checked) since it did not answer at the start: a set takes
// ranges from it only then.
func (s *Store) Usable() bool { return s.Store.Health().Up && !s.late.Load() }

// Errorf names the store in err when it has a name.
func (s *Store) Errorf(err error) error {
	if s.Name == "" {
		return err
	}
	return fmt.Errorf("store %q: %w", s.Name, err)
}

// Attrs name the store in a log line when it has a name.
func (s *Store) Attrs() []any {
	if s.Name == "" {
		return nil
	}
	return []any{"store", s.Name}
}

// StoresOptions configure Stores.
type StoresOptions struct {
	// Migrate migrates the stores (serve's --migrate); false checks that
	// their schema is the one this version needs, and fails readiness
	// until it is.
	Migrate bool
	// RequireDurable is serve's --require-durable: the durability checks
	// say that no range is taken from a store while it can forget.
	RequireDurable bool
	Log            *slog.Logger
}

// Stores are every store an instance opened, in the configured order, and
// the watch that does in the background what the start could not (Watch).
type Stores struct {
	opts StoresOptions
	all  []*Store

	// Why the schema is not what this version needs, until a check finds
	// it is (with Migrate false, or when a migration found one lacking).
	schemaErr atomic.Pointer[error]
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

// NewStores makes the readiness of stores yet to be added.
func NewStores(opts StoresOptions) *Stores {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Stores{opts: opts}
}

// Add adds a store just opened, named as Store.Name says. A store that
// does not answer is late: it is migrated (or checked) once it answers.
func (s *Stores) Add(name string, st *store.Store) *Store {
	w := &Store{Name: name, Store: st}
	w.late.Store(!st.Health().Up)
	s.all = append(s.all, w)
	return w
}

// All are the stores, in the order they were added.
func (s *Stores) All() []*Store { return s.all }

// Migrate applies the pending migrations to every store that is not late,
// logging what it applied; with Migrate false it does nothing.
func (s *Stores) Migrate(ctx context.Context) error {
	if !s.opts.Migrate {
		return nil
	}
	for _, w := range s.all {
		if w.late.Load() {
			continue
		}
		applied, err := w.Store.Migrate(ctx)
		if err != nil {
			return w.Errorf(err)
		}
		logMigrations(s.opts.Log.With(w.Attrs()...), applied)
	}
	return nil
}

// logMigrations logs what Store.Migrate applied.
func logMigrations(log *slog.Logger, applied []migrations.Applied) {
	if len(applied) == 0 {
		log.Info("no pending migration")
		return
	}
	for _, m := range applied {
		log.Info("migration applied", "version", m.Version, "name", m.Name, "took", m.Duration.Round(time.Millisecond).String())
	}
}

// Watch does in the background what the start could not: it migrates
// each late store once it answers, or with Migrate false checks then that
// it has the tables and columns this version uses. With Migrate false it
// also checks every store that answers now: while one lacks a migration,
// the schema check fails naming what is missing, and it runs again every
// few seconds, so that a `leaf migrate` run elsewhere makes the instance
// ready. Close stops it.
func (s *Stores) Watch(ctx context.Context) {
	var late, lacking []*Store
	var first error
	for _, w := range s.all {
		if w.late.Load() {
			late = append(late, w)
			continue
		}
		if s.opts.Migrate {
			continue
		}
		err := w.Store.CheckSchema(ctx)
		switch {
		case err == nil:
		case errors.As(err, new(*segment.NotMigratedError)):
			err = w.Errorf(err)
			s.opts.Log.Error("the database lacks migrations and --migrate=false: run `leaf migrate`", append(w.Attrs(), "err", err)...)
			lacking = append(lacking, w)
			if first == nil {
				first = err
			}
		case w.Name != "":
			// A store of a set that stopped answering since it opened:
			// checked once it answers again.
			w.late.Store(true)
			late = append(late, w)
		}
		// The one store not answering is the store check's to report.
	}
	if len(late)+len(lacking) == 0 {
		return
	}
	if first != nil {
		s.schemaErr.Store(&first)
	}
	wctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.wg.Go(func() { s.catchUp(wctx, late, lacking) })
}

// Close stops the watch and waits for it; the stores stay open.
func (s *Stores) Close() {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
}

// catchUp is Watch's loop: it ends when ctx does, or when every late
// store has been migrated (or checked) and none lacks a migration.
func (s *Stores) catchUp(ctx context.Context, late, lacking []*Store) {
	t := time.NewTicker(lateCheck)
	defer t.Stop()
	c := &catchingUp{
		late:       late,
		lacking:    lacking,
		hadLacking: len(lacking) > 0,
		failures:   throttle.New(throttle.Every),
		next:       map[string]time.Time{},
		rechecked:  time.Now(),
	}
	for len(c.late)+len(c.lacking) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.tryLate(ctx, c) {
			return
		}
		if len(c.lacking) > 0 && time.Since(c.rechecked) >= schemaRecheck {
			c.rechecked = time.Now()
			s.recheckLacking(ctx, c)
		}
	}
	if c.hadLacking {
		s.schemaErr.Store(nil)
		s.opts.Log.Info("the database is migrated now")
	}
}

// catchingUp is the state of catchUp's loop.
type catchingUp struct {
	late       []*Store // not migrated (or checked) yet
	lacking    []*Store // found lacking a migration
	hadLacking bool     // some store lacked one: say when none does
	failures   *throttle.Limiter
	next       map[string]time.Time // when to try a late store again after a failure
	rechecked  time.Time            // the last check of the lacking stores
}

// tryLate migrates (or checks) each late store that answers now and is
// not waiting after a failure; a store found lacking a migration moves to
// c.lacking. False when ctx ended meanwhile.
func (s *Stores) tryLate(ctx context.Context, c *catchingUp) bool {
	still := c.late[:0]
	for _, w := range c.late {
		if !w.Store.Health().Up || time.Now().Before(c.next[w.Name]) {
			still = append(still, w)
			continue
		}
		lacks, err := s.catchUpStore(ctx, w)
		switch {
		case ctx.Err() != nil:
			return false
		case lacks:
			c.lacking = append(c.lacking, w)
			c.hadLacking = true
			s.schemaErr.Store(&err)
		case err != nil:
			c.next[w.Name] = time.Now().Add(schemaRecheck)
			if ok, dropped := c.failures.Allow(w.Name); ok {
				s.opts.Log.Warn("a store that answers again could not be migrated; trying again", append(w.Attrs(), "err", err, "failures_not_logged", dropped)...)
			}
			still = append(still, w)
		default:
			w.late.Store(false)
		}
	}
	c.late = still
	return true
}

// recheckLacking checks the schema of each store that lacked a migration,
// keeping those that still lack one, and the first's error for the
// schema check.
func (s *Stores) recheckLacking(ctx context.Context, c *catchingUp) {
	left := c.lacking[:0]
	var missing error
	for _, w := range c.lacking {
		cctx, cancel := context.WithTimeout(ctx, w.Store.Timeout())
		err := w.Store.CheckSchema(cctx)
		cancel()
		if err == nil {
			w.late.Store(false)
			continue
		}
		left = append(left, w)
		if missing == nil && errors.As(err, new(*segment.NotMigratedError)) {
			missing = w.Errorf(err)
		}
	}
	c.lacking = left
	if missing != nil {
		s.schemaErr.Store(&missing)
	}
}

// catchUpStore migrates a late store that answers now, or with Migrate
// false checks its schema; lacks reports a store that lacks a migration
// this version needs, err saying what.
func (s *Stores) catchUpStore(ctx context.Context, w *Store) (lacks bool, err error) {
	log := s.opts.Log.With(w.Attrs()...)
	if !s.opts.Migrate {
		cctx, cancel := context.WithTimeout(ctx, w.Store.Timeout())
		defer cancel()
		err := w.Store.CheckSchema(cctx)
		if errors.As(err, new(*segment.NotMigratedError)) {
			err = w.Errorf(err)
			log.Error("the database lacks migrations and --migrate=false: run `leaf migrate`", "err", err)
			return true, err
		}
		if err == nil {
			log.Info("store answering: its schema is the one this version needs")
		}
		return false, err
	}
	applied, err := w.Store.Migrate(ctx)
	logMigrations(log, applied)
	if err != nil {
		return false, w.Errorf(err)
	}
	log.Info("store answering: migrated")
	return false, nil
}

// schemaRecheck is how often a database found without its migrations is
// checked again, and a late store whose migration failed is tried again.
const schemaRecheck = 2 * time.Second

// lateCheck is how often the late stores are looked at: a look reads
// their health, in memory; the migration runs once one answers.
const lateCheck = 250 * time.Millisecond
