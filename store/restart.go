package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leafid/leaf/segment"
)

// A database that can forget an acknowledged commit (durability.go) loses
// it only when it starts again: mysqld after a crash, every node of a
// Galera cluster after they all went down at once, the machine of a SQLite
// file after a power loss. A lost raise of max_id is a range handed out
// twice: the instance that received it serves it from its buffer, and
// another takes it again once the database is back. The fence of segment
// (fence.go) catches this only when the instance that holds the lost range
// is the first to load, and an instance started after the crash remembers
// nothing.
//
// So leaf keeps in the database itself what it last saw of each node's
// start (leaf_db_start: the node, the identity of its run and its start
// time, whether its settings said it keeps every commit), and before any
// number is taken from a connection to a node, that node's run is compared
// with the record. A run is known by an identity a restart cannot keep: a
// random id in leaf_db_run, a MEMORY table that every start of the server
// empties (startread.go), so that restarts a second apart, a crash loop,
// are each seen. Where a node has no such id (SQLite, whose "start" is its
// machine's boot; a database not migrated yet; a server that refuses the
// table's write), the start time stands for the run, within
// startTolerance.
// A node started again (or never recorded) while the record or its
// settings say it can forget moves every row that hands out numbers
// forward by the jump (Options.RestartJump, the failover jump) in the
// transaction that writes the new start: the raises of max_id and max_seq
// that the database may have lost are then below every range taken after.
// The record is written by a compare-and-set, so one instance does it per
// restart; if the transaction is itself lost in another crash, the record
// still differs and the next instance does it again. A node that starts
// again alone (a Galera node rejoining by state transfer) lost nothing;
// the jump then costs a billion of the int64 range, nothing else.
//
// On MySQL the check runs on every new connection of the pool, before the
// pool may use it (nodes.verify): a database that restarted broke every
// connection made before, so every statement runs on a connection whose
// node's start was checked. On SQLite, and on MySQL while leaf_db_start
// does not exist yet, takes runs it before the first number.

// startTolerance is how far two readings of one node's start (now minus
// Uptime, in whole seconds, each rounded its own way) may differ for the
// same run of the server, where no run id tells runs apart. A clock step
// larger than this reads as a restart, which costs a jump and nothing
// else.
const startTolerance = 2

// ErrRestartRace: the record of the starts moved under a check; the check
// reads it again.
var errRestartRace = errors.New("the record of the database's starts changed meanwhile")

// restartTries bounds how often one check reads the record again after
// losing the compare-and-set to another instance (or a certification
// conflict on Galera).
const restartTries = 5

// RestartJump is reported to Options.OnRestartJump by the instance that
// moved every row forward after a restart.
type RestartJump struct {
	// Nodes are the nodes found started again, or never recorded.
	Nodes []string
	// Jump is how far every row was moved.
	Jump int64
	// Rows and Sections count the rows of leaf_alloc and leaf_seq_section
	// moved.
	Rows, Sections int64
	// Why says in words what was found.
	Why string
}

// nodeStart is one reading of a node: its name, as the server says it
// (@@hostname:@@port; for SQLite the machine), the identity of its run
// ("" where it has none), the Unix second it started, and whether its
// settings keep every acknowledged commit.
type nodeStart struct {
	Node    string
	Run     string
	Started int64
	Durable bool
	Why     string
}

// startRow is one row of leaf_db_start.
type startRow struct {
	Started  int64
	Run      string
	Durable  bool
	JumpedMS int64
}

// sameRun tells whether a reading is of the run a row recorded: by the
// run ids where both have one, else by the start time.
func sameRun(r startRow, n nodeStart) bool {
	if r.Run != "" && n.Run != "" {
		return r.Run == n.Run
	}
	return abs(r.Started-n.Started) <= startTolerance
}

// restartPlan is what a reading of the nodes asks of the record.
type restartPlan struct {
	write     []nodeStart // rows to write, new or changed
	restarted []string    // nodes started again since recorded, or never recorded
	jump      bool        // every row must move forward first
	// hold: a node recorded before started again while it could forget,
	// so worker leases may have been forgotten too (lease.go, leaseHeld).
	// Not at the first sight of a node: nothing says a lease was taken.
	hold bool
	why  []string
}

// planRestart compares the readings with the record. A node whose start
// moved (or that has no row) has started again since leaf last saw it; if
// its row or its reading says it can forget, or it has no row while
// another node's does, every row must jump. A node whose start did not
// move but whose settings changed is written, without a jump.
func planRestart(record map[string]startRow, readings []nodeStart) restartPlan {
	var p restartPlan
	recordForgets := false
	for _, r := range record {
		recordForgets = recordForgets || !r.Durable
	}
	for _, n := range readings {
		r, ok := record[n.Node]
		same := ok && sameRun(r, n)
		if same && r.Durable == n.Durable && (r.Run != "" || n.Run == "") {
			continue
		}
		p.write = append(p.write, n)
		if same {
			continue
		}
		p.restarted = append(p.restarted, n.Node)
		switch {
		case ok && !r.Durable:
			p.jump, p.hold = true, true
			p.why = append(p.why, fmt.Sprintf("%s started again at %s (was %s) and could forget commits before",
				n.Node, unixText(n.Started), unixText(r.Started)))
		case !n.Durable:
			p.jump, p.hold = true, p.hold || ok || recordForgets
			p.why = append(p.why, fmt.Sprintf("%s started at %s and can forget commits: %s", n.Node, unixText(n.Started), n.Why))
		case !ok && recordForgets:
			p.jump, p.hold = true, true
			p.why = append(p.why, fmt.Sprintf("%s was never seen, and another node could forget commits", n.Node))
		}
	}
	return p
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func unixText(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339) }

