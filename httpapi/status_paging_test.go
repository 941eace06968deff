package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
)

// pagingFixture is the status fixture with 250 tags t000..t249 instead of
// three: t100 and t230..t249 fail their loads, t200 went back in time, and
// broken failed its first load. order is the order the page lists them.
func pagingFixture() (fx *statusFixture, order []string) {
	fx = newStatusFixture()
	now := fx.clock.Now()
	fx.seg.states = nil
	var failing, regressed, rest []string
	for i := range 250 {
		b := segment.BufferState{
			Tag:      fmt.Sprintf("t%03d", i),
			Segments: [2]*segment.SegmentState{{Start: 1, End: 101, Next: 51, Remaining: 50, LoadedAt: now}},
			Step:     100, MinStep: 100, LastLoad: now, Issued: uint64(i), Loads: 1,
		}
		switch {
		case i == 100 || i >= 230:
			b.LastError, b.LoadFailures = "store unavailable", 2
			failing = append(failing, b.Tag)
		case i == 200:
			b.Regressions = 1
			regressed = append(regressed, b.Tag)
		default:
			rest = append(rest, b.Tag)
		}
		fx.seg.states = append(fx.seg.states, b)
	}
	fx.seg.failed = []segment.FailedTag{{Tag: "broken", Err: "misconfigured", Failures: 1, At: now.Add(-time.Second)}}
	return fx, slices.Concat([]string{"broken"}, failing, regressed, rest)
}

// pageJSON is the segment of /status.json, as far as paging goes.
type pageJSON struct {
	Segment struct {
		Tags   []struct{ Tag string } `json:"tags"`
		Failed []struct{ Tag string } `json:"failed"`
		Totals statusTotals           `json:"totals"`
		Page   statusPaging           `json:"page"`
	} `json:"segment"`
}

// names lists the page's tags in order: those whose first load failed
// come before the others.
func (p pageJSON) names() []string {
	var out []string
	for _, f := range p.Segment.Failed {
		out = append(out, f.Tag)
	}
	for _, t := range p.Segment.Tags {
		out = append(out, t.Tag)
	}
	return out
}

func TestStatusPages(t *testing.T) {
	fx, order := pagingFixture()
	v := newEnv(t, fx.config)
	ofT1 := []string{"t100"} // the failing one first
	for i := 101; i < 200; i++ {
		ofT1 = append(ofT1, fmt.Sprintf("t%03d", i))
	}
	tests := []struct {
		name   string
		query  string
		want   []string
		paging statusPaging
	}{
		{"first page", "", order[:100], statusPaging{Page: 1, PerPage: 100, Pages: 3, Matching: 251}},
		{"last page", "?page=3", order[200:], statusPaging{Page: 3, PerPage: 100, Pages: 3, Matching: 251}},
		{"pages of 7", "?page=3&per_page=7", order[14:21], statusPaging{Page: 3, PerPage: 7, Pages: 36, Matching: 251}},
		{"the largest page", "?per_page=500", order, statusPaging{Page: 1, PerPage: 500, Pages: 1, Matching: 251}},
		{"past the last page", "?page=4", nil, statusPaging{Page: 4, PerPage: 100, Pages: 3, Matching: 251}},
		{"search, any case", "?q=T1", ofT1, statusPaging{Page: 1, PerPage: 100, Pages: 1, Query: "T1", Matching: 100}},
		{"search, second page", "?q=t1&per_page=60&page=2", ofT1[60:], statusPaging{Page: 2, PerPage: 60, Pages: 2, Query: "t1", Matching: 100}},
		{"search for a failed tag", "?q=rok", []string{"broken"}, statusPaging{Page: 1, PerPage: 100, Pages: 1, Query: "rok", Matching: 1}},
		{"search without match", "?q=nothing", nil, statusPaging{Page: 1, PerPage: 100, Pages: 1, Query: "nothing", Matching: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out pageJSON
			decodeBody(t, v.do(t, http.MethodGet, "/status.json"+tt.query, nil), &out)
			if got := out.names(); !slices.Equal(got, tt.want) {
				t.Errorf("tags = %q, want %q", got, tt.want)
			}
			if out.Segment.Page != tt.paging {
				t.Errorf("page = %+v, want %+v", out.Segment.Page, tt.paging)
			}
			// The totals are those of all tags, whatever is shown.
			if tot := out.Segment.Totals; tot.Tags != 250 || tot.Failing != 21 || tot.Failed != 1 || tot.Regressions != 1 {
				t.Errorf("totals = %+v", tot)
			}

			body := v.do(t, http.MethodGet, "/status"+tt.query, nil).Body.String()
			var at []int
			for _, tag := range tt.want {
				i := strings.Index(body, `<bdi class="tag">`+tag+`</bdi>`)
				if i < 0 {
					t.Fatalf("the page lacks %s", tag)
				}
				at = append(at, i)
			}
			if !slices.IsSorted(at) {
				t.Errorf("the page lists the tags out of order")
			}
			if n := strings.Count(body, `<bdi class="tag">`); n != len(tt.want) {
				t.Errorf("the page shows %d tags, want %d", n, len(tt.want))
			}
		})
	}
}

