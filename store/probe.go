package store

import (
	"context"
	"fmt"
	"time"
)

// probeUp is how often a store that answers is checked when nothing else
// calls it; probeDown how often one that failed is checked for its return.
// The first bounds how long an outage can go unnoticed while no range is
// needed; the second how soon service resumes.
const (
	probeUp   = 5 * time.Second
	probeDown = 200 * time.Millisecond
)

// confirmTimeout bounds the probe that decides whether a call that timed
// out met a database that does not answer at all.
const confirmTimeout = 500 * time.Millisecond

// confirm puts the store under suspicion after a call ran out of time and
// probes the database in the background: it takes the store down with
// cause if the probe gets no answer either, and clears the suspicion
// otherwise. The caller does not wait for it; one probe runs at a time.
func (s *Store) confirm(cause error) {
	if !s.health.suspect() {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(s.closing, min(confirmTimeout, s.timeout))
		defer cancel()
		err := s.probeFunc(ctx)
		switch {
		case s.closing.Err() != nil:
		case err != nil:
			s.health.down(cause)
		default:
			s.health.cleared()
		}
	}()
}

// probeLoop checks the database until ctx is cancelled: rarely while it
// answers, often while it does not (at once when it has just gone down),
// so that service resumes soon after it returns.
func (s *Store) probeLoop(ctx context.Context) {
	defer s.bg.Done()
	for {
		every := probeUp
		if !s.health.isUp() {
			every = probeDown
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.health.wake:
			t.Stop()
			continue // gone down just now: wait the short period from here
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, s.timeout)
		err := s.probeFunc(pctx)
		timedOut := pctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			s.health.answered()
		case timedOut:
			s.health.down(fmt.Errorf("no answer within %v: %w", s.timeout, err))
		case classify(err) == unreachable:
			s.health.down(err)
		}
	}
}

// probe asks the database whether it can take writes: on MySQL, whether
// the node in use is not read only, on Galera ready, synced and in the
// primary component, on Group Replication the primary of a majority
// (writable; the connector moves on to the next node if not); on SQLite,
// whether the file answers.
func (s *Store) probe(ctx context.Context) error {
	if s.dialect == SQLite {
		var one int
		return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*nodeConn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		if _, err := writable(ctx, c.conn); err != nil {
			c.nodes.leave(c.idx)
			return err
		}
		return nil
	})
}
