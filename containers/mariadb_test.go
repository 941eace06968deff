package containers

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// mariadbImage is the image make images builds from Debian's packages.
const mariadbImage = "leaf-local/mariadb:10.11"

// TestMariaDBImage holds the MariaDB image of make images to the official
// images' variables: a database and a user of its own, an empty or a
// generated root password, the scripts of /docker-entrypoint-initdb.d, no
// password option at all refused; and its health check, which passes once
// the server answers over TCP.
func TestMariaDBImage(t *testing.T) {
	require(t)
	if !chosen().local {
		t.Skip("LEAF_TEST_IMAGES is not local: the images of make images are not in use")
	}

	t.Run("database and user", func(t *testing.T) {
		c, port := startDB(t, nil, "MYSQL_ROOT_PASSWORD=rootpw", "MYSQL_DATABASE=app",
			"MYSQL_USER=appuser", "MYSQL_PASSWORD=apppw")
		waitHealthy(t, c, 2*time.Minute)
		query(t, port, "appuser:apppw", "app", "CREATE TABLE t (id INT)")
		if err := tryQuery(port, "appuser:apppw", "mysql", "SELECT 1"); err == nil {
			t.Error("the user reaches a database it was not given")
		}
		query(t, port, "root:rootpw", "", "SELECT 1")
		if err := tryQuery(port, "root", "", "SELECT 1"); err == nil {
			t.Error("root connects over TCP with no password")
		}
	})

	t.Run("empty root password", func(t *testing.T) {
		c, port := startDB(t, nil, "MYSQL_ALLOW_EMPTY_PASSWORD=yes")
		waitHealthy(t, c, 2*time.Minute)
		query(t, port, "root", "", "SELECT 1")
	})

	t.Run("random root password, MARIADB_ spelling", func(t *testing.T) {
		c, port := startDB(t, nil, "MARIADB_RANDOM_ROOT_PASSWORD=1")
		waitHealthy(t, c, 2*time.Minute)
		logs := logsOf(t, c)
		m := regexp.MustCompile(`GENERATED ROOT PASSWORD: (\S+)`).FindStringSubmatch(logs)
		if m == nil {
			t.Fatalf("no generated password in the log:\n%s", tail(logs, 1500))
		}
		query(t, port, "root:"+m[1], "", "SELECT 1")
	})

	t.Run("init scripts", func(t *testing.T) {
		dir := t.TempDir()
		script := "CREATE TABLE seeded (id INT); INSERT INTO seeded VALUES (42);"
		if err := os.WriteFile(filepath.Join(dir, "1-seed.sql"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		c, port := startDB(t, func(c string) {
			docker(t, "cp", filepath.Join(dir, "1-seed.sql"), c+":/docker-entrypoint-initdb.d/1-seed.sql")
		}, "MYSQL_ROOT_PASSWORD=pw", "MYSQL_DATABASE=app")
		waitHealthy(t, c, 2*time.Minute)
		db := open(t, port, "root:pw", "app")
		var v int
		if err := db.QueryRow("SELECT id FROM seeded").Scan(&v); err != nil || v != 42 {
			t.Errorf("the init script's row: %d, %v", v, err)
		}
	})

	t.Run("no password option", func(t *testing.T) {
		c := name("db")
		docker(t, "create", "--name", c, "--label", label, mariadbImage)
		t.Cleanup(func() { _, _ = run(context.Background(), nil, "docker", "rm", "-f", "-v", c) })
		docker(t, "start", c)
		if code := docker(t, "wait", c); code == "0" {
			t.Error("the image started with no password option")
		}
		logs := logsOf(t, c)
		if !strings.Contains(logs, "MYSQL_ROOT_PASSWORD") {
			t.Errorf("the refusal does not name the variables:\n%s", tail(logs, 800))
		}
	})
}

// startDB creates a container of the MariaDB image with env, lets before
// act on it (docker cp), starts it, and returns it with its port on
// 127.0.0.1.
func startDB(t *testing.T, before func(c string), env ...string) (string, string) {
	t.Helper()
	c := name("db")
	args := []string{"create", "--name", c, "--label", label, "-p", "127.0.0.1::3306"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	docker(t, append(args, mariadbImage)...)
	t.Cleanup(func() { _, _ = run(context.Background(), nil, "docker", "rm", "-f", "-v", c) })
	if before != nil {
		before(c)
	}
	docker(t, "start", c)
	port := strings.Fields(docker(t, "port", c, "3306/tcp"))[0]
	return c, port[strings.LastIndex(port, ":")+1:]
}

func dsn(port, userPass, db string) string {
	return fmt.Sprintf("%s@tcp(127.0.0.1:%s)/%s?timeout=3s", userPass, port, db)
}

func open(t *testing.T, port, userPass, db string) *sql.DB {
	t.Helper()
	d, err := sql.Open("mysql", dsn(port, userPass, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func tryQuery(port, userPass, db, q string) error {
	d, err := sql.Open("mysql", dsn(port, userPass, db))
	if err != nil {
		return err
	}
	defer d.Close()
	_, err = d.Exec(q)
	return err
}

func query(t *testing.T, port, userPass, db, q string) {
	t.Helper()
	if err := tryQuery(port, userPass, db, q); err != nil {
		t.Errorf("%s as %s: %v", q, strings.SplitN(userPass, ":", 2)[0], err)
	}
}
