package containers

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The driver's log of connections the server closed while it starts.
func init() { _ = mysql.SetLogger(nopLogger{}) }

type nopLogger struct{}

func (nopLogger) Print(...any) {}

// TestImage builds the Dockerfile's image and runs it as users do:
// read-only, as user 65532, with no shell; stopped by SIGTERM, which hands
// back the unused ids; a new container on the same volume (SQLite) or
// database (MySQL, or its stand-in) continues above every id before.
func TestImage(t *testing.T) {
	require(t)
	img := leafImage(t)
	t.Logf("docker build: %v (base images %s, %s)", buildTook.Round(time.Second), chosen().golang, chosen().runtime)

	fields := strings.Fields(docker(t, "image", "inspect", "-f", "{{.Size}} {{.Config.User}}", img))
	if len(fields) != 2 {
		t.Fatalf("image inspect: %q", fields)
	}
	size, _ := strconv.ParseInt(fields[0], 10, 64)
	t.Logf("image %s: %.1f MB, user %s", img, float64(size)/1e6, fields[1])
	if fields[1] != "65532:65532" {
		t.Errorf("the image runs as %q, want 65532:65532", fields[1])
	}
	for _, sh := range []string{"/bin/sh", "/bin/bash", "sh"} {
		if _, err := run(context.Background(), nil, "docker", "run", "--rm", "--label", label,
			"--entrypoint", sh, img, "-c", "true"); err == nil {
			t.Errorf("the image has a shell: %s runs", sh)
		}
	}

	t.Run("sqlite", func(t *testing.T) {
		vol := name("data")
		docker(t, "volume", "create", "--label", label, vol)
		t.Cleanup(func() { _, _ = run(context.Background(), nil, "docker", "volume", "rm", "-f", vol) })
		restarted(t, img, "-v", vol+":/data")
	})

	t.Run("mysql", func(t *testing.T) {
		network := name("net")
		docker(t, "network", "create", "--label", label, network)
		t.Cleanup(func() { _, _ = run(context.Background(), nil, "docker", "network", "rm", network) })
		db := startMySQL(t, network)
		t.Logf("%s ready", db)
		restarted(t, img, "--network", network, "-e", "LEAF_MYSQL_DSN=root:leaf@tcp(mysql:3306)/leaf")
	})
}

// restarted runs a leaf container with args, takes ids of every kind,
// stops it by SIGTERM, runs another with the same args, and checks that
// the second continues above the first.
func restarted(t *testing.T, img string, args ...string) {
	t.Helper()
	first, base := runLeaf(t, img, args...)
	setUp(t, base)
	before := take(t, base, 20)
	if ps := strings.Fields(docker(t, "top", first, "-eo", "pid,uid")); len(ps) != 4 || ps[3] != "65532" {
		t.Errorf("leaf's processes (pid, uid): %v, want one of uid 65532", ps)
	}
	stop(t, first)

	second, base := runLeaf(t, img, args...)
	after := take(t, base, 20)
	checkAbove(t, "after a new container", before, after)
	l := newLedger()
	l.addAll(before)
	l.addAll(after)
	l.checkOnce(t)
	stop(t, second)
}

// runLeaf starts a read-only leaf container of img with args, its port
// on 127.0.0.1, and waits for its first id; it returns the container and
// leaf's address.
func runLeaf(t *testing.T, img string, args ...string) (string, string) {
	t.Helper()
	c := name("leaf")
	start := time.Now()
	argv := append([]string{"run", "-d", "--name", c, "--label", label, "--read-only",
		"-p", "127.0.0.1::8080", "-e", "LEAF_ADMIN_TOKEN=" + token}, args...)
	docker(t, append(argv, img)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s logs:\n%s", c, tail(logsOf(t, c), 4000))
		}
		_, _ = run(context.Background(), nil, "docker", "rm", "-f", "-v", c)
	})
	port := docker(t, "port", c, "8080/tcp")
	port = port[strings.LastIndex(port, ":")+1:]
	if i := strings.IndexByte(port, '\n'); i >= 0 {
		port = port[:i]
	}
	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := getID(context.Background(), base+"/api/snowflake/get"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%s: no id within 2 minutes: %v", c, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%s: first id %v after docker run", c, time.Since(start).Round(time.Millisecond))
	waitReady(t, base, time.Minute)
	return c, base
}

// stop stops container c by SIGTERM and checks that leaf exited cleanly
// and handed back its unused ids.
func stop(t *testing.T, c string) {
	t.Helper()
	docker(t, "stop", "-t", "30", c)
	if code := docker(t, "inspect", "-f", "{{.State.ExitCode}}", c); code != "0" {
		t.Errorf("%s exited with %s after SIGTERM, want 0", c, code)
	}
	if logs := logsOf(t, c); !strings.Contains(logs, "handed back") {
		t.Errorf("%s: no hand-back in its log after SIGTERM:\n%s", c, tail(logs, 2000))
	}
}

// startMySQL runs the MySQL image chosen on network, as host mysql, with
// database leaf and root's password leaf, and waits until it answers SQL
// on its port published on 127.0.0.1.
func startMySQL(t *testing.T, network string) string {
	t.Helper()
	c := name("mysql")
	docker(t, "run", "-d", "--name", c, "--label", label, "--network", network, "--network-alias", "mysql",
		"-e", "MYSQL_ROOT_PASSWORD=leaf", "-e", "MYSQL_DATABASE=leaf", "-p", "127.0.0.1::3306", chosen().mysql)
	t.Cleanup(func() { _, _ = run(context.Background(), nil, "docker", "rm", "-f", "-v", c) })
	port := docker(t, "port", c, "3306/tcp")
	port = strings.Fields(port)[0]
	port = port[strings.LastIndex(port, ":")+1:]
	db, err := sql.Open("mysql", fmt.Sprintf("root:leaf@tcp(127.0.0.1:%s)/leaf?timeout=2s", port))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (%s) does not answer: %v", c, chosen().mysql, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
