package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestTagCreatedElsewhereIsServedAtOnce: a tag created by `leaf tag add`,
// by an INSERT or by another instance's admin API is served by a running
// instance on its first request, even right after a name with no row was
// asked for.
func TestTagCreatedElsewhereIsServedAtOnce(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	st := storetest.Open(t, store.MySQL, dsn)
	const token = "t0ken-secret-of-the-test"
	a := startApp(t, env{"LEAF_MYSQL_DSN": dsn}, "--snowflake=false")
	other := startApp(t, env{"LEAF_MYSQL_DSN": dsn, "LEAF_ADMIN_TOKEN": token}, "--snowflake=false")

	create := map[string]func(name string){
		"tag add": func(name string) {
			if _, _, err := runSplit(t, env{}, "tag", "add", name, "--mysql-dsn", dsn); err != nil {
				t.Fatalf("leaf tag add %s: %v", name, err)
			}
		},
		"INSERT": func(name string) {
			if _, err := st.DB().ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 100)", name); err != nil {
				t.Fatal(err)
			}
		},
		"admin API": func(name string) {
			req, err := http.NewRequest(http.MethodPost, other.base+"/api/admin/tags", strings.NewReader(fmt.Sprintf(`{"tag":%q}`, name)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("POST /api/admin/tags %s = %d", name, resp.StatusCode)
			}
		},
	}
	for how, add := range create {
		for i := range 3 {
			stray := fmt.Sprintf("stray-%s-%d", strings.ReplaceAll(how, " ", "-"), i)
			if code, body := testkit.MustGet(t, a.base+"/api/segment/get/"+stray); code != http.StatusNotFound {
				t.Fatalf("%s = %d %s, want 404", stray, code, body)
			}
			late := fmt.Sprintf("late-%s-%d", strings.ReplaceAll(how, " ", "-"), i)
			add(late)
			if code, body := testkit.MustGet(t, a.base+"/api/segment/get/"+late); code != http.StatusOK || body != "1" {
				t.Fatalf("first request for %s, created by %s = %d %s, want 200 1", late, how, code, body)
			}
		}
	}
}