// starts is a Store's side of the check: the starts it verified, and the
// settings of the check.
type starts struct {
	jump   int64                                     // 0: no check
	onJump func(RestartJump)                         // Options.OnRestartJump
	seen   atomic.Pointer[func(nodeStart) nodeStart] // a test's view of each reading; nil in production
	// onDisk: no number is taken before this time (Unix nanoseconds), when
	// the last record of a start is on disk (holdUntilOnDisk).
	onDisk atomic.Int64
	ok     atomic.Bool // a check succeeded since the store was opened

	mu       sync.Mutex          // serialises the checks; protects verified
	verified map[string]startRow // node -> the run a check found recorded
}

// verifiedLocked reports whether the run of n was found recorded. Called
// with st.mu held.
func (st *starts) verifiedLocked(n nodeStart) bool {
	v, ok := st.verified[n.Node]
	return ok && sameRun(v, n)
}

// view applies the test's view to a reading.
func (st *starts) view(n nodeStart) nodeStart {
	if f := st.seen.Load(); f != nil {
		return (*f)(n)
	}
	return n
}

// checkStarts compares readings with leaf_db_start on conn and writes what
// the plan asks, jump included, in one transaction; it reads the record
// again when another instance wrote it meanwhile.
func (s *Store) checkStarts(ctx context.Context, conn rawConn, readings []nodeStart) error {
	var err error
	for range restartTries {
		var j *RestartJump
		j, err = s.writeStarts(ctx, conn, readings)
		if err == nil {
			if j != nil && s.starts.onJump != nil {
				s.starts.onJump(*j)
			}
			if err = s.holdUntilOnDisk(ctx, conn, readings); err != nil {
				break
			}
			s.starts.verified = map[string]startRow{}
			for _, n := range readings {
				s.starts.verified[n.Node] = startRow{Started: n.Started, Run: n.Run}
			}
			s.starts.ok.Store(true)
			return nil
		}
		if !errors.Is(err, errRestartRace) && classify(err) != conflict {
			break
		}
	}
	return fmt.Errorf("check the database's start against leaf_db_start: %w", err)
}

// holdUntilOnDisk holds numbers back, on a MySQL node whose settings say it can
// forget, until the last write of leaf_db_start (a new run recorded, and
// the jump in its transaction) is on disk: InnoDB writes its log out every
// innodb_flush_log_at_timeout seconds (1) when it does not at each commit.
// A jump that another crash takes away has then handed out nothing: the
// next start jumps again from the same row, onto the same numbers, and
// none of them was issued. Without it, in a crash loop (starts a second
// apart), the ranges taken above a lost jump were taken again above its
// repetition. It sets starts.onDisk, which every statement that takes
// numbers waits for once it has run (callTaking); other statements go on
// meanwhile.
func (s *Store) holdUntilOnDisk(ctx context.Context, conn rawConn, readings []nodeStart) error {
	forgets := false
	for _, n := range readings {
		forgets = forgets || !n.Durable
	}
	if s.dialect != MySQL || !forgets {
		return nil
	}
	var written, every, now int64
	err := conn.query(ctx, `SELECT COALESCE(UNIX_TIMESTAMP(MAX(update_time)), 0), @@innodb_flush_log_at_timeout, UNIX_TIMESTAMP() FROM leaf_db_start`,
		func(v []any) { written, every, now = toInt(v[0]), toInt(v[1]), toInt(v[2]) })
	if err != nil {
		return err
	}
	// update_time and now are whole seconds: one more covers both roundings.
	if wait := time.Duration(written+every+1-now) * time.Second; wait > 0 {
		until := time.Now().Add(wait).UnixNano()
		for {
			old := s.starts.onDisk.Load()
			if old >= until || s.starts.onDisk.CompareAndSwap(old, until) {
				break
			}
		}
	}
	return nil
}

// callTaking is call for a statement that hands out numbers: once it has
// succeeded, its numbers are handed out only when the record of the
// database's last start is on disk (onDiskGate). Its connection may be
// the one whose check found the new start, after takes passed the gate.
func (s *Store) callTaking(ctx context.Context, safe bool, fn func(ctx context.Context) error) error {
	if err := s.call(ctx, safe, fn); err != nil {
		return err
	}
	return s.onDiskGate(ctx)
}

// onDiskGate waits until the record of the database's last start is on
// disk (holdUntilOnDisk), or fails as the store unavailable when ctx ends first.
func (s *Store) onDiskGate(ctx context.Context) error {
	wait := time.Until(time.Unix(0, s.starts.onDisk.Load()))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: the database started again and can forget commits: no number is taken until the record of its start is on disk, within %v: %w",
			segment.ErrStoreUnavailable, wait.Round(100*time.Millisecond), ctx.Err())
	}
}

