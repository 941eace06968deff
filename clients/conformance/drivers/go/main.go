// Command go is the conformance suite's driver of the Go client (package
// client): it reads one JSON request a line on stdin, runs it with the
// client, and writes one JSON answer a line on stdout. The protocol is in
// clients/conformance/README.md; the suite (conformance_test.go) builds and
// runs this program.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leafid/leaf/client"
)

// request is one line of the protocol.
type request struct {
	Op        string   `json:"op"`
	Name      string   `json:"name"`
	Endpoints []string `json:"endpoints"`
	Config    config   `json:"config"`
	Client    string   `json:"client"`
	Tag       string   `json:"tag"`
	Space     string   `json:"space"`
	Key       string   `json:"key"`
	N         *int     `json:"n"`
	Repeat    int      `json:"repeat"`
	Threads   int      `json:"threads"`
	Count     int      `json:"count"`
	File      string   `json:"file"`
	Pace      int      `json:"pace"`
}

// config is the language-neutral client configuration.
type config struct {
	RequestTimeoutMS  int  `json:"request_timeout_ms"`
	MinRange          int  `json:"min_range"`
	MaxRange          int  `json:"max_range"`
	RefillIntervalMS  int  `json:"refill_interval_ms"`
	SnowflakeBatch    int  `json:"snowflake_batch"`
	SnowflakeMaxAgeMS int  `json:"snowflake_max_age_ms"`
	BackoffMinMS      int  `json:"backoff_min_ms"`
	BackoffMaxMS      int  `json:"backoff_max_ms"`
	RoutesIntervalMS  int  `json:"routes_interval_ms"`
	NoDirectSequences bool `json:"no_direct_sequences"`
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// answer is one line written back.
type answer struct {
	Values []string       `json:"values"`
	Error  *failure       `json:"error"`
	Drawn  int            `json:"drawn,omitempty"`
	Errors map[string]int `json:"errors,omitempty"`
}

type failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// kinds maps the client's sentinels to the suite's error kinds, most
// specific first: a request no endpoint served is "unavailable" whatever
// each endpoint answered.
var kinds = []struct {
	kind string
	err  error
}{
	{"closed", client.ErrClosed},
	{"unavailable", client.ErrUnavailable},
	{"invalid_tag", client.ErrInvalidTag},
	{"invalid_id", client.ErrInvalidID},
	{"invalid_count", client.ErrInvalidCount},
	{"invalid_request", client.ErrInvalidRequest},
	{"unauthorized", client.ErrUnauthorized},
	{"unknown_tag", client.ErrUnknownTag},
	{"not_found", client.ErrNotFound},
	{"method_not_allowed", client.ErrMethodNotAllowed},
	{"tag_exists", client.ErrTagExists},
	{"tag_exhausted", client.ErrExhausted},
	{"tag_bound_reached", client.ErrBoundReached},
	{"lease_lost", client.ErrLeaseLost},
	{"tag_misconfigured", client.ErrMisconfigured},
	{"internal", client.ErrInternal},
	{"invalid_format", client.ErrInvalidFormat},
	{"period_closed", client.ErrPeriodClosed},
	{"sequence_full", client.ErrSequenceFull},
	{"not_numeric", client.ErrNotNumeric},
	{"format_fixed", client.ErrFormatFixed},
	{"invalid_space", client.ErrInvalidSpace},
	{"invalid_key", client.ErrInvalidKey},
	{"unknown_space", client.ErrUnknownSpace},
	{"space_exists", client.ErrSpaceExists},
	{"sequence_exhausted", client.ErrSequenceExhausted},
}

func kindOf(err error) string {
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return "other"
}

func fail(err error) *failure { return &failure{Kind: kindOf(err), Message: err.Error()} }

// draw is a draw running in the background.
type draw struct {
	stop chan struct{}
	wg   sync.WaitGroup
	file string

	mu     sync.Mutex // protects the fields below
	ids    [][]int64
	errors map[string]int
}

type driver struct {
	clients map[string]*client.Client
	draw    *draw
}

func main() {
	d := &driver{clients: map[string]*client.Client{}}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var r request
		var a answer
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			a.Error = &failure{Kind: "driver", Message: err.Error()}
		} else if r.Op == "exit" {
			break
		} else {
			a = d.do(r)
		}
		if a.Values == nil {
			a.Values = []string{}
		}
		_ = enc.Encode(a)
		_ = out.Flush()
	}
	for _, c := range d.clients {
		_ = c.Close()
	}
}

func (d *driver) do(r request) answer {
	switch r.Op {
	case "client":
		return d.newClient(r)
	case "draw_stop":
		return d.drawStop()
	}
	c := d.clients[r.Client]
	if c == nil {
		return answer{Error: &failure{Kind: "driver", Message: fmt.Sprintf("no client %q", r.Client)}}
	}
	switch r.Op {
	case "close":
		if err := c.Close(); err != nil {
			return answer{Error: fail(err)}
		}
		return answer{}
	case "draw":
		dr := d.startDraw(c, r, r.Count)
		dr.wg.Wait()
		d.draw = dr
		return d.drawStop()
	case "draw_start":
		if d.draw != nil {
			return answer{Error: &failure{Kind: "driver", Message: "a draw runs already"}}
		}
		d.draw = d.startDraw(c, r, 0)
		return answer{}
	}
	return ids(c, r)
}

