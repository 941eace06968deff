package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
)

// node is a standalone server with a leaf database, a user that read_only
// applies to (root is exempt) and a tag "t" whose numbering tells the
// servers apart: node i hands out ids from (i+1) million.
type node struct {
	srv *mariadbtest.Server
	dsn string // as the leaf user
}

func startNode(t *testing.T, i int) node {
	t.Helper()
	srv := mariadbtest.StartServer(t)
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, q := range []string{
		"CREATE DATABASE leaf",
		"CREATE USER 'leaf'@'%' IDENTIFIED BY 'leaf-pw'",
		"GRANT ALL ON leaf.* TO 'leaf'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "leaf", "leaf-pw", "tcp", srv.Addr(), "leaf"
	n := node{srv: srv, dsn: cfg.FormatDSN()}
	s := openNodes(t, n.dsn)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	createTag(t, s, "t", int64(i+1)*1_000_000, 10)
	return n
}

// readOnly turns read_only on or off on the node's server.
func (n node) readOnly(t *testing.T, on bool) {
	t.Helper()
	n.globalExec(t, "SET GLOBAL read_only = ?", on)
}

// globalExec runs a statement as root on the node's server.
func (n node) globalExec(t *testing.T, query string, args ...any) {
	t.Helper()
	root, err := sql.Open("mysql", n.srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := root.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

func openNodes(t *testing.T, dsn string, addrs ...string) *store.Store {
	t.Helper()
	s, err := store.OpenMySQL(context.Background(), dsn, store.Options{Addrs: addrs, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// from tells which node a range came from.
func from(a segment.Allocation) int { return int(a.Start()/1_000_000) - 1 }

func TestNodes(t *testing.T) {
	mariadbtest.Require(t)
	ctx := context.Background()
	n0, n1 := startNode(t, 0), startNode(t, 1)

	t.Run("the first node that answers", func(t *testing.T) {
		s := openNodes(t, n0.dsn, closedAddr(t), n0.srv.Addr(), n1.srv.Addr())
		a, err := s.Allocate(ctx, "t", 0)
		if err != nil || from(a) != 0 || s.Addr() != n0.srv.Addr() {
			t.Fatalf("Allocate = %+v, %v on %s; want node 0 (%s)", a, err, s.Addr(), n0.srv.Addr())
		}
	})

	t.Run("a read-only node is passed over", func(t *testing.T) {
		n0.readOnly(t, true)
		defer n0.readOnly(t, false)
		s := openNodes(t, n0.dsn, n0.srv.Addr(), n1.srv.Addr())
		a, err := s.Allocate(ctx, "t", 0)
		if err != nil || from(a) != 1 {
			t.Fatalf("Allocate = %+v, %v; want a range of node 1", a, err)
		}
	})

	t.Run("a node turned read-only in use is left without a failed call", func(t *testing.T) {
		s := openNodes(t, n0.dsn, n0.srv.Addr(), n1.srv.Addr())
		if a, err := s.Allocate(ctx, "t", 0); err != nil || from(a) != 0 {
			t.Fatalf("Allocate = %+v, %v; want node 0", a, err)
		}
		n0.readOnly(t, true)
		defer n0.readOnly(t, false)
		a, err := s.Allocate(ctx, "t", 0)
		if err != nil || from(a) != 1 {
			t.Fatalf("Allocate after node 0 turned read-only = %+v, %v; want a range of node 1", a, err)
		}
		if !s.Health().Up {
			t.Fatal("moving to another node took the store down")
		}
	})

	t.Run("a node whose transactions are read only is left without a failed call", func(t *testing.T) {
		// Error 1792 on MySQL and MariaDB alike; the node's read_only is off,
		// so only the statement's refusal tells.
		n0.globalExec(t, "SET GLOBAL TRANSACTION READ ONLY")
		defer n0.globalExec(t, "SET GLOBAL TRANSACTION READ WRITE")
		s := openNodes(t, n0.dsn, n0.srv.Addr(), n1.srv.Addr())
		a, err := s.Allocate(ctx, "t", 0)
		if err != nil || from(a) != 1 {
			t.Fatalf("Allocate with node 0's transactions read only = %+v, %v; want a range of node 1", a, err)
		}
		if !s.Health().Up {
			t.Fatal("moving to another node took the store down")
		}
	})

	t.Run("a single read-only node keeps the store down until it takes writes", func(t *testing.T) {
		var (
			mu      sync.Mutex
			changes []bool
		)
		s, err := store.OpenMySQL(ctx, n0.dsn, store.Options{Timeout: time.Second, OnHealth: func(h store.Health) {
			mu.Lock()
			changes = append(changes, h.Up)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Allocate(ctx, "t", 0); err != nil {
			t.Fatal(err)
		}
		n0.readOnly(t, true)
		if _, err := s.Allocate(ctx, "t", 0); !errors.Is(err, segment.ErrStoreUnavailable) {
			t.Fatalf("Allocate on a read-only node = %v, want ErrStoreUnavailable", err)
		}
		time.Sleep(time.Second) // five probes: none may say up while writes fail
		mu.Lock()
		got := append([]bool(nil), changes...)
		mu.Unlock()
		if len(got) != 1 || got[0] {
			t.Fatalf("health changes %v while the node is read only, want one: down", got)
		}
		n0.readOnly(t, false)
		deadline := time.Now().Add(2 * time.Second)
		for !s.Health().Up {
			if time.Now().After(deadline) {
				t.Fatal("the store did not come back up once the node took writes")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := s.Allocate(ctx, "t", 0); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a node that dies", func(t *testing.T) {
		s := openNodes(t, n0.dsn, n0.srv.Addr(), n1.srv.Addr())
		if a, err := s.Allocate(ctx, "t", 0); err != nil || from(a) != 0 {
			t.Fatalf("Allocate = %+v, %v; want node 0", a, err)
		}
		if err := n0.srv.Kill(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		var (
			a   segment.Allocation
			err error
		)
		for time.Since(killed) < 10*time.Second {
			if a, err = s.Allocate(ctx, "t", 0); err == nil {
				break
			}
			if !errors.Is(err, segment.ErrStoreUnavailable) {
				t.Fatalf("Allocate after node 0 died: %v, want ErrStoreUnavailable or a range", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		took := time.Since(killed)
		if err != nil || from(a) != 1 {
			t.Fatalf("Allocate after node 0 died = %+v, %v; want a range of node 1", a, err)
		}
		if took > 2*time.Second {
			t.Fatalf("the first range from node 1 came %v after node 0 died, want within 2s", took)
		}
		t.Logf("served from node 1 %v after node 0 died", took.Round(time.Millisecond))

		// Node 0 comes back: the store stays where it is.
		if err := n0.srv.Start(); err != nil {
			t.Fatal(err)
		}
		if a, err := s.Allocate(ctx, "t", 0); err != nil || from(a) != 1 {
			t.Fatalf("Allocate after node 0 came back = %+v, %v; want node 1 still", a, err)
		}
	})
}
