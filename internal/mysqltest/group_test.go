package mysqltest

import (
	"context"
	"testing"
	"time"
)

// TestGroup: a group of three starts with every member ONLINE and member 0
// its primary; its primary killed and started again runs outside the
// group, writable, while the others elect a primary of their own; it
// joins again.
func TestGroup(t *testing.T) {
	Require(t)
	g := StartGroup(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if p := g.Primary(ctx); p != 0 {
		t.Fatalf("primary %d, want member 0", p)
	}
	if err := g.Kill(0); err != nil {
		t.Fatal(err)
	}
	if err := g.StartOutside(0); err != nil {
		t.Fatal(err)
	}
	st, _, err := g.state(ctx, 0)
	if err != nil || st != Offline {
		t.Errorf("member 0 started again is %q (%v), want OFFLINE", st, err)
	}
	db, err := g.members[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ro int
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.super_read_only").Scan(&ro); err != nil || ro != 0 {
		t.Errorf("super_read_only of member 0 outside its group: %d (%v), want 0: writable", ro, err)
	}
	p, err := g.WaitPrimary(ctx)
	if err != nil || p == 0 {
		t.Fatalf("primary %d (%v), want member 1 or 2", p, err)
	}
	if err := g.Join(0); err != nil {
		t.Fatal(err)
	}
}
