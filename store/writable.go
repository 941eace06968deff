package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// errNotWritable: the node answers but may not take writes now.
var errNotWritable = errors.New("node may not take writes")

// cluster is what writable found a node to be part of.
type cluster int

const (
	standalone  cluster = iota // a server of its own, or a source or replica
	galeraNode                 // a node of a MariaDB Galera cluster
	groupMember                // a member of a MySQL Group Replication group
)

// groupRecheck is how long a pooled connection to a member of a MySQL
// Group Replication group is used before the member's place in the group
// is read again (nodeConn.ResetSession).
const groupRecheck = time.Second

// writable checks that a node may take writes, and says what it is part
// of:
//
//   - not read only;
//   - on Galera (wsrep_on), ready, synced with its cluster (a donor of a
//     state transfer holds its writes until the transfer ends) and in the
//     primary component; a server configured as a node of a cluster
//     (wsrep_cluster_address) that runs with wsrep off is outside it;
//   - on MySQL Group Replication (group_replication_group_name set), an
//     ONLINE PRIMARY member of a group view in which a majority of the
//     members are ONLINE. A member that starts again boots outside its
//     group (group_replication_start_on_boot=OFF) and is writable there,
//     read_only off: what it takes is never seen by the group, whose new
//     primary hands the same numbers out again. A primary cut off in a
//     minority holds its writes until it is expelled.
func writable(ctx context.Context, c driver.Conn) (cluster, error) {
	q, ok := c.(driver.QueryerContext)
	if !ok {
		return standalone, nil
	}
	vars := map[string]string{}
	if err := queryRows(ctx, q, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "+
		"('read_only', 'wsrep_on', 'wsrep_cluster_address', 'group_replication_group_name')",
		func(v []driver.Value) { vars[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
		return standalone, err
	}
	if ro := vars["read_only"]; !strings.EqualFold(ro, "OFF") && ro != "0" {
		return standalone, fmt.Errorf("%w: read_only is %s", errNotWritable, ro)
	}
	if vars["group_replication_group_name"] != "" {
		return groupMember, primaryOfGroup(ctx, q)
	}
	if !strings.EqualFold(vars["wsrep_on"], "ON") {
		// Not a Galera node (MariaDB reports wsrep status even then),
		// unless it is configured as one and runs outside its cluster.
		if a := vars["wsrep_cluster_address"]; a != "" {
			return galeraNode, fmt.Errorf("%w: wsrep_cluster_address is %q but wsrep_on is %s: a node outside its cluster",
				errNotWritable, a, vars["wsrep_on"])
		}
		return standalone, nil
	}
	status := map[string]string{}
	if err := queryRows(ctx, q, "SHOW GLOBAL STATUS WHERE Variable_name IN "+
		"('wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_status')",
		func(v []driver.Value) { status[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
		return galeraNode, err
	}
	if r := status["wsrep_ready"]; !strings.EqualFold(r, "ON") {
		return galeraNode, fmt.Errorf("%w: wsrep_ready is %s", errNotWritable, r)
	}
	if st := status["wsrep_cluster_status"]; !strings.EqualFold(st, "Primary") {
		return galeraNode, fmt.Errorf("%w: wsrep_cluster_status is %s, not Primary", errNotWritable, st)
	}
	if st := status["wsrep_local_state_comment"]; !strings.EqualFold(st, "Synced") {
		return galeraNode, fmt.Errorf("%w: wsrep_local_state_comment is %s", errNotWritable, st)
	}
	return galeraNode, nil
}

// groupView reads a member's own state and role in its group's view, and
// how many members the view holds and how many of them are ONLINE.
const groupView = `SELECT MEMBER_ID = @@server_uuid, MEMBER_STATE, MEMBER_ROLE
FROM performance_schema.replication_group_members
WHERE CHANNEL_NAME = 'group_replication_applier'`

// primaryOfGroup checks that the member q is connected to is an ONLINE
// PRIMARY of a view in which a majority is ONLINE. In multi-primary mode
// every member is a PRIMARY.
func primaryOfGroup(ctx context.Context, q driver.QueryerContext) error {
	var (
		state, role   string
		online, total int
	)
	err := queryRows(ctx, q, groupView, func(v []driver.Value) {
		total++
		st := text(v[1])
		if strings.EqualFold(st, "ONLINE") {
			online++
		}
		if toInt(v[0]) == 1 {
			state, role = st, text(v[2])
		}
	})
	switch {
	case err != nil:
		// Not wrapped: the server's refusal of the read (performance_schema
		// off, no privilege) is no answer about the group.
		return fmt.Errorf("%w: a member of a Group Replication group whose place in it cannot be read "+
			"(performance_schema.replication_group_members): %v", errNotWritable, err)
	case state == "":
		return fmt.Errorf("%w: a member of a Group Replication group that is not in its view", errNotWritable)
	case !strings.EqualFold(state, "ONLINE"):
		return fmt.Errorf("%w: a Group Replication member that is %s, not ONLINE in its group", errNotWritable, state)
	case !strings.EqualFold(role, "PRIMARY"):
		return fmt.Errorf("%w: a Group Replication member that is a %s, not the PRIMARY", errNotWritable, role)
	case online*2 <= total:
		return fmt.Errorf("%w: a Group Replication primary that sees %d of %d members ONLINE, no majority",
			errNotWritable, online, total)
	}
	return nil
}

func queryRows(ctx context.Context, q driver.QueryerContext, query string, row func([]driver.Value)) error {
	rows, err := q.QueryContext(ctx, query, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	v := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(v); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		row(v)
	}
}

func text(v driver.Value) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}
