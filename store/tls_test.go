package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/tlsfiles"
)

// readable copies files into a directory the database's user may read,
// and returns their new paths.
func readable(t *testing.T, files ...string) []string {
	dir, err := os.MkdirTemp("", "leaf-tls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestMySQLOverTLS: a server whose certificate the operator's CA issued:
// with the CA given (--mysql-tls-ca) the store opens and takes ranges over
// TLS; without it the link is clear, and LinkEncrypted says so; with
// another CA or for another server name it does not open; a DSN saying
// tls=false beside the CA is refused.
func TestMySQLOverTLS(t *testing.T) {
	mariadbtest.Require(t)
	ca, other := testkit.NewCA(t), testkit.NewCA(t)
	cert, key, _ := ca.Issue(t, "db")
	files := readable(t, cert, key, ca.File)
	srv := mariadbtest.StartServerWith(t, "ssl-cert="+files[0], "ssl-key="+files[1], "ssl-ca="+files[2])
	dsn := srv.Database(t, "leaf")
	trust := func(c *testkit.CA) *tlsfiles.CA {
		got, err := tlsfiles.NewCA("ca", c.File, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	st, err := store.OpenMySQL(ctx, dsn, store.Options{TLS: &store.TLS{CA: trust(ca)}})
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	if a, err := st.Allocate(ctx, "orders", 0); err != nil || a.Start() != 1 {
		t.Fatalf("a range over TLS: %+v, %v", a, err)
	}
	if on, err := st.LinkEncrypted(ctx); err != nil || !on {
		t.Errorf("LinkEncrypted = %v, %v; want true", on, err)
	}

	for name, c := range map[string]struct {
		dsn  string
		opts store.Options
		says string
	}{
		"another CA":       {dsn, store.Options{TLS: &store.TLS{CA: trust(other)}}, "certificate"},
		"another name":     {dsn, store.Options{TLS: &store.TLS{CA: trust(ca), ServerName: "db.example"}}, "db.example"},
		"tls=false beside": {dsn + "&tls=false", store.Options{TLS: &store.TLS{CA: trust(ca)}}, "tls=false"},
	} {
		c.opts.Timeout = 2 * time.Second
		st, err := store.OpenMySQL(ctx, c.dsn, c.opts)
		if err == nil {
			st.Close()
			t.Errorf("%s: opened", name)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want it to say %q", name, err, c.says)
		}
	}
	clear, err := store.OpenMySQL(ctx, dsn+"&tls=preferred", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer clear.Close()
	if on, err := clear.LinkEncrypted(ctx); err != nil || !on {
		t.Errorf("tls=preferred with a server that speaks TLS: LinkEncrypted = %v, %v; want true", on, err)
	}
	plain, err := store.OpenMySQL(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if on, err := plain.LinkEncrypted(ctx); err != nil || on {
		t.Errorf("no tls= and no CA: LinkEncrypted = %v, %v; want false", on, err)
	}
}
