package segmenttest_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
)

var ctx = context.Background()

func TestAllocate(t *testing.T) {
	tests := []struct {
		name        string
		row         segment.Tag
		ask         string
		step, floor int64
		fold        bool
		want        segment.Allocation
		wantErr     error
	}{
		{name: "the row's step", row: segment.Tag{Name: "t", MaxID: 1, Step: 10}, ask: "t",
			want: segment.Allocation{MaxID: 11, Step: 10, DBStep: 10}},
		{name: "a step asked", row: segment.Tag{Name: "t", MaxID: 1, Step: 10}, ask: "t", step: 25,
			want: segment.Allocation{MaxID: 26, Step: 25, DBStep: 10}},
		{name: "above a floor", row: segment.Tag{Name: "t", MaxID: 1, Step: 10}, ask: "t", floor: 500,
			want: segment.Allocation{MaxID: 510, Step: 10, DBStep: 10}},
		{name: "a floor below max_id", row: segment.Tag{Name: "t", MaxID: 100, Step: 10}, ask: "t", floor: 5,
			want: segment.Allocation{MaxID: 110, Step: 10, DBStep: 10}},
		{name: "the last ids", row: segment.Tag{Name: "t", MaxID: math.MaxInt64 - 3, Step: 10}, ask: "t",
			want: segment.Allocation{MaxID: math.MaxInt64, Step: 3, DBStep: 10}},
		{name: "exhausted", row: segment.Tag{Name: "t", MaxID: math.MaxInt64, Step: 10}, ask: "t", wantErr: segment.ErrExhausted},
		{name: "misconfigured", row: segment.Tag{Name: "t", MaxID: 1, Step: 0}, ask: "t", wantErr: segment.ErrMisconfigured},
		{name: "misconfigured row, step asked", row: segment.Tag{Name: "t", MaxID: 1, Step: 0}, ask: "t", step: 5,
			want: segment.Allocation{MaxID: 6, Step: 5, DBStep: 0}},
		{name: "unknown", row: segment.Tag{Name: "t", MaxID: 1, Step: 10}, ask: "u", wantErr: segment.ErrUnknownTag},
		{name: "another case", row: segment.Tag{Name: "t", MaxID: 1, Step: 10}, ask: "T", wantErr: segment.ErrUnknownTag},
		{name: "another case, folded", row: segment.Tag{Name: "t", MaxID: 1, Step: 10}, ask: "T", fold: true,
			want: segment.Allocation{MaxID: 11, Step: 10, DBStep: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := segmenttest.New(tt.row)
			st.SetFold(tt.fold)
			var (
				got segment.Allocation
				err error
			)
			if tt.floor != 0 {
				got, err = st.AllocateAbove(ctx, tt.ask, tt.step, tt.floor)
			} else {
				got, err = st.Allocate(ctx, tt.ask, tt.step)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %+v, %v; want %+v", got, err, tt.want)
			}
			if row, _ := st.Tag(ctx, tt.row.Name); row.MaxID != got.MaxID {
				t.Fatalf("row max_id %d, want %d", row.MaxID, got.MaxID)
			}
		})
	}
}

func TestSharedSequence(t *testing.T) {
	st := segmenttest.NewShared(
		segment.Tag{Name: "a", MaxID: 1, Step: 10},
		segment.Tag{Name: "b", MaxID: 1, Step: 100},
		segment.Tag{Name: "spent", MaxID: math.MaxInt64, Step: 10},
	)
	type rng struct{ lo, hi int64 }
	var got []rng
	for _, tag := range []string{"a", "b", "a", "b"} {
		a, err := st.Allocate(ctx, tag, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rng{a.MaxID - a.Step, a.MaxID})
	}
	if want := []rng{{1, 11}, {11, 111}, {111, 121}, {121, 221}}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("ranges %v, want %v: one sequence for every row", got, want)
	}
	if row, _ := st.Tag(ctx, "a"); row.MaxID != 1 {
		t.Fatalf("row a max_id = %d, want 1: the sequence moves, not the row", row.MaxID)
	}
	if a, err := st.AllocateAbove(ctx, "a", 0, 1000); err != nil || a.MaxID != 1010 {
		t.Fatalf("AllocateAbove(1000) = %+v, %v; want max_id 1010", a, err)
	}
	if ok, err := st.HandBack(ctx, "a", 1010, 1005); !ok || err != nil {
		t.Fatalf("HandBack = %v, %v", ok, err)
	}
	if a, _ := st.Allocate(ctx, "b", 0); a.MaxID != 1105 {
		t.Fatalf("after the hand-back max_id = %d, want 1105", a.MaxID)
	}
	if _, err := st.Allocate(ctx, "spent", 0); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("a row at the maximum = %v, want ErrExhausted", err)
	}
}

