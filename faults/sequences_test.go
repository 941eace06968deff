package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store/storetest"
)

// TestSequenceOwnersKilled runs three instances serving one space of
// per-key sequences on one database, under callers that each own a part
// of the keys and ask any instance for their next numbers, one call at a
// time per key; every few seconds the next instance is killed with SIGKILL
// and started again at once, so the sections it owned wait for their
// leases to run out and move. No key may ever get a number twice, or a
// number not above the last one it got. Each section the killed instance
// served must answer a number again, at the new owner, within the lease
// and a little of the kill: its heir takes it the moment its lease runs
// out.
func TestSequenceOwnersKilled(t *testing.T) {
	requireSuite(t)
	var (
		keys   = sized(10_000, 100_000)
		runFor = sized(30*time.Second, 2*time.Minute)
	)
	const (
		workers   = 12
		killEvery = 4 * time.Second
		lease     = 2 * time.Second
		sections  = 64
		// orderedWorkers ask for ids of an ordered tag beside.
		orderedWorkers = 4
	)
	dsn := storetest.MySQL(t)
	leafCommand(t, "migrate", "--mysql-dsn", dsn)
	leafCommand(t, "sequence", "add", "inbox", "--step", "100", "--sections", strconv.Itoa(sections), "--mysql-dsn", dsn)
	leafCommand(t, "tag", "add", "ordered", "--ordered", "--step", "100", "--mysql-dsn", dsn)
	ins := newInstances(t, "sequence-owners-killed", 3, func(int) []string {
		return []string{"--mysql-dsn", dsn, "--sequence-lease", lease.String(), "--snowflake=false"}
	})
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var (
		calls, numbers, unavailable, refused atomic.Int64
		mu                                   sync.Mutex
		problems                             []string
		last                                 = make([]int64, keys) // per key, only its worker writes
		// answered are, per worker, the calls answered 200, with the
		// section of their key.
		answered = make([][]sectionCall, workers)
	)
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 23))
			for ctx.Err() == nil {
				k := w + workers*rng.IntN((keys-w+workers-1)/workers)
				count := 1
				if rng.IntN(10) == 0 {
					count = 1 + rng.IntN(50)
				}
				target := ins[rng.IntN(len(ins))]
				url := target.base() + "/api/sequence/next/inbox/key-" + strconv.Itoa(k)
				if count > 1 {
					url += "?count=" + strconv.Itoa(count)
				}
				calls.Add(1)
				start := time.Now()
				resp, err := client.Get(url)
				if err != nil {
					refused.Add(1) // a killed instance
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
				case http.StatusServiceUnavailable:
					unavailable.Add(1)
					time.Sleep(20 * time.Millisecond)
					continue
				default:
					problem("%s: %d %s", url, resp.StatusCode, body)
					continue
				}
				got, err := parseSeqs(body, count)
				if err != nil {
					problem("%s: %v", url, err)
					continue
				}
				for _, v := range got {
					if v <= last[k] {
						problem("key-%d got %d after %d", k, v, last[k])
					}
					last[k] = v
				}
				numbers.Add(int64(len(got)))
				answered[w] = append(answered[w], sectionCall{section: sequence.SectionOf("key-"+strconv.Itoa(k), sections),
					start: start, end: time.Now()})
			}
		})
	}

	// The killer. After each kill and restart, it waits until the three
	// instances own every section again, and records how long after the
	// kill that was.
	// Callers of the ordered tag, at any instance: every call's id, and
	// when the call started and ended.
	var (
		orderedMu    sync.Mutex
		orderedCalls []orderedCall
	)
	for w := range orderedWorkers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 5))
			for ctx.Err() == nil {
				target := ins[rng.IntN(len(ins))]
				start := time.Now()
				resp, err := client.Get(target.base() + "/api/segment/get/ordered")
				if err != nil {
					refused.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				end := time.Now()
				switch resp.StatusCode {
				case http.StatusOK:
				case http.StatusServiceUnavailable:
					unavailable.Add(1)
					time.Sleep(20 * time.Millisecond)
					continue
				default:
					problem("ordered: %d %s", resp.StatusCode, body)
					continue
				}
				id, err := strconv.ParseInt(string(body), 10, 64)
				if err != nil {
					problem("ordered: %q", body)
					continue
				}
				orderedMu.Lock()
				orderedCalls = append(orderedCalls, orderedCall{id: id, start: start, end: end})
				orderedMu.Unlock()
			}
		})
	}

	clk := newClock()
	kills := 0
	var (
		moves   []time.Duration
		victims []killedOwner
	)
	for n := 0; clk.now() < runFor; n++ {
		time.Sleep(killEvery)
		in := ins[n%len(ins)]
		v := killedOwner{sections: ownedSectionsOf(in, "inbox"), tag: len(ownedSectionsOf(in, "ordered")) > 0}
		at := time.Now()
		v.at = at
		victims = append(victims, v)
		if err := in.kill(); err != nil {
			t.Errorf("kill %s: %v", in.name, err)
			break
		}
		if err := in.start(); err != nil {
			t.Errorf("restart %s: %v", in.name, err)
			break
		}
		kills++
		for time.Since(at) < 10*lease {
			if sectionsOwned(client, ins) == sections+1 { // the ordered tag's too
				moves = append(moves, time.Since(at))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The load goes on a while after the last move, so that every
	// section of the last victim is asked for at its new owner.
	time.Sleep(time.Second)
	ran := clk.now()
	cancel()
	wg.Wait()
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, "sequence-owners-killed")
	r.add("instances", len(ins))
	r.add("seconds", ran.Seconds())
	r.add("kills", kills)
	r.add("keys", keys)
	r.add("calls", calls.Load())
	r.add("numbers", numbers.Load())
	r.add("unavailable_503", unavailable.Load())
	r.add("refused_connections", refused.Load())
	r.add("lease", lease)
	var longest time.Duration
	for _, m := range moves {
		longest = max(longest, m)
	}
	r.add("moves_measured", len(moves))
	r.add("longest_move", longest)
	// From each kill to the first number each section of the victim
	// gave at its new owner: a call that began after the kill and was
	// answered 200.
	var calls200 []sectionCall
	for _, a := range answered {
		calls200 = append(calls200, a...)
	}
	firsts, unserved, worst := firstAfterKills(victims, calls200, orderedCalls)
	taken := takenAfterKills(ins, victims)
	r.add("victim_sections_measured", len(firsts))
	r.add("kill_to_taken_p50", percentile(taken, 0.5))
	r.add("kill_to_taken_max", maxDur(taken))
	r.add("kill_to_first_number_p50", percentile(firsts, 0.5))
	r.add("kill_to_first_number_max", maxDur(firsts))
	r.bound("sections_taken_within_lease", len(taken) > 0 && maxDur(taken) <= lease+takeSlack,
		"%d sections of killed owners taken again, longest %v after the kill; want all within the lease %v and %v",
		len(taken), maxDur(taken), lease, takeSlack)
	r.bound("sections_answer_within_lease", len(unserved) == 0 && len(firsts) > 0 && maxDur(firsts) <= lease+answerSlack,
		"%d sections of killed owners answered again, longest %v after the kill (%s), %d not before the next kill %v; want all within the lease %v and %v",
		len(firsts), maxDur(firsts), worst, len(unserved), unserved, lease, answerSlack)
	// Every section is owned again once the killed owner's leases ran
	// out and the restarted instance took the sections it wins from the
	// others (a handover, up to two rounds), plus the time to read the
	// metrics.
	r.bound("sections_move_in_time", len(moves) == kills && longest < 2*lease, "%d of %d kills measured, longest %v, lease %v", len(moves), kills, longest, lease)
	outOfOrder := checkOrdered(orderedCalls)
	r.add("ordered_ids", len(orderedCalls))
	r.bound("ordered_ids_in_order", outOfOrder == 0 && len(orderedCalls) > 0,
		"%d of %d ordered ids not above an id whose call ended before theirs began", outOfOrder, len(orderedCalls))
	r.bound("no_repeat_no_decrease", len(problems) == 0, "%d problems, first: %v", len(problems), problems)
	r.bound("numbers_issued", numbers.Load() > int64(keys), "%d numbers for %d keys", numbers.Load(), keys)
	r.print()
}

// What a killed owner's section may take beyond its lease (counted from
// the owner's last renewal, before the kill): takeSlack to be taken (the
// timer, the statement that takes it, on a busy machine), answerSlack to
// answer a caller again (that and the time until a caller asks for one of
// its keys: a caller answered 503 waits 20 ms).
const (
	takeSlack   = 250 * time.Millisecond
	answerSlack = 500 * time.Millisecond
)

// sectionCall is a call for a key of a section, answered 200.
type sectionCall struct {
	section    int
	start, end time.Time
}

// killedOwner is an instance killed with the sections it served, and
// whether it served the ordered tag.
type killedOwner struct {
	at       time.Time
	sections []int
	tag      bool
}

// firstAfterKills is, for every section (and the ordered tag) that a
// killed instance served, the time from the kill to the end of the first
// call that began after it and was answered 200 (by another instance:
// the victim was dead) before the next kill; unserved names those with
// none.
func firstAfterKills(victims []killedOwner, calls []sectionCall, tag []orderedCall) (firsts []time.Duration, unserved []string, worst string) {
	for i, v := range victims {
		until := time.Now()
		if i+1 < len(victims) {
			until = victims[i+1].at
		}
		// first notes the earliest end among the calls that began
		// after the kill and ended before the next.
		first := func(what string, n int, call func(int) (start, end time.Time)) {
			var best time.Time
			for i := range n {
				start, end := call(i)
				if !start.Before(v.at) && end.Before(until) && (best.IsZero() || end.Before(best)) {
					best = end
				}
			}
			if best.IsZero() {
				unserved = append(unserved, fmt.Sprintf("%s after kill %d", what, i+1))
				return
			}
			if d := best.Sub(v.at); d > maxDur(firsts) {
				worst = fmt.Sprintf("%s after kill %d", what, i+1)
			}
			firsts = append(firsts, best.Sub(v.at))
		}
		for _, sec := range v.sections {
			var of []sectionCall
			for _, c := range calls {
				if c.section == sec {
					of = append(of, c)
				}
			}
			first(fmt.Sprintf("section %d", sec), len(of), func(i int) (time.Time, time.Time) { return of[i].start, of[i].end })
		}
		if v.tag {
			first("the ordered tag", len(tag), func(i int) (time.Time, time.Time) { return tag[i].start, tag[i].end })
		}
	}
	return firsts, unserved, worst
}

// takenAfterKills is, for every section (and the ordered tag) that a
// killed instance served, the time from the kill to the first "section
// taken" of it in any instance's log after the kill, by the time the line
// gives.
func takenAfterKills(ins []*instance, victims []killedOwner) []time.Duration {
	type sec struct {
		space   string
		section int
	}
	var takes []struct {
		at time.Time
		s  sec
	}
	for _, in := range ins {
		for _, l := range in.logs.withMsg(msgSectionTaken) {
			at, err := time.Parse(time.RFC3339Nano, l.str("time"))
			n, ok := l.num("section")
			if err == nil && ok {
				takes = append(takes, struct {
					at time.Time
					s  sec
				}{at, sec{l.str("space"), int(n)}})
			}
		}
	}
	var out []time.Duration
	for _, v := range victims {
		want := map[sec]bool{}
		for _, s := range v.sections {
			want[sec{"inbox", s}] = true
		}
		if v.tag {
			want[sec{"ordered", sequence.OrderedSection}] = true
		}
		first := map[sec]time.Time{}
		for _, t := range takes {
			if want[t.s] && !t.at.Before(v.at) && (first[t.s].IsZero() || t.at.Before(first[t.s])) {
				first[t.s] = t.at
			}
		}
		for _, at := range first {
			out = append(out, at.Sub(v.at))
		}
	}
	return out
}

// parseSeqs reads the answer of next: one number, or the JSON of a batch.
func parseSeqs(body []byte, count int) ([]int64, error) {
	if count == 1 {
		v, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("answer %q: %w", body, err)
		}
		return []int64{v}, nil
	}
	var out struct{ Seqs []string }
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	if len(out.Seqs) != count {
		return nil, fmt.Errorf("%d numbers, asked for %d", len(out.Seqs), count)
	}
	vs := make([]int64, len(out.Seqs))
	for i, s := range out.Seqs {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || i > 0 && v != vs[i-1]+1 {
			return nil, fmt.Errorf("batch %q is not consecutive numbers", out.Seqs)
		}
		vs[i] = v
	}
	return vs, nil
}

