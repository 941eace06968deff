package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/mysqltest"
)

// Sizes and timings of the MySQL shapes of TestMatrix.
const (
	groupMembers = 3
	// outsideAfter is how long after its kill a primary's mysqld starts
	// again, as a service manager would start it, outside its group
	// (group_replication_start_on_boot=OFF) and writable; outsideFor how
	// long it stays so before it joins again.
	outsideAfter = 6 * time.Second
	outsideFor   = 5 * time.Second
	// primaryPausedFor is how long a paused primary stays stopped: past
	// the group's suspicion (5 s) and its expel timeout (5 s), so that it
	// wakes up expelled, to a group with another primary.
	primaryPausedFor = 15 * time.Second
	// groupDownFor is how long every member of a group stays outside it,
	// writable, after the whole group was killed and started again,
	// before the most advanced bootstraps it anew.
	groupDownFor = 5 * time.Second
	// rejoinWithin bounds a member's return into its group.
	rejoinWithin = 90 * time.Second
)

// groupDeploy is the group_replication shape: a MySQL Group Replication
// group of three members in single-primary mode, instance i on member i
// first and the others after.
type groupDeploy struct {
	g   *mysqltest.Group
	clk clock

	mu     sync.Mutex // protects the fields below
	events []string   // what each fault did, and when, for the report
	// wrote lists the members whose executed transactions changed while
	// they ran outside their group: something wrote there.
	wrote []string
	// joinFailed lists the members that could not join again.
	joinFailed []string
	// elections are the times from a fault to a primary of a majority.
	elections []time.Duration
}

// deployGroup starts the group (with group_replication_consistency
// BEFORE_ON_PRIMARY_FAILOVER, as docs/high-availability.md asks) and a
// database on it.
func deployGroup(t *testing.T) *deployment {
	d, _ := startGroup(t, make([]mariadbtest.Place, groupMembers))
	return d
}

// startGroup starts the group with a member at each place, and the
// deployment with the faults of the group_replication shape.
func startGroup(t *testing.T, places []mariadbtest.Place) (*deployment, *groupDeploy) {
	started := time.Now()
	g := mysqltest.StartGroupIn(t, places, "loose_group_replication_consistency=BEFORE_ON_PRIMARY_FAILOVER")
	t.Logf("%d-member group ONLINE in %v", len(places), time.Since(started).Round(time.Millisecond))
	m := g.Members()
	const db = "leaf_matrix"
	ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
	defer cancel()
	if err := m[0].Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	leafCommand(t, "migrate", "--mysql-dsn", m[0].DSN(db))
	gd := &groupDeploy{g: g}
	return &deployment{
		// A worker lease of 60 s (renewed every 20 s, issuing stops 50 s
		// after the last renewal began) rides through an election of
		// 22 s, as docs/high-availability.md advises for a group.
		flags: func(i int) []string { return append(memberArgs(m, i, db), "--snowflake-lease", "60s") },
		home:  openDB(t, m[0].DSN(db)),
		begin: func(clk clock) { gd.clk = clk },
		faults: []matrixFault{
			{name: "primary_outside", as: "outage", do: gd.primaryOutside},
			{name: "primary_paused", as: "outage", do: gd.primaryPaused},
			{name: "group_restart", as: "outage", do: gd.groupRestart},
		},
		report: gd.report,
	}, gd
}

// memberArgs are the store flags of the instance of member i: its own
// member first, then the others in order.
func memberArgs(m []*mysqltest.Server, i int, db string) []string {
	addrs := []string{m[i].Addr()}
	for j := 1; j < len(m); j++ {
		addrs = append(addrs, m[(i+j)%len(m)].Addr())
	}
	return []string{"--mysql-dsn", m[i].DSN(db), "--mysql-addrs", strings.Join(addrs, ",")}
}

func (gd *groupDeploy) note(format string, args ...any) {
	gd.mu.Lock()
	defer gd.mu.Unlock()
	gd.events = append(gd.events, fmt.Sprintf("%.1fs ", gd.clk.now().Seconds())+fmt.Sprintf(format, args...))
}

// primary is the group's primary now, failing the test when there is none.
func (gd *groupDeploy) primary(m *matrixRun) int {
	ctx, cancel := context.WithTimeout(m.ctx, rejoinWithin)
	defer cancel()
	p, err := gd.g.WaitPrimary(ctx)
	if err != nil {
		m.t.Fatal(err)
	}
	return p
}

