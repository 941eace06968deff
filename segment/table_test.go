package segment

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTable(t *testing.T) {
	tags := []string{"a", "ab", "abc", "abcd", "abcde", "orders", "orders1", "orders12", "orders123",
		"order-2024-01", "order-2024-02", "0123456789abcdef", "0123456789abcdeg",
		strings.Repeat("x", 40) + "1" + strings.Repeat("y", 40), strings.Repeat("x", 40) + "2" + strings.Repeat("y", 40)}
	for i := range 200 {
		tags = append(tags, fmt.Sprintf("tag:%d", i))
	}
	tb := tableWith(tags...)
	for _, tag := range tags {
		if b := tb.get(tag); b == nil || b.tag != tag {
			t.Fatalf("get(%q) = %v", tag, b)
		}
	}
	for _, miss := range []string{"", "b", "orders0", "order-2024-03", strings.Repeat("x", 40) + "3" + strings.Repeat("y", 40), "tag:200"} {
		if b := tb.get(miss); b != nil {
			t.Fatalf("get(%q) = buffer of %q, want nil", miss, b.tag)
		}
	}
	if b := newTable(0).get("x"); b != nil {
		t.Fatal("empty table found a tag")
	}
}

// tableWith returns a table serving a buffer for each tag.
func tableWith(tags ...string) *table {
	t := newTable(0)
	for _, tag := range tags {
		t = t.set(tag, &buffer{tag: tag})
	}
	return t
}

// TestTableGrows: tags added one at a time; the table doubles as they come
// and keeps at most half its slots used; one built without some of them
// holds the others.
func TestTableGrows(t *testing.T) {
	tb := newTable(0)
	live := map[string]*buffer{}
	for i := range 1000 {
		tag := fmt.Sprintf("t%d", i)
		live[tag] = &buffer{tag: tag}
		tb = tb.set(tag, live[tag])
		if uint64(tb.used)*2 > uint64(len(tb.entries)) {
			t.Fatalf("%d slots used of %d", tb.used, len(tb.entries))
		}
	}
	for i := range 500 { // a tag set again gets its new buffer in its slot
		tag := fmt.Sprintf("t%d", i)
		live[tag] = &buffer{tag: tag}
		tb = tb.set(tag, live[tag])
	}
	check := func(tt *table, live map[string]*buffer) {
		t.Helper()
		if tt.used != len(live) || len(tt.entries) > 4*len(live) {
			t.Fatalf("%d slots used, %d in all, for %d tags", tt.used, len(tt.entries), len(live))
		}
		for tag, b := range live {
			if got := tt.get(tag); got != b {
				t.Fatalf("get(%q) = %p, want %p", tag, got, b)
			}
		}
	}
	check(tb, live)
	gone := map[*buffer]bool{}
	for i := range 700 {
		tag := fmt.Sprintf("t%d", i*7%1000)
		gone[live[tag]] = true
	}
	smaller := tb.without(gone)
	for tag, b := range live {
		if gone[b] {
			delete(live, tag)
			if got := smaller.get(tag); got != nil {
				t.Fatalf("get(%q) = %p after it was left out", tag, got)
			}
		}
	}
	check(smaller, live)
}

// TestTableReadersDuringWrites: readers without a lock see every tag
// published before they looked, and a complete entry for every other one.
func TestTableReadersDuringWrites(t *testing.T) {
	var cur atomic.Pointer[table]
	cur.Store(newTable(0))
	var published atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := published.Load()
				tb := cur.Load()
				for i := range n {
					tag := fmt.Sprintf("reader-%d", i)
					if b := tb.get(tag); b == nil || b.tag != tag {
						t.Errorf("get(%q) = %v after it was published", tag, b)
						return
					}
				}
			}
		})
	}
	tb := cur.Load()
	for i := range 3000 {
		tag := fmt.Sprintf("reader-%d", i)
		tb = tb.set(tag, &buffer{tag: tag})
		cur.Store(tb)
		published.Store(int64(i + 1))
	}
	close(stop)
	wg.Wait()
}

// TestTableReadersOfAbsentTags: a reader asking for a tag not published
// yet gets nil, never the buffer of the tag a writer is putting in the
// empty slot where the reader's search ended. Each round the writer puts,
// in a fresh table, a tag whose search starts at the same slot as the
// absent one's, while a reader asks for the absent one without pause.
func TestTableReadersOfAbsentTags(t *testing.T) {
	const absent = "an-absent-tag-of-the-test"
	probe := newTable(64)
	_, _, lo, hi := probe.lookup(absent)
	home := probe.home(lo, hi, len(absent))
	var colliding []string
	for i := 0; len(colliding) < 16; i++ {
		tag := fmt.Sprintf("a-colliding-tag-%06d", i)
		_, _, lo, hi := probe.lookup(tag)
		if probe.home(lo, hi, len(tag)) == home {
			colliding = append(colliding, tag)
		}
	}
	var cur atomic.Pointer[table]
	cur.Store(newTable(64))
	var wrong atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b := cur.Load().get(absent); b != nil {
				wrong.Add(1)
			}
		}
	})
	rounds := 0
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline) && wrong.Load() == 0; rounds++ {
		tb := newTable(64)
		cur.Store(tb)
		for _, tag := range colliding {
			tb.set(tag, &buffer{tag: tag})
		}
	}
	close(stop)
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		t.Errorf("in %d rounds, %d gets of a tag never published returned another tag's buffer", rounds, n)
	}
}

func FuzzTable(f *testing.F) {
	f.Add("orders", "orders")
	f.Add("0123456789abcdef", "0123456789abcdeg")
	f.Fuzz(func(t *testing.T, in, probe string) {
		tb := tableWith(in)
		b := tb.get(probe)
		if (b != nil) != (in == probe) {
			t.Fatalf("table of %q: get(%q) = %v", in, probe, b)
		}
	})
}
