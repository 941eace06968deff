package mysqltest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
)

// promoteTimeout bounds how long a replica takes to apply what it has
// received before it is promoted.
const promoteTimeout = 60 * time.Second

// Pair is a source and one replica in GTID-based replication on 127.0.0.1,
// asynchronous or semi-synchronous. The replica runs read only
// (super_read_only) until Promote. Its methods may be called from several
// goroutines.
type Pair struct {
	Source, Replica *Server
	semisync        bool
}

// StartPair starts a source and a replica replicating from it and returns
// once the replica has connected. With semisync the source waits, at every
// commit, until the replica has the transaction in its relay log
// (rpl_semi_sync_source_wait_point=AFTER_SYNC, the default, with a timeout
// long enough never to fall back to asynchronous): a commit the source
// acknowledged is on the replica. options go to both servers' option
// files. tb.Cleanup stops both and removes their directories.
func StartPair(tb testing.TB, semisync bool, options ...string) *Pair {
	tb.Helper()
	ports, err := mariadbtest.FreePorts(2)
	if err != nil {
		tb.Fatalf("mysqltest: %v", err)
	}
	common := append([]string{"gtid_mode=ON", "enforce_gtid_consistency=ON"}, options...)
	source := append([]string{"server_id=1"}, common...)
	replica := append([]string{"server_id=2", "read_only=ON", "super_read_only=ON"}, common...)
	if semisync {
		source = append(source, "plugin-load-add=semisync_source.so",
			"loose_rpl_semi_sync_source_enabled=ON", "loose_rpl_semi_sync_source_timeout=3600000")
		replica = append(replica, "plugin-load-add=semisync_replica.so",
			"loose_rpl_semi_sync_replica_enabled=ON")
	}
	p := &Pair{semisync: semisync}
	p.Source = newServer(tb, "source", ports[0], mariadbtest.Place{}, source)
	p.Replica = newServer(tb, "replica", ports[1], mariadbtest.Place{}, replica)
	for _, s := range []*Server{p.Source, p.Replica} {
		if err := s.Start(); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := p.Replica.Exec(ctx, fmt.Sprintf("CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', "+
		"SOURCE_PORT=%d, SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, "+
		"GET_SOURCE_PUBLIC_KEY=1", p.Source.port), "START REPLICA"); err != nil {
		tb.Fatal(err)
	}
	if err := p.waitReceiving(ctx); err != nil {
		tb.Fatalf("%v\n%s", err, p.Replica.LogTail())
	}
	return p
}

// waitReceiving waits until the replica's receiver is connected to the
// source and, with semisync, the source counts it as a semi-synchronous
// replica.
func (p *Pair) waitReceiving(ctx context.Context) error {
	for {
		state, err := queryString(ctx, p.Replica,
			"SELECT SERVICE_STATE FROM performance_schema.replication_connection_status WHERE CHANNEL_NAME = ''")
		if err == nil && state == "ON" {
			if !p.semisync {
				return nil
			}
			n, err := queryString(ctx, p.Source,
				"SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Rpl_semi_sync_source_clients'")
			if err == nil && n != "0" && n != "" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mysqltest: the replica is not receiving from the source (state %q, %v)", state, err)
		case <-time.After(pollInterval):
		}
	}
}

// StopReplication stops the replica where it is (both its receiver and its
// applier), as a replica that falls behind: what the source commits from
// now on the replica lacks. It returns once what the replica received is
// applied.
func (p *Pair) StopReplication(ctx context.Context) error {
	if err := p.Replica.Exec(ctx, "STOP REPLICA IO_THREAD"); err != nil {
		return err
	}
	if err := p.applied(ctx); err != nil {
		return err
	}
	return p.Replica.Exec(ctx, "STOP REPLICA")
}

// Promote makes the replica a writable server of its own, as a failover
// tool does once the source is gone: it applies what it has received,
// forgets its source and turns read_only off.
func (p *Pair) Promote(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	if err := p.Replica.Exec(ctx, "STOP REPLICA IO_THREAD"); err != nil {
		return err
	}
	if err := p.applied(ctx); err != nil {
		return err
	}
	return p.Replica.Exec(ctx, "STOP REPLICA", "RESET REPLICA ALL",
		"SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF")
}

// applied waits until the replica has applied every transaction it
// received (or its applier is stopped with nothing left).
func (p *Pair) applied(ctx context.Context) error {
	for {
		received, err := queryString(ctx, p.Replica,
			"SELECT RECEIVED_TRANSACTION_SET FROM performance_schema.replication_connection_status WHERE CHANNEL_NAME = ''")
		if err != nil {
			return err
		}
		behind, err := queryString(ctx, p.Replica,
			"SELECT GTID_SUBTRACT(?, @@GLOBAL.gtid_executed)", received)
		if err != nil {
			return err
		}
		if behind == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mysqltest: the replica has not applied %s: %w", behind, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// Executed is the server's gtid_executed.
func (s *Server) Executed(ctx context.Context) (string, error) {
	return queryString(ctx, s, "SELECT @@GLOBAL.gtid_executed")
}

// queryString runs a query of one string on s; NULL is "", and the line
// breaks MySQL puts in a long GTID set are taken out.
func queryString(ctx context.Context, s *Server, q string, args ...any) (string, error) {
	db, err := s.Open()
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v sql.NullString
	if err := db.QueryRowContext(ctx, q, args...).Scan(&v); err != nil {
		return "", fmt.Errorf("mysqltest: %s: %s: %w", s.name, q, err)
	}
	return strings.ReplaceAll(v.String, "\n", ""), nil
}