// TestStatusPageLinks: the page says which tags it shows, links to the
// pages around it keeping the search, and says why it shows none.
func TestStatusPageLinks(t *testing.T) {
	fx, _ := pagingFixture()
	v := newEnv(t, fx.config)
	tests := []struct {
		query string
		want  []string
		not   []string
	}{
		{"", []string{
			`1–100 of 251 tags, those that need attention first`,
			`<a href="status?page=2" rel="next">`,
			// The alerts count every tag, and name the first few.
			`The last load failed for 21 tags: t100, t230, t231, t232, t233 and 16 more`,
			`1 tag failed to load and cannot issue ids: broken`,
		}, []string{`rel="prev"`, `name="per_page"`}},
		{"?q=t1&per_page=30&page=2", []string{
			`31–60 of 100 tags whose name contains &#34;t1&#34;, those that need attention first`,
			`<a href="status?page=1&amp;per_page=30&amp;q=t1" rel="prev">`,
			`<a href="status?page=3&amp;per_page=30&amp;q=t1" rel="next">`,
			`<input type="search" name="q" value="t1"`,
			`<input type="hidden" name="per_page" value="30">`,
		}, nil},
		{"?page=9", []string{
			`Page 9 is past the last one, 3.`,
			`<a href="status?page=3" rel="prev">`,
		}, []string{`rel="next"`, `id="showing"`}},
		{"?q=%3Cnothing%3E", []string{
			`No tag&#39;s name contains &#34;&lt;nothing&gt;&#34;.`,
		}, []string{`rel="next"`, `rel="prev"`, `<nothing>`}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			body := v.do(t, http.MethodGet, "/status"+tt.query, nil).Body.String()
			for _, want := range tt.want {
				if !strings.Contains(body, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(body, not) {
					t.Errorf("the page has %q", not)
				}
			}
		})
	}
}

func TestStatusBadPaging(t *testing.T) {
	v := newEnv(t)
	for _, q := range []string{
		"page=0", "page=-1", "page=x", "page=1.5", "page=+2", "page=1&page=2", "page=1000000001",
		"per_page=0", "per_page=501", "per_page=", "q=a&q=b", "q=" + strings.Repeat("x", segment.MaxTagLen+1), "q=%FF", "page=%zz",
	} {
		for _, path := range []string{"/status", "/status.json"} {
			wantError(t, v.do(t, http.MethodGet, path+"?"+q, nil), http.StatusBadRequest, "invalid_request")
		}
	}
	for _, q := range []string{"page=1", "page=007", "per_page=500", "q=" + strings.Repeat("é", segment.MaxTagLen), "q=", "other=1"} {
		if rec := v.do(t, http.MethodGet, "/status.json?"+q, nil); rec.Code != http.StatusOK {
			t.Errorf("?%s = %d %s", q, rec.Code, rec.Body)
		}
	}
}