// writeStarts is one try of checkStarts: the jump it made, or nil.
func (s *Store) writeStarts(ctx context.Context, conn rawConn, readings []nodeStart) (j *RestartJump, err error) {
	tx, err := conn.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	record, err := s.readStartRecord(ctx, conn)
	if err != nil {
		return nil, err
	}
	p := planRestart(record, readings)
	if len(p.write) == 0 {
		return nil, tx.Commit()
	}
	now, err := conn.int(ctx, s.nowMillis)
	if err != nil {
		return nil, err
	}
	if p.jump {
		if j, err = s.jumpRows(ctx, conn, p); err != nil {
			return nil, err
		}
	}
	for _, n := range p.write {
		if err := s.writeStart(ctx, conn, record, n, p.hold, now); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return j, nil
}

// readStartRecord reads leaf_db_start, locking its rows on MySQL (SQLite's
// transactions begin IMMEDIATE: the file is locked already).
func (s *Store) readStartRecord(ctx context.Context, conn rawConn) (map[string]startRow, error) {
	q := `SELECT node, started, run, durable, jumped_ms FROM leaf_db_start`
	if s.dialect == MySQL {
		q += ` FOR UPDATE`
	}
	record := map[string]startRow{}
	err := conn.query(ctx, q, func(v []any) {
		record[text(v[0])] = startRow{Started: toInt(v[1]), Run: text(v[2]), Durable: toInt(v[3]) != 0, JumpedMS: toInt(v[4])}
	})
	if err != nil {
		return nil, notMigratedError(err)
	}
	return record, nil
}

// jumpRows moves every row that hands out numbers forward by the jump:
// leaf_alloc's max_id (plain, ordered, formatted and opaque tags and their
// periods) and leaf_seq_section's max_seq. A row within the jump of the
// int64 maximum goes to the maximum: it is exhausted, never wrapped.
func (s *Store) jumpRows(ctx context.Context, conn rawConn, p restartPlan) (*RestartJump, error) {
	jump := s.starts.jump
	top := int64(math.MaxInt64) - jump
	rows, err := conn.exec(ctx, `UPDATE leaf_alloc SET max_id = CASE WHEN max_id > ? THEN ? ELSE max_id + ? END`,
		top, int64(math.MaxInt64), jump)
	if err != nil {
		return nil, fmt.Errorf("move leaf_alloc forward: %w", err)
	}
	sections, err := conn.exec(ctx, `UPDATE leaf_seq_section SET max_seq = CASE WHEN max_seq > ? THEN ? ELSE max_seq + ? END`,
		top, int64(math.MaxInt64), jump)
	if err != nil {
		return nil, fmt.Errorf("move leaf_seq_section forward: %w", err)
	}
	return &RestartJump{Nodes: slices.Clone(p.restarted), Jump: jump, Rows: rows, Sections: sections,
		Why: strings.Join(p.why, "; ")}, nil
}

// writeStart writes the reading n: a compare-and-set on the row read, or
// an insert that a row written meanwhile refuses. held dates the row's
// jumped_ms now, which holds worker leases back.
func (s *Store) writeStart(ctx context.Context, conn rawConn, record map[string]startRow, n nodeStart, held bool, now int64) error {
	durable := int64(0)
	if n.Durable {
		durable = 1
	}
	old, ok := record[n.Node]
	if !ok {
		jumpedMS := int64(0)
		if held {
			jumpedMS = now
		}
		_, err := conn.exec(ctx, `INSERT INTO leaf_db_start (node, started, run, durable, jumped_ms) VALUES (?, ?, ?, ?, ?)`,
			n.Node, n.Started, n.Run, durable, jumpedMS)
		if isDuplicateKey(err) {
			return errRestartRace
		}
		return err
	}
	jumpedMS := old.JumpedMS
	if held {
		jumpedMS = now
	}
	k, err := conn.exec(ctx, `UPDATE leaf_db_start SET started = ?, run = ?, durable = ?, jumped_ms = ? WHERE node = ? AND started = ? AND run = ? AND jumped_ms = ?`,
		n.Started, n.Run, durable, jumpedMS, n.Node, old.Started, old.Run, old.JumpedMS)
	if err == nil && k != 1 {
		return errRestartRace
	}
	return err
}

// startsChecked is the gate of takes: nil once a check succeeded (on
// MySQL, every connection is checked as it is made), else a check now.
func (s *Store) startsChecked(ctx context.Context) error {
	if s.starts.jump == 0 || s.starts.ok.Load() {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	conn, err := s.db.Conn(cctx)
	if err != nil {
		return fmt.Errorf("%w: %w", segment.ErrStoreUnavailable, err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c, idx, err := driverConn(dc)
		if err != nil {
			return err
		}
		return s.verifyStart(cctx, c, idx)
	})
	if err != nil {
		return fmt.Errorf("%w: no number is taken before the database's start is checked: %w", segment.ErrStoreUnavailable, err)
	}
	return nil
}
