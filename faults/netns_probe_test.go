package faults

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeProbes write a row of their own through each instance's admin API
// (PATCH of a probe tag's description) every writeEvery, and keep when
// each write ran and whether it was answered 200: how long an instance
// could not write to its store.
type writeProbes struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex   // protects got
	got    [][]answered // by instance
}

const (
	// writeEvery is the time between two writes of a probe.
	writeEvery = 100 * time.Millisecond
	// writeTimeout bounds one write; the instance answers 503 after its
	// --store-timeout.
	writeTimeout = 5 * time.Second
)

// startWriteProbes makes a probe tag per instance (np-A, …) and starts
// writing it through its instance.
func startWriteProbes(t *testing.T, clk clock, ins []*instance) *writeProbes {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &writeProbes{cancel: cancel, got: make([][]answered, len(ins))}
	client := &http.Client{Timeout: writeTimeout}
	for i, in := range ins {
		tag := "np-" + in.name
		status, body, err := post(ctx, client, in.base()+"/api/admin/tags", adminToken, `{"tag":"`+tag+`","step":1000}`)
		if err != nil || status != http.StatusCreated {
			cancel()
			t.Fatalf("probe tag %s through %s: %d %s %v", tag, in.name, status, body, err)
		}
		p.wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				start := clk.now()
				status, err := patch(ctx, client, in.base()+"/api/admin/tags/"+tag, fmt.Sprintf(`{"description":"probe %d"}`, n))
				if ctx.Err() != nil {
					return
				}
				p.mu.Lock()
				p.got[i] = append(p.got[i], answered{start: start, end: clk.now(), ok: err == nil && status == http.StatusOK})
				p.mu.Unlock()
				sleepCtx(ctx, writeEvery)
			}
		})
	}
	t.Cleanup(p.stop)
	return p
}

func (p *writeProbes) stop() {
	p.cancel()
	p.wg.Wait()
}

// gap is the longest time instance i wrote nothing within [from, to].
func (p *writeProbes) gap(i int, from, to time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return longestGap(p.got[i], from, to)
}

// patch sends a PATCH of a JSON body with the admin token.
func patch(ctx context.Context, c *http.Client, u, body string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// contextFor is a context that ends after d.
func contextFor(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// servedGap is the longest time within [from, to] that instance i answered
// no call of the plain tag 200, while calls were sent to it: how long it
// stopped serving ids its buffers and other stores could give.
func (m *matrixRun) servedGap(i int, from, to time.Duration) time.Duration {
	var calls []answered
	for _, kl := range m.loads {
		if kl.kind.name != "plain" {
			continue
		}
		for _, w := range kl.workers {
			for _, c := range w.calls {
				if int(c.target) == i {
					calls = append(calls, answered{start: c.start, end: c.end, ok: c.status == http.StatusOK})
				}
			}
			for _, f := range w.fails {
				if int(f.target) == i {
					calls = append(calls, answered{start: f.at, end: f.end})
				}
			}
		}
	}
	return longestGap(calls, from, to)
}

// reportNet prints a RESULT line per fault of a TestNetFaults shape, and
// bounds how long its victims went without writing (the mark's
// moveBound, when not zero) and without serving the plain tag.
// commitGaps, when set, gives the databases' own stall within a window.
func (g *netDeploy) reportNet(m *matrixRun, shape string, commitGaps func(from, to time.Duration) string) {
	for _, mk := range g.marks {
		r := newReport(m.t, "netns_"+shape+"_"+mk.window)
		r.add("fault", mk.what)
		r.add("from_ms", mk.from)
		r.add("in_place_after_ms", mk.cutAt-mk.from)
		r.add("back_after_ms", mk.back-mk.from)
		r.add("over_after_ms", mk.over-mk.from)
		r.add("resync_ms", mk.resynced-mk.over)
		var writes, served []string
		for i, in := range m.ins {
			writes = append(writes, fmt.Sprintf("%s:%.0f", in.name, ms(g.probes.gap(i, mk.from, mk.over))))
			served = append(served, fmt.Sprintf("%s:%.0f", in.name, ms(m.servedGap(i, mk.from, mk.over))))
		}
		r.add("write_gap_ms", strings.Join(writes, ","))
		r.add("served_gap_ms", strings.Join(served, ","))
		if commitGaps != nil {
			r.add("commit_gap_ms", commitGaps(mk.cutAt, mk.over))
		}
		for _, v := range mk.victims {
			name := m.ins[v].name
			if mk.moveBound > 0 {
				gap := g.probes.gap(v, mk.from, mk.over)
				r.bound("moves_"+name, gap <= mk.moveBound,
					"instance %s (%s) went %v without a write to its store, want at most %v: %v until the databases it reaches took writes again, and %v",
					name, mk.what, gap.Round(time.Millisecond), mk.moveBound, (mk.moveBound - moveSlack).Round(time.Millisecond), moveSlack)
			}
			gap := m.servedGap(v, mk.from, mk.over)
			r.bound("serves_"+name, gap <= netServedBound,
				"instance %s (%s) went %v without answering the plain tag 200, want at most %v",
				name, mk.what, gap.Round(time.Millisecond), netServedBound)
		}
		r.print()
	}
}

// netServedBound bounds how long a victim goes without serving the plain
// tag: its buffers, and the other stores, cover the time its store is
// away.
const netServedBound = time.Second

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
