//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// findChromium returns the path of a Chromium to run headless. Without one
// the test is skipped, except under CI=true, where .ci/run installs it.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium in PATH (Debian: apt-get install chromium): the status page is not checked in a browser"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// runChromium runs headless Chromium with args and returns what it wrote
// on stdout. It runs in a process group of its own, so that on a timeout
// its helper processes are killed with it.
func runChromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// --no-sandbox: Chromium refuses to start as root with its sandbox,
	// and CI runs as root. The page it opens is this test's own.
	base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--no-first-run", "--disable-extensions", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr class="([^"]*)">(.*?)</tr>`)
	tagRE  = regexp.MustCompile(`<[^>]*>`)
	spaces = regexp.MustCompile(`\s+`)
)

// domRow is a table row of the rendered page: its class and its text.
type domRow struct{ class, text string }

// rows lists the rows of the serialized DOM whose class contains class.
func rows(dom, class string) []domRow {
	var out []domRow
	for _, m := range rowRE.FindAllStringSubmatch(dom, -1) {
		if !strings.Contains(" "+m[1]+" ", " "+class+" ") {
			continue
		}
		text := html.UnescapeString(tagRE.ReplaceAllString(m[2], " "))
		out = append(out, domRow{class: m[1], text: strings.TrimSpace(spaces.ReplaceAllString(text, " "))})
	}
	return out
}

// TestStatusPageInBrowser runs `leaf serve` with traffic, a row with step 0
// (which cannot load: tag_misconfigured) and a row named like markup, then
// opens /status in headless Chromium and checks the page as rendered: the
// rows of the buffer table, the failing tag flagged, the markup shown as
// text. It saves screenshots at desktop and phone widths in the test's
// artifact directory (kept with go test -artifacts -outputdir DIR).
func TestStatusPageInBrowser(t *testing.T) {
	chromium := findChromium(t)
	path := filepath.Join(t.TempDir(), "leaf.db")
	st := storetest.Open(t, store.SQLite, path)
	const hostile = `<img src=x onerror=alert(1)>`
	for _, r := range []struct {
		tag  string
		step int
	}{{"orders", 1000}, {"users", 50}, {"broken", 0}, {hostile, 10}} {
		if _, err := st.DB().Exec("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, ?)", r.tag, r.step); err != nil {
			t.Fatal(err)
		}
	}
	// The ranges by the doubling alone, so that the page shows the ones
	// this test counts on (with --ride-through they are sized by the rate
	// of its burst of requests).
	a := startApp(t, env{"LEAF_SQLITE_PATH": path}, "--ride-through", "0")

	get := func(path string, want int) {
		t.Helper()
		if code, body := testkit.MustGet(t, a.base+path); code != want {
			t.Fatalf("GET %s = %d %s, want %d", path, code, body, want)
		}
	}
	for range 30 {
		get("/api/segment/batch/orders?count=40", 200)
		get("/api/segment/batch/users?count=7", 200)
	}
	get("/api/segment/get/"+url.PathEscape(hostile), 200)
	get("/api/snowflake/batch?count=1000", 200)
	for range 3 {
		get("/api/segment/get/broken", 500)
	}
	// Let the prefetches end, so the page shows settled buffers.
	testkit.WaitFor(t, 0, "the prefetches", func() bool {
		code, body := testkit.MustGet(t, a.base+"/status.json")
		var s struct {
			Segment struct{ Tags []struct{ Loading bool } }
		}
		if code != 200 || json.Unmarshal([]byte(body), &s) != nil || len(s.Segment.Tags) != 3 {
			return false
		}
		for _, tag := range s.Segment.Tags {
			if tag.Loading {
				return false
			}
		}
		return true
	})

	dom := runChromium(t, chromium, "--dump-dom", a.base+"/status")
	if !strings.Contains(dom, `http-equiv="refresh"`) {
		t.Errorf("the rendered page does not refresh itself:\n%s", dom)
	}
	// The name written as markup stays text: no element came of it.
	if strings.Contains(dom, "<img") || strings.Contains(dom, "<script") {
		t.Errorf("markup from a tag name became an element:\n%s", dom)
	}

	tags := rows(dom, "tag-row")
	if len(tags) != 3 {
		t.Fatalf("%d rows in the buffer table, want 3: %+v\n%s", len(tags), tags, dom)
	}
	wantRows := []struct{ tag, text string }{
		{hostile, "1 issued · 9 left"},
		{"orders", "1,200 issued"},
		{"users", "210 issued"},
	}
	for i, w := range wantRows {
		r := tags[i]
		if !strings.HasPrefix(r.text, w.tag+" ") || !strings.Contains(r.text, w.text) || !strings.Contains(r.text, "in use") ||
			!strings.Contains(r.text, "took ") {
			t.Errorf("buffer row %d = %q, want %s with %q", i, r.text, w.tag, w.text)
		}
		if strings.Contains(r.class, "bad") {
			t.Errorf("buffer row %s is flagged: %q", w.tag, r.class)
		}
	}
	// orders took 1200 ids: its first range is spent and the second in use.
	if !strings.Contains(tags[1].text, "in use · 1,800 left 1001–3000") {
		t.Errorf("orders row = %q, want the second range in use", tags[1].text)
	}

	failed := rows(dom, "failed-tag")
	if len(failed) != 1 || !strings.Contains(failed[0].class, "bad") ||
		!strings.HasPrefix(failed[0].text, "failed broken ") || !strings.Contains(failed[0].text, "misconfigured") {
		t.Errorf("failed tags = %+v, want broken, flagged, with its error", failed)
	}
	for _, want := range []string{
		"1 tag failed to load and cannot issue ids: broken",
		"leased by ",
		"1,000 issued",
		"1–4 of 4 tags, those that need attention first",
	} {
		if !strings.Contains(html.UnescapeString(dom), want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}

	// A search keeps the tags whose name contains it, in any case.
	dom = runChromium(t, chromium, "--dump-dom", a.base+"/status?q=ORD&per_page=10")
	if found := rows(dom, "tag-row"); len(found) != 1 || !strings.HasPrefix(found[0].text, "orders ") {
		t.Errorf("rows found by ?q=ORD = %+v, want orders alone", found)
	}
	if !strings.Contains(dom, `value="ORD"`) || !strings.Contains(html.UnescapeString(dom), `1–1 of 1 tag whose name contains "ORD"`) {
		t.Errorf("the page found by a search does not say so:\n%s", dom)
	}

	// Traffic while the screenshots are taken, so that they show ids
	// flowing: the page measures the rate between its reads.
	stop := make(chan struct{})
	var traffic sync.WaitGroup
	traffic.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			testkit.Get(a.base+"/api/snowflake/batch?count=50", "")
			testkit.Get(a.base+"/api/segment/batch/orders?count=10", "")
			testkit.Get(a.base+"/api/segment/batch/users?count=3", "")
		}
	})
	defer func() {
		close(stop)
		traffic.Wait()
	}()

	dir := t.ArtifactDir()
	for _, shot := range []struct{ name, size string }{
		{"status.png", "1200,970"},
		{"status-phone.png", "390,1600"},
	} {
		file := filepath.Join(dir, shot.name)
		runChromium(t, chromium, "--screenshot="+file, "--window-size="+shot.size, a.base+"/status")
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 10_000 {
			t.Errorf("%s is not a PNG of a rendered page (%d bytes)", shot.name, len(b))
		}
		t.Logf("screenshot: %s", file)
	}
}
