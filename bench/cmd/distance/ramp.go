package main

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// ramp is what callers of a fresh tag saw: the 99th and 99.9th
// percentiles of their latencies and how many waited past slow.
type ramp struct {
	requests  int
	p99, p999 time.Duration
	over      int // requests that took longer than rampLoad's slow
}

// rampLoad asks url from conns connections, each one request at a time,
// for d, and times every request. (wrk's percentiles of a run whose
// connections all stall at its start, as on a tag's first loads, are
// far above the requests' own: 424 ms where 128 of 278,000 requests took
// over 100 ms.)
func rampLoad(url string, conns int, d time.Duration, slow time.Duration) ramp {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}}
	var (
		mu  sync.Mutex
		all []time.Duration
		wg  sync.WaitGroup
	)
	end := time.Now().Add(d)
	for range conns {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(end) {
				t := time.Now()
				resp, err := c.Get(url)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(all)
	r := ramp{requests: len(all)}
	if len(all) == 0 {
		return r
	}
	r.p99, r.p999 = all[len(all)*99/100], all[len(all)*999/1000]
	for _, l := range all {
		if l > slow {
			r.over++
		}
	}
	return r
}
