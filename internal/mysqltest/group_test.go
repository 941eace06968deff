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

// TestGroupRestart: a group whose every member was killed under writes
// starts again outside the group; bootstrapped anew on the member that
// holds the most, the others join it.
func TestGroupRestart(t *testing.T) {
	Require(t)
	g := StartGroup(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := g.members[0].Exec(ctx, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	db, err := g.members[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan int)
	go func() {
		n := 0
		for wctx.Err() == nil {
			if _, err := db.ExecContext(wctx, "INSERT INTO d.t VALUES (?)", n); err == nil {
				n++
			}
		}
		done <- n
	}()
	time.Sleep(2 * time.Second)
	for i := range g.members {
		if err := g.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	t.Logf("%d rows written before the kill", <-done)
	for i := range g.members {
		if err := g.StartOutside(i); err != nil {
			t.Fatal(err)
		}
	}
	first, err := g.MostAdvanced(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.members {
		e, _ := g.Holds(ctx, i)
		t.Logf("member%d holds %s", i, e)
	}
	if err := g.Bootstrap(first); err != nil {
		t.Fatal(err)
	}
	for i := range g.members {
		if i == first {
			continue
		}
		if err := g.Join(i); err != nil {
			t.Errorf("%v\n%s", err, g.members[i].LogTail())
		}
	}
}