func TestHandBack(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
	if _, err := st.Allocate(ctx, "t", 0); err != nil {
		t.Fatal(err)
	}
	if ok, _ := st.HandBack(ctx, "t", 50, 10); ok {
		t.Fatal("HandBack from a max_id the row does not have")
	}
	if ok, _ := st.HandBack(ctx, "T", 101, 10); ok {
		t.Fatal("HandBack of another name")
	}
	if ok, err := st.HandBack(ctx, "t", 101, 10); !ok || err != nil {
		t.Fatalf("HandBack = %v, %v", ok, err)
	}
	if row, _ := st.Tag(ctx, "t"); row.MaxID != 10 {
		t.Fatalf("max_id = %d, want 10", row.MaxID)
	}
}

func TestCreateTag(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		tag     segment.Tag
		wantErr error
	}{
		{"ok", segment.Tag{Name: "new", MaxID: 1, Step: 10, Description: "d"}, nil},
		{"taken", segment.Tag{Name: "orders", MaxID: 1, Step: 10}, segment.ErrTagExists},
		{"empty name", segment.Tag{MaxID: 1, Step: 10}, segment.ErrInvalidTag},
		{"dot-dot", segment.Tag{Name: "..", MaxID: 1, Step: 10}, segment.ErrInvalidTag},
		{"step 0", segment.Tag{Name: "x", MaxID: 1}, segment.ErrInvalidStep},
		{"max_id 0", segment.Tag{Name: "x", Step: 10}, segment.ErrInvalidMaxID},
		{"control character in description", segment.Tag{Name: "x", MaxID: 1, Step: 10, Description: "\x00"}, segment.ErrInvalidDescription},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orders := segment.Tag{Name: "orders", MaxID: 2001, Step: 1000}
			st := segmenttest.New(orders)
			st.SetNow(func() time.Time { return at })
			got, err := st.CreateTag(ctx, tt.tag)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if tags, _ := st.Tags(ctx); len(tags) != 1 || tags[0] != orders {
					t.Fatalf("rows %+v after a refused create", tags)
				}
				return
			}
			want := tt.tag
			want.UpdateTime = at
			if err != nil || got != want {
				t.Fatalf("= %+v, %v; want %+v", got, err, want)
			}
			if row, err := st.Tag(ctx, tt.tag.Name); err != nil || row != want {
				t.Fatalf("row %+v, %v; want %+v", row, err, want)
			}
		})
	}
}

func TestUpdateTag(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	i64 := func(v int64) *int64 { return &v }
	str := func(v string) *string { return &v }
	tests := []struct {
		name    string
		tag     string
		u       segment.TagUpdate
		want    segment.Tag
		wantErr error
	}{
		{name: "step", tag: "orders", u: segment.TagUpdate{Step: i64(5)},
			want: segment.Tag{Name: "orders", MaxID: 2001, Step: 5, Description: "d", UpdateTime: at}},
		{name: "raise max_id", tag: "orders", u: segment.TagUpdate{MaxID: i64(5000)},
			want: segment.Tag{Name: "orders", MaxID: 5000, Step: 1000, Description: "d", UpdateTime: at}},
		{name: "same max_id", tag: "orders", u: segment.TagUpdate{MaxID: i64(2001)},
			want: segment.Tag{Name: "orders", MaxID: 2001, Step: 1000, Description: "d", UpdateTime: at}},
		{name: "description", tag: "orders", u: segment.TagUpdate{Description: str("")},
			want: segment.Tag{Name: "orders", MaxID: 2001, Step: 1000, UpdateTime: at}},
		{name: "lower max_id", tag: "orders", u: segment.TagUpdate{MaxID: i64(10)}, wantErr: segment.ErrInvalidMaxID},
		{name: "max_id at the maximum", tag: "orders", u: segment.TagUpdate{MaxID: i64(math.MaxInt64)}, wantErr: segment.ErrInvalidMaxID},
		{name: "step too big", tag: "orders", u: segment.TagUpdate{Step: i64(segment.MaxStep + 1)}, wantErr: segment.ErrInvalidStep},
		{name: "unknown", tag: "nosuch", u: segment.TagUpdate{Step: i64(5)}, wantErr: segment.ErrUnknownTag},
		{name: "another case", tag: "ORDERS", u: segment.TagUpdate{Step: i64(5)}, wantErr: segment.ErrUnknownTag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orders := segment.Tag{Name: "orders", MaxID: 2001, Step: 1000, Description: "d"}
			st := segmenttest.New(orders)
			st.SetNow(func() time.Time { return at })
			got, err := st.UpdateTag(ctx, tt.tag, tt.u)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if row, _ := st.Tag(ctx, "orders"); row != orders {
					t.Fatalf("row %+v after a refused update", row)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %+v, %v; want %+v", got, err, tt.want)
			}
			if row, _ := st.Tag(ctx, "orders"); row != tt.want {
				t.Fatalf("row %+v, want %+v", row, tt.want)
			}
		})
	}
}

