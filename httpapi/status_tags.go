package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// The status page shows one page of tags, those that need attention first.
// Which tags are on it is read in one pass over every tag's figures
// (segment.Allocator.EachTag) and a sort of the names that match the
// search; only the tags of the page are described in full (State). At
// 100,000 tags that is about 60 ms, whatever the page, and the page's size
// is bounded by maxPerPage rather than by the number of tags.

// Paging of the status page's tags.
const (
	defaultPerPage = 100
	// maxPerPage keeps the largest page under 1 MB: a tag's row of the
	// HTML page is about 1.2 KB, its JSON about 0.4 KB.
	maxPerPage = 500
)

// tagQuery is what the status page was asked to show of the tags.
type tagQuery struct {
	// page counts from 1; perPage is 1..maxPerPage.
	page, perPage int
	// search, when not empty, keeps the tags whose name contains it,
	// without regard to case.
	search string
}

// parseTagQuery reads ?page=, ?per_page= and ?q=, each given at most once.
func parseTagQuery(q url.Values) (tagQuery, error) {
	tq := tagQuery{page: 1, perPage: defaultPerPage}
	for _, p := range []struct {
		name  string
		to    *int
		limit int
	}{{"page", &tq.page, 1_000_000_000}, {"per_page", &tq.perPage, maxPerPage}} {
		vs := q[p.name]
		if len(vs) == 0 {
			continue
		}
		n, err := strconv.Atoi(vs[0])
		if len(vs) > 1 || !allDigits(vs[0]) || err != nil || n < 1 || n > p.limit {
			return tagQuery{}, newError(http.StatusBadRequest, codeInvalidRequest, "%s must be given once, a whole number from 1 to %d", p.name, p.limit)
		}
		*p.to = n
	}
	if vs := q["q"]; len(vs) > 0 {
		if len(vs) > 1 || !utf8.ValidString(vs[0]) || utf8.RuneCountInString(vs[0]) > segment.MaxTagLen {
			return tagQuery{}, newError(http.StatusBadRequest, codeInvalidRequest, "q must be given once, at most %d characters of UTF-8", segment.MaxTagLen)
		}
		tq.search = vs[0]
	}
	return tq, nil
}

// Ranks of the tags on the status page: the ones that need attention
// first, the worst first.
const (
	rankFailedFirst = iota // the first load failed: no buffer, no id
	rankFailing            // the last load failed
	rankRegressed          // the row was found gone back in time
	rankOther
)

// tagEntry is a tag of the list: its name and rank.
type tagEntry struct {
	tag  string
	rank int
}

// tagsStatus is the segment section of the status: the totals over all
// tags and the page of tags asked for.
type tagsStatus struct {
	totals segment.Totals
	// failedFirst counts the tags whose first load failed; failing names
	// the first few by name of those whose last load failed (all of them
	// are counted in totals.Failing).
	failedFirst int
	failing     []string
	query       tagQuery
	// matching counts the tags the search keeps, pages their pages.
	matching, pages int
	// tags and failed are the page's tags with a buffer and those whose
	// first load failed.
	tags   []segment.BufferState
	failed []segment.FailedTag
	// failedAll are every tag whose first load failed, for the alert.
	failedAll []segment.FailedTag
}

// namesShown is how many tags an alert names; list says how many more.
const namesShown = 5

// readTags reads the totals and the page of tags tq asks for. hint is how
// many tags there were at the last read: the list of them is made that
// large at once rather than grown, which would allocate five times as
// much.
func readTags(seg service.SegmentIDs, tq tagQuery, hint int) tagsStatus {
	st := tagsStatus{query: tq, failedAll: seg.Failed()}
	st.failedFirst = len(st.failedAll)
	match := matcher(tq.search)
	var entries []tagEntry
	if tq.search == "" {
		entries = make([]tagEntry, 0, hint+hint/8)
	}
	byName := map[string]segment.FailedTag{}
	for _, f := range st.failedAll {
		if match(f.Tag) {
			entries = append(entries, tagEntry{tag: f.Tag, rank: rankFailedFirst})
			byName[f.Tag] = f
		}
	}
	st.totals = seg.EachTag(func(t segment.TagStats) {
		rank := rankOther
		switch {
		case t.Failing:
			rank = rankFailing
			st.failing = keepFirst(st.failing, t.Tag, namesShown)
		case t.Regressions > 0:
			rank = rankRegressed
		}
		if match(t.Tag) {
			entries = append(entries, tagEntry{tag: t.Tag, rank: rank})
		}
	})
	slices.SortFunc(entries, func(x, y tagEntry) int {
		if x.rank != y.rank {
			return x.rank - y.rank
		}
		return strings.Compare(x.tag, y.tag)
	})
	st.matching = len(entries)
	st.pages = max(1, (len(entries)+tq.perPage-1)/tq.perPage)
	from := min(len(entries), (tq.page-1)*tq.perPage)
	to := min(len(entries), from+tq.perPage)
	for _, e := range entries[from:to] {
		if e.rank == rankFailedFirst {
			st.failed = append(st.failed, byName[e.tag])
			continue
		}
		if b, ok := seg.State(e.tag); ok { // else dropped meanwhile
			st.tags = append(st.tags, b)
		}
	}
	return st
}

// keepFirst adds name to names, sorted, keeping the first n.
func keepFirst(names []string, name string, n int) []string {
	i, _ := slices.BinarySearch(names, name)
	if i >= n {
		return names
	}
	names = slices.Insert(names, i, name)
	return names[:min(len(names), n)]
}

// matcher returns whether a tag's name contains search, without regard
// to case; every name matches an empty search.
func matcher(search string) func(string) bool {
	if search == "" {
		return func(string) bool { return true }
	}
	lower := strings.ToLower(search)
	return func(tag string) bool {
		// ToLower returns a lower-case ASCII name as it is, without
		// allocating: most names cost no allocation.
		return strings.Contains(strings.ToLower(tag), lower)
	}
}
