package segment

import (
	"fmt"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	tags := []string{"a", "ab", "abc", "abcd", "abcde", "orders", "orders1", "orders12", "orders123",
		"order-2024-01", "order-2024-02", "0123456789abcdef", "0123456789abcdeg",
		strings.Repeat("x", 40) + "1" + strings.Repeat("y", 40), strings.Repeat("x", 40) + "2" + strings.Repeat("y", 40)}
	for i := range 200 {
		tags = append(tags, fmt.Sprintf("tag:%d", i))
	}
	m := make(map[string]*buffer)
	for _, tag := range tags {
		m[tag] = &buffer{tag: tag}
	}
	tb := newTable(m)
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
	if b := newTable(nil).get("x"); b != nil {
		t.Fatal("empty table found a tag")
	}
}

func FuzzTable(f *testing.F) {
	f.Add("orders", "orders")
	f.Add("0123456789abcdef", "0123456789abcdeg")
	f.Fuzz(func(t *testing.T, in, probe string) {
		tb := newTable(map[string]*buffer{in: {tag: in}})
		b := tb.get(probe)
		if (b != nil) != (in == probe) {
			t.Fatalf("table of %q: get(%q) = %v", in, probe, b)
		}
	})
}
