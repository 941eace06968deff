package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/mysqltest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
)

// TestGroupReplication runs a store on the three members of a MySQL Group
// Replication group, as a user granted leaf's database and the group's
// view (performance_schema.replication_group_members), and checks where
// it writes:
//   - with every member ONLINE, on the primary, whatever member is listed
//     first;
//   - with the primary killed and started again outside the group (its
//     group replication does not start on boot), never on it, although it
//     is writable there: calls fail as unavailable until the others have
//     a primary, then land there. The killed member then joins again,
//     which it could not had it taken a write of its own;
//   - without the grant of the view, on no member, with a message that
//     names it;
//   - with the whole group killed and started again outside it, on no
//     member until the group is bootstrapped anew; the others then join;
//   - no member's log has an ERROR.
func TestGroupReplication(t *testing.T) {
	mysqltest.Require(t)
	g := mysqltest.StartGroup(t, 3)
	m := g.Members()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := m[0].Exec(ctx,
		"CREATE DATABASE leaf",
		"CREATE USER 'leaf'@'%' IDENTIFIED BY 'leaf-pw'",
		"GRANT ALL ON leaf.* TO 'leaf'@'%'",
		"CREATE USER 'blind'@'%' IDENTIFIED BY 'blind-pw'",
		"GRANT ALL ON leaf.* TO 'blind'@'%'",
		"GRANT SELECT ON performance_schema.replication_group_members TO 'leaf'@'%'",
	); err != nil {
		t.Fatal(err)
	}
	dsn := func(user, pw string, at *mysqltest.Server) string {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pw, "tcp", at.Addr(), "leaf"
		cfg.AllowNativePasswords = true
		return cfg.FormatDSN()
	}
	// Member 1, a secondary, first: read only, so the store moves on.
	addrs := []string{m[1].Addr(), m[0].Addr(), m[2].Addr()}
	s := openNodes(t, dsn("leaf", "leaf-pw", m[1]), addrs...)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	createTag(t, s, "t", 1, 10)
	if a, err := s.Allocate(ctx, "t", 0); err != nil || a.Start() != 1 {
		t.Fatalf("Allocate on a whole group = %+v, %v; want [1, 11)", a, err)
	}
	if got := s.Addr(); got != m[0].Addr() {
		t.Errorf("the store writes on %s, want the primary %s", got, m[0].Addr())
	}

	if blind, err := store.OpenMySQL(ctx, dsn("blind", "blind-pw", m[0]), store.Options{Timeout: time.Second}); err == nil {
		blind.Close()
		t.Error("a store opened as a user that cannot read the group's view")
	} else if !strings.Contains(err.Error(), "replication_group_members") {
		t.Errorf("open as a user that cannot read the group's view: %v; want the view named", err)
	}

	// The primary killed and started again outside the group, under a
	// store that lists it first.
	outside := openNodes(t, dsn("leaf", "leaf-pw", m[0]), m[0].Addr(), m[1].Addr(), m[2].Addr())
	if a, err := outside.Allocate(ctx, "t", 0); err != nil || a.Start() != 11 {
		t.Fatalf("Allocate on member 0 first = %+v, %v; want [11, 21)", a, err)
	}
	if err := g.Kill(0); err != nil {
		t.Fatal(err)
	}
	if err := g.StartOutside(0); err != nil {
		t.Fatal(err)
	}
	before, err := g.Executed(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	deadline := time.Now().Add(time.Minute)
	for {
		a, err := outside.Allocate(ctx, "t", 0)
		if err == nil {
			got = append(got, fmt.Sprintf("[%d, %d) on %s", a.Start(), a.MaxID, outside.Addr()))
			if outside.Addr() == m[0].Addr() {
				t.Errorf("a range taken on the member outside its group: %s", got[len(got)-1])
			}
			break
		}
		if !errors.Is(err, segment.ErrStoreUnavailable) {
			t.Fatalf("Allocate while the group elects a primary = %v; want unavailable", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no range within a minute of the primary's death: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if a, err := outside.Allocate(ctx, "t", 0); err != nil || a.Start() != 31 {
		t.Errorf("the next range = %+v, %v; want [31, 41): the group's row, not the outsider's", a, err)
	}
	after, err := g.Executed(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the member outside its group executed %s, then %s: the store wrote there", before, after)
	}
	if err := g.Join(0); err != nil {
		t.Errorf("the member written to by no one outside the group cannot join it again: %v", err)
	}

	// The whole group killed and started again, every member outside it
	// and writable, while the store keeps asking: it takes nothing until
	// the group is bootstrapped anew, and touches nothing that keeps the
	// others from joining it (MySQL logs an implicit TRUNCATE of a MEMORY
	// table, under a transaction of the member's own, the first time the
	// table is opened after a restart).
	for i := range m {
		if err := g.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range m {
		if err := g.StartOutside(i); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		if _, err := outside.Allocate(ctx, "t", 0); !errors.Is(err, segment.ErrStoreUnavailable) {
			t.Fatalf("Allocate with every member outside the group = %v; want unavailable", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	first, err := g.MostAdvanced(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Bootstrap(first); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		if _, err = outside.Allocate(ctx, "t", 0); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("no range from the group bootstrapped anew: %v", err)
	}
	// An instance started now reads every member's start.
	fresh := openNodes(t, dsn("leaf", "leaf-pw", m[first]), m[first].Addr(), m[(first+1)%3].Addr(), m[(first+2)%3].Addr())
	if _, err := fresh.Allocate(ctx, "t", 0); err != nil {
		t.Fatalf("Allocate from an instance started after the group's restart: %v", err)
	}
	for i := range m {
		if i == first {
			continue
		}
		if err := g.Join(i); err != nil {
			t.Errorf("member%d cannot join the group bootstrapped anew: %v", i, err)
		}
	}
	for _, mem := range m {
		if lines := mem.LogLines("[ERROR]"); len(lines) > 0 {
			t.Errorf("%s logged errors:\n%s", mem.Name(), strings.Join(lines, "\n"))
		}
	}
}
