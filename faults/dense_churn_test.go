package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/store/storetest"
)

// TestDenseChurn kills the owner of an ordered tag and of a capped
// formatted tag with SIGKILL again and again, restarting it at once, under
// load through every instance. An owner holds the range it issues from and
// the range it loaded ahead, so each kill of a tag's owner may skip up to
// two steps of it, and each call cut off mid-way its own number; nothing
// else may be skipped, and no number issued twice.
func TestDenseChurn(t *testing.T) {
	requireSuite(t)
	const (
		step      = 100
		lease     = 2 * time.Second
		killEvery = 3 * time.Second
		workers   = 6
	)
	kills := sized(5, 15)
	tags := []string{"dense-ord", "dense-cap"}

	dsn := storetest.MySQL(t)
	leafCommand(t, "migrate", "--mysql-dsn", dsn)
	leafCommand(t, "tag", "add", tags[0], "--ordered", "--step", strconv.Itoa(step), "--mysql-dsn", dsn)
	leafCommand(t, "tag", "add", tags[1], "--format", "D-{date:20060102}-{seq:7!}", "--reset", "day",
		"--step", strconv.Itoa(step), "--mysql-dsn", dsn)
	ins := newInstances(t, "dense-churn", 3, func(int) []string {
		return []string{"--mysql-dsn", dsn, "--sequences", "--sequence-lease", lease.String(), "--forward-timeout", "1s"}
	})
	for _, in := range ins {
		in.args = append(in.args, "--advertise-addr", in.addr)
	}
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}

	l := &denseLoad{got: map[string]map[string][]int64{}, cut: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { l.run(ctx, ins, tags[w%len(tags)], w) })
	}
	// The killer: every killEvery, the owner of either tag (by its log)
	// is killed and started again at once.
	killed := map[string]int{}
	for n := range kills {
		time.Sleep(killEvery)
		victim := ins[n%len(ins)]
		for _, in := range ins {
			if len(ownedSectionsOf(in, tags[n%len(tags)])) > 0 {
				victim = in
			}
		}
		for _, tag := range tags {
			if len(ownedSectionsOf(victim, tag)) > 0 {
				killed[tag]++
			}
		}
		if err := victim.kill(); err != nil {
			t.Fatal(err)
		}
		if err := victim.start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(killEvery)
	cancel()
	wg.Wait()
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, "dense_churn")
	r.add("kills", kills)
	for _, tag := range tags {
		var numbers, twice, skipped int
		for _, nums := range l.got[tag] { // per day: a capped tag numbers each from 1
			tw, sk := denseHoles(nums)
			numbers, twice, skipped = numbers+len(nums), twice+tw, skipped+sk
		}
		allowed := 2*step*killed[tag] + l.cut[tag]
		r.add(tag+"_numbers", numbers)
		r.add(tag+"_owner_kills", killed[tag])
		r.add(tag+"_skipped", skipped)
		r.add(tag+"_failed_calls", l.cut[tag])
		r.bound(tag+"_twice", twice == 0, "%d numbers of %s issued twice, want none", twice, tag)
		r.bound(tag+"_served", numbers > 1000, "%d numbers of %s issued, want over 1,000", numbers, tag)
		r.bound(tag+"_skipped", skipped <= allowed,
			"%d numbers of %s skipped, want at most %d: two steps of %d for each of the %d kills of its owner, and the %d calls that failed but may have taken one",
			skipped, tag, allowed, step, killed[tag], l.cut[tag])
	}
	r.print()
}

// denseLoad asks for one number of a tag at a time, from every instance in
// turn, and keeps every number answered and the count of calls that may
// have taken one without its answer arriving.
type denseLoad struct {
	mu  sync.Mutex
	got map[string]map[string][]int64 // per tag and day (the text before the number)
	cut map[string]int
}

func (l *denseLoad) run(ctx context.Context, ins []*instance, tag string, w int) {
	c := &http.Client{Timeout: 3 * time.Second}
	for i := w; ctx.Err() == nil; i++ {
		in := ins[i%len(ins)]
		resp, err := c.Get(in.base() + "/api/segment/get/" + tag)
		if err != nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				l.add(tag, "", 0, true) // sent, and perhaps served: its number may be lost
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case err != nil || resp.StatusCode >= 500:
			l.add(tag, "", 0, true)
			time.Sleep(10 * time.Millisecond)
		case resp.StatusCode == http.StatusOK:
			day, n, perr := denseNumber(string(body))
			if perr != nil {
				panic(fmt.Sprintf("%s: %q: %v", tag, body, perr))
			}
			l.add(tag, day, n, false)
		}
	}
}

func (l *denseLoad) add(tag, day string, n int64, cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cut {
		l.cut[tag]++
		return
	}
	if l.got[tag] == nil {
		l.got[tag] = map[string][]int64{}
	}
	l.got[tag][day] = append(l.got[tag][day], n)
}

// denseNumber reads an ordered tag's id, or a capped tag's text
// (D-20261129-0000042): its day's prefix and its number.
func denseNumber(s string) (day string, n int64, err error) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		day, s = s[:i], s[i+1:]
	}
	n, err = strconv.ParseInt(s, 10, 64)
	return day, n, err
}

// denseHoles counts the numbers issued twice and the numbers from 1 to
// the highest issued that never were.
func denseHoles(nums []int64) (twice, skipped int) {
	sorted := slices.Clone(nums)
	slices.Sort(sorted)
	prev := int64(0)
	for i, n := range sorted {
		if i > 0 && n == sorted[i-1] {
			twice++
			continue
		}
		skipped += int(n - prev - 1)
		prev = n
	}
	return twice, skipped
}
