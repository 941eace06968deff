package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/leafid/leaf/store"
)

// TestSingleStoreOfASetRefused: a database that joined a set of stores is
// not served alone, the old way, nor are tags or spaces made in it alone:
// its rows would hand out ids outside its class. The error says what to
// do.
func TestSingleStoreOfASetRefused(t *testing.T) {
	inEmptyDir(t)
	s := testStores(t, []string{store.SQLite, store.MySQL}, 2)
	leafOK(t, storesEnv(s...), "store", "init")
	for _, e := range []env{{"LEAF_SQLITE_PATH": s[0].dsn}, {"LEAF_MYSQL_DSN": s[1].dsn}} {
		_, err := newApp([]string{"--addr", "127.0.0.1:0", "--snowflake=false"}, e.get, &strings.Builder{})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := newApp([]string{"--addr", "127.0.0.1:0", "--snowflake=false"}, e.get, &strings.Builder{})
		err = a.Open(t.Context())
		_ = a.Close()
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--store") || !strings.Contains(err.Error(), "of a set of stores") {
			t.Fatalf("serve of one store of a set: %v", err)
		}
		for _, args := range [][]string{{"tag", "add", "orders"}, {"tag", "list"}, {"sequence", "add", "inbox"}} {
			if _, err := runCmd(t, e, args...); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "of a set of stores") {
				t.Errorf("%q on one store of a set: %v", args, err)
			}
		}
	}
}