// watchPrimary polls, from now on, for a primary of a majority other than
// old (-1: any) that takes writes (super_read_only off: an elected member
// applies its backlog first) and returns a function that waits for it and
// says when it came.
func (gd *groupDeploy) watchPrimary(m *matrixRun, old int) func() time.Duration {
	done := make(chan time.Duration, 1)
	go func() {
		for m.ctx.Err() == nil {
			p := gd.g.Primary(m.ctx)
			if p >= 0 && p != old && gd.g.Writable(m.ctx, p) {
				done <- gd.clk.now()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		done <- gd.clk.now()
	}()
	return func() time.Duration { return <-done }
}

// executed reads member i's executed transactions; "" if it does not
// answer.
func (gd *groupDeploy) executed(m *matrixRun, i int) string {
	ctx, cancel := context.WithTimeout(m.ctx, 5*time.Second)
	defer cancel()
	s, err := gd.g.Executed(ctx, i)
	if err != nil {
		m.t.Logf("executed transactions of member%d: %v", i, err)
		return ""
	}
	return s
}

// outside checks that member i executed nothing since it read before,
// while it ran outside its group.
func (gd *groupDeploy) outside(m *matrixRun, i int, before string) {
	after := gd.executed(m, i)
	if before != "" && after != "" && after != before {
		gd.mu.Lock()
		gd.wrote = append(gd.wrote, fmt.Sprintf("member%d: %s then %s", i, before, after))
		gd.mu.Unlock()
	}
}

// join has member i join its group again, retrying while the group still
// holds its earlier run in its view.
func (gd *groupDeploy) join(m *matrixRun, i int, bootstrap bool) {
	deadline := time.Now().Add(rejoinWithin)
	for {
		var err error
		if bootstrap {
			err = gd.g.Bootstrap(i)
		} else {
			err = gd.g.Join(i)
		}
		if err == nil {
			gd.note("member%d ONLINE", i)
			return
		}
		if time.Now().After(deadline) || m.ctx.Err() != nil {
			gd.mu.Lock()
			errs := gd.g.Members()[i].LogLines("[ERROR]")
			gd.joinFailed = append(gd.joinFailed, fmt.Sprintf("member%d: %v; its log's last errors: %s", i, err,
				strings.Join(errs[max(0, len(errs)-3):], " | ")))
			gd.mu.Unlock()
			return
		}
		stopCtx, cancel := context.WithTimeout(m.ctx, 30*time.Second)
		_ = gd.g.Members()[i].Exec(stopCtx, "STOP GROUP_REPLICATION")
		cancel()
		time.Sleep(time.Second)
	}
}

// primaryOutside kills the primary with SIGKILL, starts its mysqld again
// outsideAfter later, outside the group and writable, and has it join
// again outsideFor after that: no instance may write to it meanwhile.
func (gd *groupDeploy) primaryOutside(m *matrixRun, w *matrixWindow) {
	p := gd.primary(m)
	w.victim, w.lost = fmt.Sprintf("member%d", p), allOwned(m)
	back := gd.watchPrimary(m, p)
	if err := gd.g.Kill(p); err != nil {
		m.t.Fatal(err)
	}
	killAt := gd.clk.now()
	gd.note("member%d (primary) killed", p)
	hold(m, killAt, outsideAfter)
	if err := gd.g.StartOutside(p); err != nil {
		m.t.Fatal(err)
	}
	before := gd.executed(m, p)
	gd.note("member%d started outside its group", p)
	hold(m, gd.clk.now(), outsideFor)
	gd.outside(m, p, before)
	w.back = back()
	gd.note("a primary of a majority again")
	gd.mu.Lock()
	gd.elections = append(gd.elections, w.back-killAt)
	gd.mu.Unlock()
	gd.join(m, p, false)
}

// primaryPaused stops the primary with SIGSTOP, as a link cut from it
// would to the others, until they have expelled it and elected another
// (primaryPausedFor at least): it wakes up to its old view, in which it is
// still the primary of all, learns that it was expelled, and joins again
// by itself (group_replication_autorejoin_tries) or is made to.
func (gd *groupDeploy) primaryPaused(m *matrixRun, w *matrixWindow) {
	p := gd.primary(m)
	w.victim, w.lost = fmt.Sprintf("member%d", p), allOwned(m)
	back := gd.watchPrimary(m, p)
	s := gd.g.Members()[p]
	if err := s.Pause(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { _ = s.Resume() })
	pausedAt := gd.clk.now()
	gd.note("member%d (primary) paused", p)
	w.back = back()
	gd.mu.Lock()
	gd.elections = append(gd.elections, w.back-pausedAt)
	gd.mu.Unlock()
	gd.note("a primary of a majority again")
	hold(m, pausedAt, primaryPausedFor)
	if err := s.Resume(); err != nil {
		m.t.Fatal(err)
	}
	gd.note("member%d continued", p)
	gd.backInGroup(m, p, rejoinWithin)
}

// backInGroup waits up to wait for member p to be back in its group by
// itself, and has it join otherwise.
func (gd *groupDeploy) backInGroup(m *matrixRun, p int, wait time.Duration) {
	ctx, cancel := context.WithTimeout(m.ctx, wait)
	err := gd.g.WaitInGroup(ctx, p)
	cancel()
	if err != nil {
		gd.note("member%d not back in the group by itself: made to join", p)
		gd.join(m, p, false)
	} else {
		gd.note("member%d back in the group by itself", p)
	}
}

// groupRestart kills every member with SIGKILL, starts each again outside
// the group, all writable, and after groupDownFor bootstraps the group
// anew on the member that holds the most of its history, the others
// joining it: no instance may write to any member meanwhile.
func (gd *groupDeploy) groupRestart(m *matrixRun, w *matrixWindow) {
	members := gd.g.Members()
	w.victim, w.lost = "every member", allOwned(m)
	for i := range members {
		if err := gd.g.Kill(i); err != nil {
			m.t.Fatal(err)
		}
	}
	killAt := gd.clk.now()
	gd.note("every member killed")
	hold(m, killAt, time.Second)
	var wg sync.WaitGroup
	for i := range members {
		wg.Go(func() {
			if err := gd.g.StartOutside(i); err != nil {
				m.t.Error(err)
			}
		})
	}
	wg.Wait()
	if m.t.Failed() {
		m.t.FailNow()
	}
	before := make([]string, len(members))
	for i := range members {
		before[i] = gd.executed(m, i)
	}
	gd.note("every member started outside the group")
	hold(m, gd.clk.now(), groupDownFor)
	for i := range members {
		gd.outside(m, i, before[i])
	}
	ctx, cancel := context.WithTimeout(m.ctx, 10*time.Second)
	first, err := gd.g.MostAdvanced(ctx)
	cancel()
	if err != nil {
		m.t.Fatal(err)
	}
	gd.note("member%d holds the most: the group bootstrapped on it", first)
	gd.join(m, first, true)
	w.back = gd.clk.now()
	gd.mu.Lock()
	gd.elections = append(gd.elections, w.back-killAt)
	gd.mu.Unlock()
	for i := range members {
		if i != first {
			gd.join(m, i, false)
		}
	}
}

// report checks what the group's faults did to its members: nothing
// written to a member outside its group, every member back in it, no
// member's log with a refusal of leaf's writes.
func (gd *groupDeploy) report(m *matrixRun) {
	r := newReport(m.t, "matrix_group_replication_members")
	gd.mu.Lock()
	defer gd.mu.Unlock()
	var el []string
	for _, e := range gd.elections {
		el = append(el, strconv.FormatInt(e.Milliseconds(), 10))
	}
	r.add("to_primary_ms", strings.Join(el, "/"))
	r.add("written_outside", len(gd.wrote))
	r.bound("nothing_written_outside", len(gd.wrote) == 0,
		"%d members executed transactions while outside their group%s", len(gd.wrote), listed(gd.wrote))
	r.bound("rejoined", len(gd.joinFailed) == 0, "%d members could not join their group again%s",
		len(gd.joinFailed), listed(gd.joinFailed))
	var refused []string
	for _, s := range gd.g.Members() {
		for _, l := range s.LogLines("[ERROR]") {
			if strings.Contains(l, "InnoDB storage engine") || strings.Contains(l, "leaf_") {
				refused = append(refused, s.Name()+": "+l)
			}
		}
	}
	r.add("refusal_lines", len(refused))
	r.bound("no_refusal_logged", len(refused) == 0, "%d ERROR lines of the members name a table of leaf's or one not InnoDB%s",
		len(refused), listed(refused))
	r.print()
	m.t.Logf("group_replication: %s", strings.Join(gd.events, "; "))
}
