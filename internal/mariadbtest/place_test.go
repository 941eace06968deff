package mariadbtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/netns"
)

// TestServerInNamespace starts a server in a network namespace of its own,
// reaches it at its address there, pauses it (a ping gets no answer) and
// resumes it (the same pool answers again).
func TestServerInNamespace(t *testing.T) {
	Require(t)
	netns.Require(t)
	n := netns.New(t)
	ns := n.Add(t, "db")
	s := StartServerIn(t, Place{Host: ns.IP, Exec: ns.Exec})
	if !strings.HasPrefix(s.Addr(), ns.IP+":") {
		t.Fatalf("Addr() = %s, want on %s", s.Addr(), ns.IP)
	}
	db, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return db.PingContext(ctx)
	}
	if err := ping(); err != nil {
		t.Fatalf("ping %s: %v", s.Addr(), err)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(0) // a new connection: the paused server sends no greeting
	if err := ping(); err == nil {
		t.Error("a paused server answered")
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(2)
	if err := ping(); err != nil {
		t.Errorf("ping after Resume: %v", err)
	}
	if err := n.Cut(ns, nil); err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(0)
	if err := ping(); err == nil {
		t.Error("a server cut off from the host answered")
	}
}
