package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// TestTagRulesOneWay: `leaf tag add` and the admin API apply one rule of a
// new tag's settings (service.NewTagSettings): the same bad settings are
// refused by both with the same message, so a second copy of the rule in
// either would show here.
func TestTagRulesOneWay(t *testing.T) {
	const key = "the fleet key of 16 bytes or more"
	str := func(s string) *string { return &s }
	bits := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name    string
		args    []string // of tag add, after the name
		t       segment.Tag
		ordered bool
		g       service.TagSettings
		key     bool
	}{
		{"ordered and opaque", []string{"--ordered", "--opaque", "63"}, segment.Tag{}, true, service.TagSettings{Opaque: bits(63)}, true},
		{"a zone without a format", []string{"--time-zone", "UTC"}, segment.Tag{}, false, service.TagSettings{TimeZone: str("UTC")}, false},
		{"a reset without a format", []string{"--reset", "day"}, segment.Tag{}, false, service.TagSettings{Reset: str("day")}, false},
		{"no {seq}", []string{"--format", "A-{date:2006}"}, segment.Tag{}, false, service.TagSettings{Format: str("A-{date:2006}")}, false},
		{"a reset the date cannot tell", []string{"--format", "A-{date:200601}-{seq}", "--reset", "day"}, segment.Tag{}, false,
			service.TagSettings{Format: str("A-{date:200601}-{seq}"), Reset: str("day")}, false},
		{"an unknown reset", []string{"--format", "A-{seq}", "--reset", "week"}, segment.Tag{}, false,
			service.TagSettings{Format: str("A-{seq}"), Reset: str("week")}, false},
		{"formatted and opaque", []string{"--format", "A-{seq}", "--opaque", "63"}, segment.Tag{}, false,
			service.TagSettings{Format: str("A-{seq}"), Opaque: bits(63)}, true},
		{"opaque without a key", []string{"--opaque", "63"}, segment.Tag{}, false, service.TagSettings{Opaque: bits(63)}, false},
		{"opaque of 64 bits", []string{"--opaque", "64"}, segment.Tag{}, false, service.TagSettings{Opaque: bits(64)}, true},
		{"a format given empty", []string{"--format="}, segment.Tag{}, false, service.TagSettings{Format: str("")}, false},
		{"opaque given 0", []string{"--opaque=0"}, segment.Tag{}, false, service.TagSettings{Opaque: bits(0)}, true},
		{"a zone given empty", []string{"--time-zone="}, segment.Tag{}, false, service.TagSettings{TimeZone: str("")}, false},
		{"the machine's own zone", []string{"--format", "A-{date:20060102}-{seq}", "--time-zone", "Local"}, segment.Tag{}, false,
			service.TagSettings{Format: str("A-{date:20060102}-{seq}"), TimeZone: str("Local")}, false},
		{"max_id past 53 bits", []string{"--opaque", "53", "--max-id", "9007199254740992"}, segment.Tag{MaxID: 1 << 53}, false,
			service.TagSettings{Opaque: bits(53)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tag := tc.t
			tag.Name = "t"
			if tag.MaxID == 0 {
				tag.MaxID = 1
			}
			tag.Step = segment.DefaultStep
			rows := segmenttest.New()
			var keys [][]byte
			if tc.key {
				keys = [][]byte{[]byte(key)}
			}
			alloc := segment.New(rows, segment.Options{RefreshInterval: -1})
			t.Cleanup(func() { _ = alloc.Close() })
			biz := bizidtest.New(rows)
			is, err := bizid.New(bizid.Options{Store: biz, IDs: alloc, Keys: keys})
			if err != nil {
				t.Fatal(err)
			}
			admin := service.TagAdmin{Rows: rows, Settings: biz, Kinds: service.NewRegistry(biz, is, nil), Ordered: noOrdered{}}
			_, apiErr := admin.Create(context.Background(), service.NewTag{
				Name: tag.Name, Step: &tag.Step, MaxID: &tag.MaxID, Ordered: tc.ordered, Settings: tc.g,
			})
			if apiErr == nil {
				t.Fatal("the admin API took it")
			}
			_, msg := service.Classify(apiErr)

			e := env{}
			if tc.key {
				e["LEAF_OPAQUE_KEY"] = key
			}
			db := t.TempDir() + "/leaf.db"
			_, _, cliErr := runSplit(t, e, append([]string{"tag", "add", "t", "--sqlite-path", db}, tc.args...)...)
			if !errors.Is(cliErr, errUsage) || !strings.Contains(cliErr.Error(), msg) {
				t.Fatalf("tag add said %v;\nthe admin API %q", cliErr, msg)
			}
		})
	}
}

// noOrdered serves no ordered tag, but lets ordered ones be created.
type noOrdered struct{}

func (noOrdered) AddedOrdered(context.Context, string) {}
func (noOrdered) NextTag(context.Context, string, int) ([]int64, error) {
	return nil, errors.New("no ordered tags")
}

// TestTagAddAsTheAPI: leaf tag add creates a tag through the service's
// tag administration, as the admin API does, so a refusal reads the same
// both ways: a name that differs from a tag's only in case names that tag.
func TestTagAddAsTheAPI(t *testing.T) {
	db := t.TempDir() + "/leaf.db"
	if _, _, err := runSplit(t, env{}, "tag", "add", "orders", "--sqlite-path", db); err != nil {
		t.Fatal(err)
	}
	_, api := service.Classify(service.WithTag("Orders", &segment.ExistsError{Name: "Orders", Existing: "orders"}))
	_, _, err := runSplit(t, env{}, "tag", "add", "Orders", "--sqlite-path", db)
	if !errors.Is(err, segment.ErrTagExists) || !strings.HasSuffix(err.Error(), api) {
		t.Errorf("tag add Orders beside orders: %v; want the API's %q", err, api)
	}
}

// TestSpaceRulesOneWay: `leaf sequence add` and the admin API apply one
// rule of a new space (service.NewSpace.Space), explicit values included:
// the same bad space is refused by both with the same message, before the
// command line opens a store.
func TestSpaceRulesOneWay(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		args []string // of sequence add
		ns   service.NewSpace
	}{
		{"no sections", []string{"s", "--sections=0"}, service.NewSpace{Name: "s", Sections: n(0)}},
		{"too many sections", []string{"s", "--sections", "99999999999"}, service.NewSpace{Name: "s", Sections: n(99999999999)}},
		{"a step of 0", []string{"s", "--step=0"}, service.NewSpace{Name: "s", Step: n(0)}},
		{"a name ending in a space", []string{"s "}, service.NewSpace{Name: "s "}},
		{"a dot", []string{"."}, service.NewSpace{Name: "."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, apiErr := service.New(service.Config{Spaces: noSpaces{}}).CreateSpace(context.Background(), tc.ns)
			if apiErr == nil {
				t.Fatal("the admin API took it")
			}
			_, msg := service.Classify(apiErr)
			db := t.TempDir() + "/leaf.db"
			_, _, cliErr := runSplit(t, env{}, append([]string{"sequence", "add", "--sqlite-path", db}, tc.args...)...)
			if !errors.Is(cliErr, errUsage) || !strings.Contains(cliErr.Error(), msg) {
				t.Fatalf("sequence add said %v;\nthe admin API %q", cliErr, msg)
			}
			if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused space left a database file: %v", err)
			}
		})
	}
}

// noSpaces is a store of spaces that no call reaches.
type noSpaces struct{ service.SpaceAdmin }
