package containers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCompose brings docker-compose.yml up with --build (on the local
// images through docker-compose.local.yml when LEAF_TEST_IMAGES=local),
// restarts leaf, takes the stack down and up again, and checks at each step
// that every kind continues above what it issued before, nothing twice.
func TestCompose(t *testing.T) {
	require(t)
	port := freePort(t)
	files := []string{"docker-compose.yml"}
	if chosen().local {
		files = append(files, "docker-compose.local.yml")
	}
	p := newProject(t, []string{portEnv("LEAF_PORT", port)}, files...)
	base := "http://127.0.0.1:" + strconv.Itoa(port)

	start := time.Now()
	p.do(20*time.Minute, "up", "-d", "--build")
	waitReady(t, base, 3*time.Minute)
	t.Logf("up --build: ready after %v", time.Since(start).Round(time.Second))
	setUp(t, base)
	l := newLedger()
	before := take(t, base, 20)
	l.addAll(before)

	p.do(2*time.Minute, "restart", "leaf")
	waitReady(t, base, 2*time.Minute)
	after := take(t, base, 20)
	checkAbove(t, "restart leaf", before, after)
	l.addAll(after)

	p.do(5*time.Minute, "down")
	p.do(5*time.Minute, "up", "-d")
	waitReady(t, base, 3*time.Minute)
	again := take(t, base, 20)
	checkAbove(t, "down, up", after, again)
	l.addAll(again)
	l.checkOnce(t)
}

// TestComposeGalera brings docker-compose.galera.yml up — three Galera
// nodes, two leaf instances each given every node, its own first — puts
// both instances under load, kills the container of leaf2's node, starts
// it again, and counts the ids issued twice: none may be.
func TestComposeGalera(t *testing.T) {
	require(t)
	im := chosen()
	ports := []int{freePort(t), freePort(t)}
	env := []string{portEnv("LEAF1_PORT", ports[0]), portEnv("LEAF2_PORT", ports[1]), "GALERA_IMAGE=" + im.galera,
		"GO_IMAGE=" + im.golang, "RUNTIME_IMAGE=" + im.runtime}
	p := newProject(t, env, "docker-compose.galera.yml")
	bases := []string{"http://127.0.0.1:" + strconv.Itoa(ports[0]), "http://127.0.0.1:" + strconv.Itoa(ports[1])}

	start := time.Now()
	p.do(30*time.Minute, "up", "-d", "--build")
	for _, b := range bases {
		waitReady(t, b, 5*time.Minute)
	}
	t.Logf("up --build: both instances ready after %v", time.Since(start).Round(time.Second))
	setUp(t, bases[0])

	l := newLedger()
	var (
		ok, afterKill [2]atomic.Int64
		killed        atomic.Bool
		errMu         sync.Mutex
		failures      = [2]map[string]int{{}, {}} // by status, or the error
		wg            sync.WaitGroup
		ctx, stopLoad = context.WithCancel(context.Background())
	)
	defer stopLoad()
	for i, b := range bases {
		for _, route := range []string{"/api/segment/batch/orders?count=20", "/api/segment/get/payments"} {
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						ids, err := takeSome(ctx, b+route)
						if err != nil {
							if !errors.Is(err, context.Canceled) {
								errMu.Lock()
								failures[i][failure(err)]++
								errMu.Unlock()
								time.Sleep(50 * time.Millisecond)
							}
							continue
						}
						l.add(route, ids...)
						ok[i].Add(1)
						if killed.Load() {
							afterKill[i].Add(1)
						}
					}
				}()
			}
		}
	}

	time.Sleep(5 * time.Second)
	node := p.container("galera2")
	docker(t, "kill", node)
	killed.Store(true)
	t.Logf("killed galera2 (%s), leaf2's node, under load", node[:12])
	time.Sleep(10 * time.Second)
	docker(t, "start", node)
	waitHealthy(t, node, 5*time.Minute)
	t.Logf("galera2 back and synced")
	time.Sleep(5 * time.Second)
	stopLoad()
	wg.Wait()

	for i := range bases {
		t.Logf("leaf%d: %d calls answered (%d after the kill), failed: %v",
			i+1, ok[i].Load(), afterKill[i].Load(), failures[i])
		if afterKill[i].Load() == 0 {
			t.Errorf("leaf%d answered nothing after its node was killed", i+1)
		}
		for f, n := range failures[i] {
			if f != "503 unavailable" {
				t.Errorf("leaf%d: %d calls failed with %s; only 503 unavailable (retry) is allowed", i+1, n, f)
			}
		}
	}
	l.checkOnce(t)
}

// takeSome takes the ids of one call: one id, or a batch's.
func takeSome(ctx context.Context, url string) ([]int64, error) {
	code, body, err := call(ctx, http.MethodGet, url, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Canceled
		}
		return nil, err
	}
	if code != http.StatusOK {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return nil, answerError{status: code, code: e.Error.Code, body: tail(string(body), 200)}
	}
	return parseIDs(body)
}

// answerError is an answer other than 200.
type answerError struct {
	status int
	code   string
	body   string
}

func (e answerError) Error() string { return fmt.Sprintf("%d %s", e.status, e.body) }

// failure is how a failed call is counted: its status and error code, or
// the transport's error.
func failure(err error) string {
	var a answerError
	if errors.As(err, &a) {
		return fmt.Sprintf("%d %s", a.status, a.code)
	}
	return err.Error()
}

// waitHealthy waits until container c's health check passes.
func waitHealthy(t *testing.T, c string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		status := docker(t, "inspect", "-f", "{{.State.Health.Status}}", c)
		if status == "healthy" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy within %v: %s", c, within, status)
		}
		time.Sleep(time.Second)
	}
}