// newClient makes the client r names, configured as r says.
func (d *driver) newClient(r request) answer {
	c, err := client.New(client.Config{
		Endpoints:         r.Endpoints,
		RequestTimeout:    ms(r.Config.RequestTimeoutMS),
		MinRange:          r.Config.MinRange,
		MaxRange:          r.Config.MaxRange,
		RefillInterval:    ms(r.Config.RefillIntervalMS),
		SnowflakeBatch:    r.Config.SnowflakeBatch,
		SnowflakeMaxAge:   ms(r.Config.SnowflakeMaxAgeMS),
		BackoffMin:        ms(r.Config.BackoffMinMS),
		BackoffMax:        ms(r.Config.BackoffMaxMS),
		RoutesInterval:    ms(r.Config.RoutesIntervalMS),
		NoDirectSequences: r.Config.NoDirectSequences,
	})
	if err != nil {
		return answer{Error: &failure{Kind: "config", Message: err.Error()}}
	}
	d.clients[r.Name] = c
	return answer{}
}

// ids answers the ops that ask c for ids or numbers, r.Repeat times.
func ids(c *client.Client, r request) answer {
	ctx := context.Background()
	var a answer
	one := func(f func() (int64, error)) answer {
		for range max(r.Repeat, 1) {
			v, err := f()
			if err != nil {
				a.Error = fail(err)
				break
			}
			a.Values = append(a.Values, strconv.FormatInt(v, 10))
		}
		return a
	}
	n := 1
	if r.N != nil {
		n = *r.N
	}
	switch r.Op {
	case "next":
		return one(func() (int64, error) { return c.Next(ctx, r.Tag) })
	case "next_n":
		got, err := c.NextN(ctx, r.Tag, n)
		if err != nil {
			return answer{Error: fail(err)}
		}
		for _, id := range got {
			a.Values = append(a.Values, strconv.FormatInt(id, 10))
		}
		return a
	case "snowflake":
		return one(func() (int64, error) { return c.Snowflake(ctx) })
	case "worker":
		// Repeat ids made in this process on a worker id leased for
		// r.Key, then released.
		w, err := c.LeaseWorker(ctx, r.Key, 30*time.Second)
		if err != nil {
			return answer{Error: fail(err)}
		}
		a = one(w.Next)
		if err := w.Close(ctx); err != nil && a.Error == nil {
			a.Error = fail(err)
		}
		return a
	case "seq_next":
		return one(func() (int64, error) { return c.SequenceNextN(ctx, r.Space, r.Key, n) })
	case "seq_current":
		return one(func() (int64, error) { return c.SequenceCurrent(ctx, r.Space, r.Key) })
	}
	return answer{Error: &failure{Kind: "driver", Message: "unknown op " + r.Op}}
}

// startDraw starts r.Threads goroutines drawing ids of r.Tag: count each,
// or until draw_stop when count is 0, resting a millisecond after every
// r.Pace ids when it is set. An error is counted by kind and the goroutine
// goes on after a millisecond.
func (d *driver) startDraw(c *client.Client, r request, count int) *draw {
	dr := &draw{stop: make(chan struct{}), file: r.File, errors: map[string]int{}}
	threads := max(r.Threads, 1)
	dr.ids = make([][]int64, threads)
	for i := range threads {
		dr.wg.Go(func() {
			var ids []int64
			for count == 0 || len(ids) < count {
				select {
				case <-dr.stop:
					dr.ids[i] = ids
					return
				default:
				}
				id, err := c.Next(context.Background(), r.Tag)
				if err != nil {
					dr.mu.Lock()
					dr.errors[kindOf(err)]++
					dr.mu.Unlock()
					time.Sleep(time.Millisecond)
					continue
				}
				ids = append(ids, id)
				if r.Pace > 0 && len(ids)%r.Pace == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			dr.ids[i] = ids
		})
	}
	return dr
}

// drawStop stops the running draw and writes its ids to its file, one a
// line.
func (d *driver) drawStop() answer {
	dr := d.draw
	if dr == nil {
		return answer{Error: &failure{Kind: "driver", Message: "no draw runs"}}
	}
	d.draw = nil
	close(dr.stop)
	dr.wg.Wait()
	var b strings.Builder
	drawn := 0
	for _, ids := range dr.ids {
		for _, id := range ids {
			b.WriteString(strconv.FormatInt(id, 10))
			b.WriteByte('\n')
		}
		drawn += len(ids)
	}
	if err := os.WriteFile(dr.file, []byte(b.String()), 0o644); err != nil {
		return answer{Error: &failure{Kind: "driver", Message: err.Error()}}
	}
	return answer{Drawn: drawn, Errors: dr.errors}
}