func TestFail(t *testing.T) {
	errDown := errors.New("down")
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	st.SetFail(errDown)
	calls := map[string]func() error{
		"Allocate":      func() error { _, err := st.Allocate(ctx, "t", 0); return err },
		"AllocateAbove": func() error { _, err := st.AllocateAbove(ctx, "t", 0, 5); return err },
		"Tag":           func() error { _, err := st.Tag(ctx, "t"); return err },
		"Tags":          func() error { _, err := st.Tags(ctx); return err },
		"FindTags":      func() error { _, err := st.FindTags(ctx, []string{"t"}); return err },
		"HandBack":      func() error { _, err := st.HandBack(ctx, "t", 1, 1); return err },
		"CreateTag": func() error {
			_, err := st.CreateTag(ctx, segment.Tag{Name: "u", MaxID: 1, Step: 10})
			return err
		},
		"UpdateTag": func() error {
			step := int64(5)
			_, err := st.UpdateTag(ctx, "t", segment.TagUpdate{Step: &step})
			return err
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, errDown) {
			t.Errorf("%s = %v, want the failure", name, err)
		}
	}
	if got := st.AllocateCalls(); got != 2 {
		t.Errorf("AllocateCalls = %d, want 2", got)
	}
	if got := st.TagsCalls(); got != 1 {
		t.Errorf("TagsCalls = %d, want 1", got)
	}
	if got := st.FindTagsCalls(); got != 1 {
		t.Errorf("FindTagsCalls = %d, want 1", got)
	}

	st.SetFail(nil)
	st.SetFailAbove(errDown)
	if _, err := st.AllocateAbove(ctx, "t", 0, 5); !errors.Is(err, errDown) {
		t.Fatalf("AllocateAbove = %v, want the failure", err)
	}
	if got := st.AllocateCalls(); got != 2 {
		t.Errorf("AllocateCalls = %d after a failed AllocateAbove, want 2: it is not counted", got)
	}
	if a, err := st.Allocate(ctx, "t", 7); err != nil || a.MaxID != 8 {
		t.Fatalf("Allocate = %+v, %v", a, err)
	}
	if got := st.Steps(); len(got) != 3 || got[0] != 0 || got[1] != 0 || got[2] != 7 {
		t.Fatalf("Steps = %v, want [0 0 7]", got)
	}
}

func TestAllocateBlock(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	block, began := make(chan struct{}), make(chan string, 1)
	st.SetAllocateBlock(block, began)
	var after []string
	st.SetAfter(func(tag string) { after = append(after, tag) })
	done := make(chan error)
	go func() { _, err := st.Allocate(ctx, "t", 0); done <- err }()
	if tag := <-began; tag != "t" {
		t.Fatalf("began %q", tag)
	}
	select {
	case err := <-done:
		t.Fatalf("Allocate returned before the block was lifted: %v", err)
	default:
	}
	close(block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0] != "t" {
		t.Fatalf("after called with %v", after)
	}

	cctx, cancel := context.WithCancel(ctx)
	st.SetAllocateBlock(make(chan struct{}), nil)
	cancel()
	if _, err := st.Allocate(cctx, "t", 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Allocate with its context ended = %v", err)
	}
}

func TestFindBlock(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "a", MaxID: 1, Step: 10}, segment.Tag{Name: "b", MaxID: 1, Step: 10})
	block, began := make(chan struct{}), make(chan int, 2)
	st.SetFindBlock(block, began)
	type answer struct {
		found []string
		err   error
	}
	done := make(chan answer, 2)
	for _, names := range [][]string{{"a", "B", "x"}, {"b"}} {
		go func() { f, err := st.FindTags(ctx, names); done <- answer{f, err} }()
	}
	sizes := map[int]bool{<-began: true, <-began: true}
	if !sizes[3] || !sizes[1] {
		t.Fatalf("began with %v, want 3 and 1 names", sizes)
	}
	close(block)
	for range 2 {
		a := <-done
		if a.err != nil || len(a.found) != 1 || (a.found[0] != "a" && a.found[0] != "b") {
			t.Fatalf("FindTags = %v, %v: exact names only", a.found, a.err)
		}
	}
	if got := st.MostFindTagsAtOnce(); got != 2 {
		t.Fatalf("MostFindTagsAtOnce = %d, want 2", got)
	}
}

func TestRows(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "b", MaxID: 1, Step: 10})
	st.Put(segment.Tag{Name: "a", MaxID: 5, Step: 0})
	st.Edit("a", func(r *segment.Tag) { r.Step = 10 })
	st.Put(segment.Tag{Name: "c", MaxID: 1, Step: 10})
	st.Delete("b")
	tags, err := st.Tags(ctx)
	if err != nil || len(tags) != 2 || tags[0] != (segment.Tag{Name: "a", MaxID: 5, Step: 10}) || tags[1].Name != "c" {
		t.Fatalf("Tags = %+v, %v", tags, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Edit of a missing row did not panic")
		}
	}()
	st.Edit("b", func(*segment.Tag) {})
}
