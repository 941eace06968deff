package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
)

// errNotWritable: the node answers but may not take writes now.
var errNotWritable = errors.New("node may not take writes")

// writable checks that a node may take writes: not read only, and, on
// Galera, ready and synced with its cluster (a donor of a state transfer
// holds its writes until the transfer ends).
func writable(ctx context.Context, c driver.Conn) error {
	q, ok := c.(driver.QueryerContext)
	if !ok {
		return nil
	}
	vars := map[string]string{}
	if err := queryRows(ctx, q, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('read_only', 'wsrep_on')",
		func(v []driver.Value) { vars[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
		return err
	}
	if ro := vars["read_only"]; !strings.EqualFold(ro, "OFF") && ro != "0" {
		return fmt.Errorf("%w: read_only is %s", errNotWritable, ro)
	}
	if !strings.EqualFold(vars["wsrep_on"], "ON") {
		return nil // not a Galera node (MariaDB reports wsrep status even then)
	}
	status := map[string]string{}
	if err := queryRows(ctx, q, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment')",
		func(v []driver.Value) { status[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
		return err
	}
	if r := status["wsrep_ready"]; !strings.EqualFold(r, "ON") {
		return fmt.Errorf("%w: wsrep_ready is %s", errNotWritable, r)
	}
	if st := status["wsrep_local_state_comment"]; !strings.EqualFold(st, "Synced") {
		return fmt.Errorf("%w: wsrep_local_state_comment is %s", errNotWritable, st)
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
