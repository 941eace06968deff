package mysqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
)

// joinTimeout bounds how long a member takes to be ONLINE once it asked
// to join or bootstrap.
const joinTimeout = 90 * time.Second

// Group is a MySQL Group Replication group in single-primary mode, on
// 127.0.0.1. Its members do not start group replication on boot
// (group_replication_start_on_boot=OFF, as automation that rejoins members
// itself sets it): a member started again runs outside the group, and
// writable, until Join. Its methods may be called from several goroutines.
type Group struct {
	name    string // the group's UUID
	members []*Server
}

// Member states, as performance_schema.replication_group_members has them.
const (
	Online      = "ONLINE"
	Recovering  = "RECOVERING"
	Offline     = "OFFLINE"
	Unreachable = "UNREACHABLE"
	Primary     = "PRIMARY"
)

// StartGroup starts a group of n members on 127.0.0.1 and returns once
// every member is ONLINE: member 0 bootstraps it, the others join one
// after another (by distributed recovery from a member, as root). options
// go to every member's option file. tb.Cleanup stops every member and
// removes its directory.
func StartGroup(tb testing.TB, n int, options ...string) *Group {
	tb.Helper()
	return StartGroupIn(tb, make([]mariadbtest.Place, n), options...)
}

// StartGroupIn is StartGroup with a member at each place: placed in a
// network namespace of its own, a member binds its place's address there,
// for its clients and for the group's own traffic.
func StartGroupIn(tb testing.TB, places []mariadbtest.Place, options ...string) *Group {
	tb.Helper()
	n := len(places)
	ports, err := mariadbtest.FreePorts(2 * n)
	if err != nil {
		tb.Fatalf("mysqltest: %v", err)
	}
	g := &Group{name: newUUID()}
	var seeds []string
	for i, pl := range places {
		host := pl.Host
		if host == "" {
			host = "127.0.0.1"
		}
		seeds = append(seeds, host+":"+strconv.Itoa(ports[n+i]))
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	g.members = make([]*Server, n)
	for i := range n {
		opts := append([]string{
			"server_id=" + strconv.Itoa(i+1),
			"gtid_mode=ON",
			"enforce_gtid_consistency=ON",
			"plugin-load-add=group_replication.so",
			"loose_group_replication_group_name=" + g.name,
			"loose_group_replication_start_on_boot=OFF",
			"loose_group_replication_local_address=" + seeds[i],
			"loose_group_replication_group_seeds=" + strings.Join(seeds, ","),
			"loose_group_replication_bootstrap_group=OFF",
			"loose_group_replication_recovery_get_public_key=ON",
		}, options...)
		wg.Go(func() {
			s := newServer(tb, "member"+strconv.Itoa(i), ports[i], places[i], opts)
			mu.Lock()
			g.members[i] = s
			mu.Unlock()
		})
	}
	wg.Wait()
	if tb.Failed() {
		tb.FailNow()
	}
	tb.Cleanup(g.stopAll)
	for i, s := range g.members {
		if err := s.Start(); err != nil {
			tb.Fatal(err)
		}
		var err error
		if i == 0 {
			err = g.Bootstrap(i)
		} else {
			err = g.Join(i)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	return g
}

// Members are the group's servers, member i at index i.
func (g *Group) Members() []*Server { return g.members }

// Bootstrap starts the group anew on member i, which must run outside any
// group, and waits until it is ONLINE.
func (g *Group) Bootstrap(i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), joinTimeout)
	defer cancel()
	if err := g.members[i].Exec(ctx, "SET GLOBAL group_replication_bootstrap_group = ON",
		"START GROUP_REPLICATION", "SET GLOBAL group_replication_bootstrap_group = OFF"); err != nil {
		return err
	}
	return g.WaitOnline(ctx, i)
}

// Join has member i, running outside the group, join it, and waits until
// it is ONLINE. A member that took writes outside the group cannot
// (its transactions are not the group's): that is the error.
func (g *Group) Join(i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), joinTimeout)
	defer cancel()
	if err := g.members[i].Exec(ctx, "START GROUP_REPLICATION USER='root', PASSWORD=''"); err != nil {
		return err
	}
	return g.WaitOnline(ctx, i)
}

// Kill kills member i with SIGKILL.
func (g *Group) Kill(i int) error { return g.members[i].Kill() }

// StartOutside starts member i again, killed or stopped before: it runs
// outside the group, writable, until Join.
func (g *Group) StartOutside(i int) error { return g.members[i].Start() }

// MemberState is one row of a member's view of its group.
type MemberState struct {
	Port        int
	State, Role string
}

// View is member i's view of its group.
func (g *Group) View(ctx context.Context, i int) ([]MemberState, error) {
	db, err := g.members[i].Open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return view(ctx, db)
}

