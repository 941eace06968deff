package conformance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// expectRequests checks how many requests the selected servers got on a
// path: at least at_least (waiting up to within_ms for them) and at most
// at_most.
func (e *env) expectRequests(st step) bool {
	count := func() int {
		n := 0
		for _, p := range e.selected(st) {
			n += len(p.matching(st.Path))
		}
		return n
	}
	deadline := time.Now().Add(time.Duration(st.WithinMS) * time.Millisecond)
	n := count()
	for st.AtLeast != nil && n < *st.AtLeast && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n = count()
	}
	ok := true
	if st.AtLeast != nil && n < *st.AtLeast {
		e.t.Errorf("%d requests on %s, want at least %d (within %dms)", n, st.Path, *st.AtLeast, st.WithinMS)
		ok = false
	}
	if st.AtMost != nil && n > *st.AtMost {
		e.t.Errorf("%d requests on %s, want at most %d", n, st.Path, *st.AtMost)
		ok = false
	}
	return ok
}

// waitRoutes waits until every section of the space has an owner and
// exactly `owners` servers own sections, as every running server tells
// alike.
func (e *env) waitRoutes(st step) bool {
	deadline := time.Now().Add(time.Duration(st.WithinMS) * time.Millisecond)
	var last string
	for time.Now().Before(deadline) {
		settled, versions := true, map[string]bool{}
		for _, s := range e.servers {
			if !s.running() {
				continue
			}
			r, err := s.routes(*st.Space)
			if err != nil {
				last, settled = err.Error(), false
				break
			}
			owners := map[int]bool{}
			for _, o := range r.Owners {
				owners[o] = true
			}
			versions[r.Version] = true
			last = fmt.Sprintf("owners %v of members %v", r.Owners, r.Members)
			settled = settled && !owners[-1] && len(owners) == st.Owners
		}
		if settled && len(versions) == 1 {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Errorf("the sections of %s do not have %d owners within %dms: %s", *st.Space, st.Owners, st.WithinMS, last)
	return false
}

// eachError has the server's proxy answer each error code of the server's
// table, and each answer that is not the API's, to op, and checks the
// kind of error each client makes of it, and that only answers another
// server may not give are tried at the next endpoint. Each answer goes to
// a new client whose two endpoints are the same server.
func (e *env) eachError(st step) bool {
	type answerCase struct {
		name, body, kind string
		status           int
		failover         bool
	}
	var cases []answerCase
	for _, c := range e.s.ErrorCodes {
		body := fmt.Sprintf(`{"error":{"code":%q,"message":"injected by the conformance suite"}}`, c.Code)
		cases = append(cases, answerCase{c.Code, body, c.Kind, c.Status, c.Failover})
	}
	for _, c := range e.s.OtherAnswers {
		cases = append(cases, answerCase{c.About, c.Body, c.Kind, c.Status, c.Failover})
	}
	sv := e.server(st)
	url := sv.proxy.url()
	ok := true
	for i, c := range cases {
		sv.proxy.setInjection(&injection{path: st.Path, status: c.status, body: c.body})
		before := len(sv.proxy.matching(st.Path))
		name := fmt.Sprintf("e%d", i)
		for _, d := range e.drivers {
			a, err := d.call(map[string]any{"op": "client", "name": name, "endpoints": []string{url, url},
				"config": map[string]any{"backoff_min_ms": 10, "backoff_max_ms": 20, "routes_interval_ms": 10}})
			if err != nil || a.Error != nil {
				e.t.Errorf("%s: client: %v %v", d.lang, err, a.Error)
				return false
			}
			req := map[string]any{"op": st.Op, "client": name}
			if st.Tag != nil {
				req["tag"] = *st.Tag
			}
			if st.Space != nil {
				req["space"], req["key"] = *st.Space, *st.Key
			}
			a, err = d.call(req)
			if err != nil {
				e.t.Error(err)
				return false
			}
			if a.Error == nil || a.Error.Kind != c.kind {
				e.t.Errorf("%s: %s answered %d %.60q: got %v and %v, want the error %s", d.lang, st.Op, c.status, c.body, a.Values, a.Error, c.kind)
				ok = false
			}
			if _, err := d.call(map[string]any{"op": "close", "client": name}); err != nil {
				e.t.Error(err)
				return false
			}
			if st.Op != "next" {
				continue // a sequence call's count depends on when its routes arrive
			}
			n := len(sv.proxy.matching(st.Path)) - before
			before += n
			if want := map[bool]int{true: 2, false: 1}[c.failover]; n != want {
				e.t.Errorf("%s: %s answered %d %.60q: %d requests, want %d (failover %v)", d.lang, st.Op, c.status, c.body, n, want, c.failover)
				ok = false
			}
		}
	}
	sv.proxy.setInjection(nil)
	return ok
}

// expectRoutesRefreshed checks, from what the proxies saw, that the
// client fetched the space's routing table more than once, and that a
// server answered a sequence call with another version than the one the
// client sent (the client held a stale table). Then it waits for the
// client to hold the table the servers answer now: it calls the step's
// keys again, round after round (within_ms, 10 s unless given), until the
// last calls of a round all carried the current version. How soon the
// background fetch of the table lands is the machine's business; that
// it lands, and that calls then carry it, is the client's.
func (e *env) expectRoutesRefreshed(st step) bool {
	space := *st.Space
	fetches, calls := e.routeTraffic(space)
	ok := true
	if fetches < 2 {
		e.t.Errorf("the routing table of %s was fetched %d times, want a fetch after it changed", space, fetches)
		ok = false
	}
	stale := 0
	for _, r := range calls {
		if r.held != "" && r.answered != "" && r.held != r.answered {
			stale++
		}
	}
	if stale == 0 {
		e.t.Errorf("no call of %s carried a stale version that a server answered with the new one", space)
		ok = false
	}
	within := time.Duration(st.WithinMS) * time.Millisecond
	if within == 0 {
		within = 10 * time.Second
	}
	deadline := time.Now().Add(within)
	for round := 0; ; round++ {
		var now string
		for _, s := range e.servers {
			if s.running() {
				if r, err := s.routes(space); err == nil {
					now = r.Version
				}
			}
		}
		_, calls = e.routeTraffic(space)
		var lastHeld []string
		current := true
		for _, r := range calls[max(0, len(calls)-5):] {
			lastHeld = append(lastHeld, r.held)
			current = current && r.held == now
		}
		if current {
			if round > 0 {
				e.t.Logf("the last calls of %s carried the current version after %d more rounds of calls", space, round)
			}
			return ok
		}
		if time.Now().After(deadline) {
			e.t.Errorf("the last calls of %s carried versions %s, want the current one %s (after %d more rounds of calls in %v)",
				space, strings.Join(lastHeld, " "), now, round, within)
			return false
		}
		time.Sleep(100 * time.Millisecond)
		call := st
		call.Do = "seq_next"
		for _, d := range e.drivers {
			if !e.call(d, call) {
				return false
			}
		}
	}
}

// routeTraffic is what the proxies saw of a space: the fetches of its
// routing table, and the sequence calls a client sent (not those a server
// forwarded), in the order they came.
func (e *env) routeTraffic(space string) (fetches int, calls []record) {
	for _, s := range e.servers {
		fetches += len(s.proxy.matching("/api/sequence/routes/" + space))
		for _, r := range s.proxy.matching("/api/sequence/next/" + space + "/") {
			if !r.forwarded {
				calls = append(calls, r)
			}
		}
	}
	slices.SortFunc(calls, func(a, b record) int { return cmp.Compare(a.order, b.order) })
	return fetches, calls
}
