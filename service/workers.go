package service

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leafid/leaf/snowflake"
)

// Worker-id leases for in-process generators: a service of the fleet's
// own pool of worker ids (the one its instances lease theirs from), so
// that a program making snowflake ids in memory (this repository's
// clients, bwmarrin/snowflake, sonyflake) never shares a worker id with
// another. The holder keeps its lease as leaf's own generator does: it
// records, before issuing, a reserve (the latest time it may issue at,
// its clock now plus the TTL less a margin), issues only above the floor
// the lease came with and up to its reserve, renews well within the TTL,
// and stops once a renewal was refused or none succeeded within the TTL
// less the margin. A new holder of the id then starts above every id the
// old one could have made. docs/snowflake.md, "Worker ids for your own
// generators", has the protocol.

// Limits of a worker lease.
const (
	MinWorkerTTL    = 3 * time.Second
	MaxWorkerTTL    = 10 * time.Minute
	MaxHolderLength = 191 // the column's
)

// WorkerLease is a worker id leased to a holder.
type WorkerLease struct {
	WorkerID int64
	// Token is this acquisition, to renew and release it with.
	Token string
	// Floor is the highest timestamp (Unix ms) an earlier holder of the
	// id may have used: the holder's ids are made above it.
	Floor int64
	// Reserve is the timestamp (Unix ms) recorded: the holder makes no id
	// past it before its next renewal.
	Reserve int64
	// Expires is when the lease runs out, by the database's clock.
	Expires time.Time
	Layout  Layout
}

// workers is the lease store of the worker ids handed out, or the error
// of a call where none are.
func (s *Service) workers() (snowflake.LeaseStore, error) {
	if s.cfg.Snowflake == nil {
		return nil, ModeOff("snowflake")
	}
	if s.cfg.WorkerLeases == nil {
		return nil, Errorf(InvalidRequest, "worker ids are leased only where the instances lease their own (no --worker-id)")
	}
	return s.cfg.WorkerLeases, nil
}

func checkTTL(ttl time.Duration) error {
	if ttl < MinWorkerTTL || ttl > MaxWorkerTTL {
		return Errorf(InvalidRequest, "ttl_ms must be from %d to %d", MinWorkerTTL.Milliseconds(), MaxWorkerTTL.Milliseconds())
	}
	return nil
}

// AcquireWorker leases a worker id of the layout's to holder for ttl and
// records reserve (Unix ms) before the lease is handed out.
func (s *Service) AcquireWorker(ctx context.Context, holder string, ttl time.Duration, reserve int64) (WorkerLease, error) {
	ls, err := s.workers()
	if err != nil {
		return WorkerLease{}, err
	}
	if holder == "" || len(holder) > MaxHolderLength || !utf8.ValidString(holder) || strings.ContainsRune(holder, 0) {
		return WorkerLease{}, Errorf(InvalidRequest, "holder must be 1 to %d bytes of UTF-8 naming the process", MaxHolderLength)
	}
	if err := checkTTL(ttl); err != nil {
		return WorkerLease{}, err
	}
	layout, err := s.SnowflakeLayout()
	if err != nil {
		return WorkerLease{}, err
	}
	l, err := ls.Acquire(ctx, holder, 1<<layout.WorkerBits, ttl)
	if err != nil {
		return WorkerLease{}, err
	}
	floor := l.LastTimestamp
	renewed, err := ls.Renew(ctx, l, max(reserve, floor), ttl)
	if err != nil {
		_ = ls.Release(ctx, l, l.LastTimestamp)
		return WorkerLease{}, err
	}
	return leaseOf(renewed, floor, layout), nil
}

// RenewWorker extends the lease of token by ttl and records reserve.
func (s *Service) RenewWorker(ctx context.Context, workerID int64, token string, ttl time.Duration, reserve int64) (WorkerLease, error) {
	ls, err := s.workers()
	if err != nil {
		return WorkerLease{}, err
	}
	if err := checkTTL(ttl); err != nil {
		return WorkerLease{}, err
	}
	l, err := parseToken(workerID, token)
	if err != nil {
		return WorkerLease{}, err
	}
	layout, err := s.SnowflakeLayout()
	if err != nil {
		return WorkerLease{}, err
	}
	renewed, err := ls.Renew(ctx, l, reserve, ttl)
	if err != nil {
		return WorkerLease{}, lost(workerID, err)
	}
	renewed.Holder, renewed.Instance = l.Holder, l.Instance
	return leaseOf(renewed, renewed.LastTimestamp, layout), nil
}

// ReleaseWorker frees the lease of token at once, recording last (Unix
// ms), the last timestamp the holder used.
func (s *Service) ReleaseWorker(ctx context.Context, workerID int64, token string, last int64) error {
	ls, err := s.workers()
	if err != nil {
		return err
	}
	l, err := parseToken(workerID, token)
	if err != nil {
		return err
	}
	return lost(workerID, ls.Release(ctx, l, last))
}

// lost is err, told as lease_lost when the store says the lease is no
// longer the holder's.
func lost(workerID int64, err error) error {
	if errors.Is(err, snowflake.ErrLeaseLost) {
		return Errorf(LeaseLost, "worker id %d is no longer this lease's (it ran out and was taken, or the database went back in time): stop making ids with it and acquire another", workerID)
	}
	return err
}

func leaseOf(l snowflake.Lease, floor int64, layout Layout) WorkerLease {
	return WorkerLease{WorkerID: l.WorkerID, Token: token(l), Floor: floor, Reserve: l.LastTimestamp, Expires: l.Expires, Layout: layout}
}

// token is an acquisition as its holder names it: the registry that
// granted it, the holder and the instance, which Renew and Release need.
func token(l snowflake.Lease) string {
	return base64.RawURLEncoding.EncodeToString([]byte(l.Registry + "\x00" + l.Holder + "\x00" + l.Instance))
}

var errBadToken = errors.New("not a lease of this service")

func parseToken(workerID int64, t string) (snowflake.Lease, error) {
	b, err := base64.RawURLEncoding.DecodeString(t)
	parts := strings.Split(string(b), "\x00")
	if err != nil || len(parts) != 3 || parts[1] == "" || parts[2] == "" || workerID < 0 {
		return snowflake.Lease{}, Errorf(InvalidRequest, "lease: %v: give the lease token the acquisition answered", errBadToken)
	}
	return snowflake.Lease{WorkerID: workerID, Registry: parts[0], Holder: parts[1], Instance: parts[2]}, nil
}
