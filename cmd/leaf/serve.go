package main

import (
	"cmp"
	"context"
	"errors"
	"io"
	"time"

	"github.com/leafid/leaf/app"
)

// serve runs `leaf serve` until ctx is done: the configuration from args
// and the environment, then the server of package app.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	a, err := newApp(args, getenv, stderr)
	if err != nil {
		return err
	}
	keepHeapFloor(heapFloor)
	if err := a.Open(ctx); err != nil {
		return errors.Join(err, a.Close())
	}
	err = a.Run(ctx)
	return errors.Join(err, a.Close())
}

// served is a server of `leaf serve` and the configuration its flags read.
type served struct {
	*app.Server
	cfg serveConfig
}

// newApp reads the configuration of `leaf serve` from args and the
// environment; nothing is started yet.
func newApp(args []string, getenv func(string) string, stderr io.Writer) (*served, error) {
	var c serveConfig
	fs := c.flags()
	if err := parse(fs, args, getenv, stderr); err != nil {
		return nil, err
	}
	if err := c.validate(fs); err != nil {
		return nil, err
	}
	return &served{Server: app.New(c.app(), newLogger(c.logFormat, c.logLevel, stderr)), cfg: c}, nil
}

// app is the configuration of the server, as the flags read it.
func (c *serveConfig) app() app.Config {
	return app.Config{
		StoreConfig: c.storeFlags.config(),
		Addr:        c.addr,
		Migrate:     c.migrate, Segment: c.segment, Snowflake: c.snowflake, Sequences: c.sequences,
		WorkerID: c.workerID, EpochMs: c.epochMs, Layout: c.layout, Holder: c.holder,
		AdminToken: c.adminToken, StatusToken: c.statusToken, IDToken: c.idToken, TLSCert: c.tlsCert, TLSKey: c.tlsKey, PeerCA: c.peerCA, PeerMutualTLS: c.peerMTLS,
		RefreshTags: c.refreshTags, FailoverJump: c.failoverJump, RideThrough: cmp.Or(c.rideThrough, -1), CappedShare: c.cappedShare, RangeMax: c.rangeMax, WriteTimeout: c.writeTimeout, MaxConns: c.maxConns, IdleTimeout: c.idleTimeout, MaxWatches: c.maxWatches,
		MetricsTags: c.metricsTags.tags, OpaqueKeys: c.opaqueKeys.keys, PeriodGrace: time.Duration(c.periodGrace),
		AdvertiseAddr: c.advertiseAddr, SequenceLease: c.sequenceLease, SequenceKeysMax: int64(c.sequenceKeys), SnowflakeLease: c.snowflakeLease, ForwardTimeout: c.forwardTimeout,
		RequireDurable: c.requireDurable,
		Version:        version,
	}
}
