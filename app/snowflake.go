package app

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/snowflake"
)

// openSnowflake starts the snowflake generator, with --snowflake, and
// serves its ids; its readiness check fails while it cannot issue.
func (a *Server) openSnowflake(ctx context.Context, e *wiring) error {
	if !a.cfg.Snowflake {
		return nil
	}
	var err error
	if a.gen, err = a.newGenerator(ctx); err != nil {
		return err
	}
	e.svc.Snowflake, e.domain.Snowflake = a.gen, a.gen
	if a.cfg.WorkerID < 0 {
		// The fleet leases its worker ids: it leases them to in-process
		// generators too, from the same pool.
		e.svc.WorkerLeases = a.set.Leases()
	}
	e.api.Checks = append(e.api.Checks, readiness.Snowflake(a.gen.Ready))
	return nil
}

// closeSnowflake stops the generator, which releases its worker id
// recording the last timestamp it used.
func (a *Server) closeSnowflake() {
	if a.gen == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := a.gen.Close(ctx); err != nil {
		a.log.Warn("releasing the snowflake worker lease", "err", err)
	}
}

// newGenerator starts the snowflake generator with a fixed or leased worker
// id and warns when the layout's range from the epoch runs out within a
// year.
func (a *Server) newGenerator(ctx context.Context) (*snowflake.Generator, error) {
	s := snowflake.Settings{EpochMs: a.cfg.EpochMs, Layout: a.cfg.Layout}
	if a.cfg.WorkerID >= 0 {
		s.WorkerID = a.cfg.WorkerID
	} else {
		s.Leases, s.Holder, s.LeaseTTL = a.set.Leases(), a.cfg.Holder, a.cfg.SnowflakeLease
		if s.Holder == "" {
			s.Holder = defaultHolder(a.Addr())
		}
		s.OnLease = a.leaseLogger()
	}
	gen, err := snowflake.New(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("snowflake: %w", err)
	}
	leased := []any{"leased", s.Leases != nil}
	if s.Leases != nil {
		leased = append(leased, "holder", s.Holder, "lease", cmp.Or(s.LeaseTTL, snowflake.DefaultLeaseTTL).String())
	}
	a.log.Info("snowflake ready", append(append([]any{"worker_id", gen.WorkerID()}, leased...),
		"layout", gen.Layout().String(), "runs_out", gen.Exhausts().Format(time.RFC3339))...)
	if ends := gen.Exhausts(); time.Until(ends) < snowflake.EndingSoon {
		a.log.Warn("the snowflake time field's range from the epoch runs out within a year: plan a later --snowflake-epoch or a wider time field before then",
			"runs_out", ends.UTC().Format(time.RFC3339), "layout", gen.Layout().String())
	}
	return gen, nil
}

// defaultHolder identifies this process to the worker-lease table: the
// host name and the listen port, the same across restarts of one instance.
func defaultHolder(addr string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		port = addr
	}
	return host + ":" + port
}