// sectionsOwned adds leaf_sequence_sections_owned of every instance; an
// instance that does not answer counts 0.
func sectionsOwned(c *http.Client, ins []*instance) int {
	total := 0
	for _, in := range ins {
		resp, err := c.Get(in.base() + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for line := range strings.SplitSeq(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "leaf_sequence_sections_owned "); ok {
				n, _ := strconv.ParseFloat(v, 64)
				total += int(n)
			}
		}
	}
	return total
}

// orderedCall is one id of an ordered tag and when its call ran.
type orderedCall struct {
	id         int64
	start, end time.Time
}

// checkOrdered counts the ids that are not above every id whose call
// ended before theirs started (a duplicate counts too): ids of an ordered
// tag strictly increase in the order they are issued, whichever instance
// issued them.
func checkOrdered(calls []orderedCall) int {
	byStart := slices.Clone(calls)
	slices.SortFunc(byStart, func(a, b orderedCall) int { return a.start.Compare(b.start) })
	byEnd := slices.Clone(calls)
	slices.SortFunc(byEnd, func(a, b orderedCall) int { return a.end.Compare(b.end) })
	bad, j := 0, 0
	var highest int64 // the highest id of the calls ended so far
	seen := make(map[int64]bool, len(calls))
	for _, c := range byStart {
		for j < len(byEnd) && byEnd[j].end.Before(c.start) {
			highest = max(highest, byEnd[j].id)
			j++
		}
		if c.id <= highest || seen[c.id] {
			bad++
		}
		seen[c.id] = true
	}
	return bad
}

func TestCheckOrdered(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, int64(ms)*int64(time.Millisecond)) }
	call := func(id int64, start, end int) orderedCall { return orderedCall{id: id, start: at(start), end: at(end)} }
	for _, tc := range []struct {
		name  string
		calls []orderedCall
		bad   int
	}{
		{"in order", []orderedCall{call(1, 0, 1), call(2, 2, 3), call(3, 4, 5)}, 0},
		{"lower after", []orderedCall{call(5, 0, 1), call(3, 2, 3)}, 1},
		{"overlapping calls may cross", []orderedCall{call(5, 0, 3), call(3, 1, 2)}, 0},
		{"twice", []orderedCall{call(4, 0, 3), call(4, 1, 2)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkOrdered(tc.calls); got != tc.bad {
				t.Fatalf("checkOrdered = %d, want %d", got, tc.bad)
			}
		})
	}
}
