package app

import (
	"context"
	"math"
	"net"
	"time"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// openSequences starts the per-key sequences, with --sequences, and serves
// them, their spaces and, with the segment allocator, the strictly
// increasing (ordered) tags. They live in one store: the store, or the
// home store of a set.
func (a *Server) openSequences(e *wiring) error {
	if !a.cfg.Sequences {
		return nil
	}
	var err error
	if a.seq, err = a.newSequencer(); err != nil {
		return err
	}
	e.svc.Sequences, e.domain.Sequences = a.seq, a.seq
	e.svc.Spaces = spaceAdmin{SpaceAdmin: a.homeStore(), seq: a.seq}
	if a.cfg.Segment {
		e.svc.Ordered = a.seq
	}
	return nil
}

// closeSequences stops serving the sequences, then clears the leases held
// here, so that other instances take the sections at once.
func (a *Server) closeSequences() {
	if a.seq == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := a.seq.Close(ctx); err != nil {
		a.log.Warn("sequences: could not release every section lease; the others take them once they run out", "err", err)
	}
}

// newSequencer starts the per-key sequences on the store, advertising
// --advertise-addr or an address made of the listener's.
func (a *Server) newSequencer() (*sequence.Sequencer, error) {
	addr := a.cfg.AdvertiseAddr
	if addr == "" {
		addr = defaultAdvertise(a.Addr())
	}
	// A failing round is logged when it starts failing, then at most once
	// a minute while the error stays the same (every round fails while
	// the store is down), and once when a round succeeds again.
	var (
		lastErr    string
		lastLogged time.Time
	)
	home := a.homeStore()
	q, err := sequence.New(sequence.Options{
		Store:   home,
		Ordered: home,
		Tags:    home,
		Bound:   a.boundOf,
		Addr:    addr,
		Lease:   a.cfg.SequenceLease,
		MaxKeys: a.cfg.SequenceKeysMax,
		OnEvent: func(e sequence.Event) {
			switch e.Kind {
			case "error":
				if msg := e.Err.Error(); msg != lastErr || time.Since(lastLogged) >= time.Minute {
					lastErr, lastLogged = msg, time.Now()
					a.log.Warn("sequences: ownership round failed; sections whose lease this instance cannot renew stop being served before it ends", "err", e.Err)
				}
			case "recovered":
				lastErr = ""
				a.log.Info("sequences: ownership rounds succeed again")
			case "lost":
				a.log.Warn("sequences: section lost", "space", e.Space, "section", e.Section, "err", e.Err)
			case "skipped":
				a.logSkipped(e)
			case "handback":
				a.log.Warn("sequences: the unissued numbers of an ordered tag could not be handed back; the next owner starts after them", "row", e.Space, "err", e.Err)
			default:
				a.log.Info("sequences: section "+e.Kind, "space", e.Space, "section", e.Section)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	a.log.Info("sequences ready", "advertise_addr", addr, "member", q.ID(), "lease", q.Lease().String())
	return q, nil
}

// defaultAdvertise is the address other instances reach this one at when
// --advertise-addr is not given: the listen address when it names a host,
// else the host name and the listen port.
func defaultAdvertise(listen string) string {
	host, _, err := net.SplitHostPort(listen)
	if err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			return listen
		}
	}
	return defaultHolder(listen)
}

// spaceAdmin is the store's administration of sequence spaces, telling
// the Sequencer of a created space so that its sections are claimed at
// once.
type spaceAdmin struct {
	service.SpaceAdmin
	seq *sequence.Sequencer
}

func (s spaceAdmin) CreateSpace(ctx context.Context, sp sequence.Space) (sequence.Space, error) {
	created, err := s.SpaceAdmin.CreateSpace(ctx, sp)
	if err == nil {
		s.seq.Added(created)
	}
	return created, err
}

// boundOf is the declared bound of an ordered tag (math.MaxInt64: none),
// as the allocator keeps them (refreshBounds).
func (a *Server) boundOf(tag string) int64 {
	if a.alloc == nil {
		return math.MaxInt64
	}
	return a.alloc.Bound(tag)
}