func view(ctx context.Context, db *sql.DB) ([]MemberState, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(qctx, `SELECT MEMBER_PORT, MEMBER_STATE, MEMBER_ROLE
FROM performance_schema.replication_group_members WHERE CHANNEL_NAME = 'group_replication_applier'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MemberState
	for rows.Next() {
		var m MemberState
		var port sql.NullInt64
		if err := rows.Scan(&port, &m.State, &m.Role); err != nil {
			return nil, err
		}
		m.Port = int(port.Int64)
		out = append(out, m)
	}
	return out, rows.Err()
}

// state is member i's own state and role in its view.
func (g *Group) state(ctx context.Context, i int) (state, role string, err error) {
	v, err := g.View(ctx, i)
	if err != nil {
		return "", "", err
	}
	for _, m := range v {
		if m.Port == g.members[i].port {
			return m.State, m.Role, nil
		}
	}
	return "", "", nil
}

// WaitOnline waits until member i is ONLINE in its view.
func (g *Group) WaitOnline(ctx context.Context, i int) error {
	var st string
	var err error
	for {
		st, _, err = g.state(ctx, i)
		if err == nil && st == Online {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mysqltest: %s is %q, not ONLINE: %w (last error: %v)\n%s",
				g.members[i].name, st, ctx.Err(), err, g.members[i].LogTail())
		case <-time.After(pollInterval):
		}
	}
}

// askTimeout bounds one member's answer to Primary: a member that does
// not answer (paused, say) leaves time to ask the others.
const askTimeout = 2 * time.Second

// WaitInGroup waits until the primary of a majority, another member than
// i, sees member i ONLINE: back in the group, not merely in a view of its
// own that it has not yet learned is stale (a member paused past its
// expulsion wakes up to one, in which it may still be the primary).
func (g *Group) WaitInGroup(ctx context.Context, i int) error {
	for {
		if p := g.primary(ctx, i); p >= 0 {
			actx, cancel := context.WithTimeout(ctx, askTimeout)
			v, err := g.View(actx, p)
			cancel()
			for _, m := range v {
				if err == nil && m.Port == g.members[i].port && m.State == Online {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mysqltest: %s not ONLINE in the view of a primary of a majority: %w", g.members[i].name, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// Primary is the member that is the ONLINE PRIMARY of a view in which a
// majority is ONLINE, as that member sees it; -1 when there is none now.
func (g *Group) Primary(ctx context.Context) int { return g.primary(ctx, -1) }

// primary is Primary, not asking member except.
func (g *Group) primary(ctx context.Context, except int) int {
	for i := range g.members {
		if i == except {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		v, err := g.View(actx, i)
		cancel()
		if err != nil {
			continue
		}
		online, own := 0, false
		for _, m := range v {
			if m.State == Online {
				online++
			}
			if m.Port == g.members[i].port && m.State == Online && m.Role == Primary {
				own = true
			}
		}
		if own && 2*online > len(v) {
			return i
		}
	}
	return -1
}

// WaitPrimary waits until some member is the primary of a majority
// (Primary) and returns it.
func (g *Group) WaitPrimary(ctx context.Context) (int, error) {
	for {
		if p := g.Primary(ctx); p >= 0 {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("mysqltest: no primary of a majority: %w", ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// Writable says whether member i takes writes now: a primary just
// elected keeps super_read_only on until it has applied what it received
// from the old one.
func (g *Group) Writable(ctx context.Context, i int) bool {
	db, err := g.members[i].Open()
	if err != nil {
		return false
	}
	defer db.Close()
	actx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	var ro int
	return db.QueryRowContext(actx, "SELECT @@GLOBAL.super_read_only").Scan(&ro) == nil && ro == 0
}

// Executed is member i's gtid_executed.
func (g *Group) Executed(ctx context.Context, i int) (string, error) {
	return g.members[i].Executed(ctx)
}

// Holds is member i's executed transactions with those it received and
// has not applied yet (the group's applier channel): what it holds of
// the group's history, which a group restarted whole is bootstrapped
// anew from the member that holds the most of.
func (g *Group) Holds(ctx context.Context, i int) (string, error) {
	db, err := g.members[i].Open()
	if err != nil {
		return "", err
	}
	defer db.Close()
	var executed, received string
	err = db.QueryRowContext(ctx, `SELECT @@GLOBAL.gtid_executed, COALESCE((SELECT RECEIVED_TRANSACTION_SET
FROM performance_schema.replication_connection_status WHERE CHANNEL_NAME = 'group_replication_applier'), '')`).Scan(&executed, &received)
	if err != nil {
		return "", err
	}
	// A GTID set's text joins sets with commas: the union.
	var sets []string
	for _, s := range []string{executed, received} {
		if s = strings.ReplaceAll(s, "\n", ""); s != "" {
			sets = append(sets, s)
		}
	}
	return strings.Join(sets, ","), nil
}

// MostAdvanced is the member whose history (Holds) holds every other's,
// the one to bootstrap a group restarted whole on.
func (g *Group) MostAdvanced(ctx context.Context) (int, error) {
	sets := make([]string, len(g.members))
	for i := range sets {
		s, err := g.Holds(ctx, i)
		if err != nil {
			return -1, err
		}
		sets[i] = s
	}
	db, err := g.members[0].Open()
	if err != nil {
		return -1, err
	}
	defer db.Close()
	for i := range sets {
		all := true
		for j := range sets {
			var sub int
			if err := db.QueryRowContext(ctx, "SELECT GTID_SUBSET(?, ?)", sets[j], sets[i]).Scan(&sub); err != nil {
				return -1, err
			}
			all = all && sub == 1
		}
		if all {
			return i, nil
		}
	}
	return -1, fmt.Errorf("mysqltest: no member holds every other's transactions: %q", sets)
}

// stopAll shuts every running member down at once.
func (g *Group) stopAll() {
	var wg sync.WaitGroup
	for _, s := range g.members {
		if s != nil {
			wg.Go(func() { _ = s.shutdown(10 * time.Second) })
		}
	}
	wg.Wait()
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
