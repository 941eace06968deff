package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// TestLoadStepOneRule: every way a store takes a load's ids — Allocate,
// AllocateIn for a set of one, the first loads of AllocateBatch, and the
// in-memory store of the tests — takes them by segment.LoadStep: the step
// asked or the row's, refused below 1, cut near the int64 maximum, and
// refused there. A copy of the rule that drifted in any of them shows
// here as an answer unlike the rule's.
func TestLoadStepOneRule(t *testing.T) {
	cases := []struct {
		name         string
		maxID, step  int64 // the row
		ask          int64 // the step asked, 0: the row's
		batch, class bool  // AllocateBatch and AllocateIn take these
	}{
		{"the row's step", 1, 10, 0, true, true},
		{"a step asked", 1, 10, 25, false, true},
		{"a step of 0", 1, 0, 0, true, true},
		{"a negative step", 1, -5, 0, true, true},
		{"cut near the maximum", math.MaxInt64 - 3, 10, 0, true, false},
		{"at the maximum", math.MaxInt64, 10, 0, true, false},
	}
	type answer struct {
		step int64
		err  error
	}
	rule := func(maxID, step, ask int64) answer {
		s, err := segment.LoadStep(ask, step, maxID)
		return answer{s, err}
	}
	same := func(t *testing.T, how string, got, want answer) {
		t.Helper()
		switch {
		case want.err != nil:
			if got.err == nil || !(errors.Is(got.err, segment.ErrMisconfigured) && errors.Is(want.err, segment.ErrMisconfigured) ||
				errors.Is(got.err, segment.ErrExhausted) && errors.Is(want.err, segment.ErrExhausted)) {
				t.Errorf("%s: %+v, want the rule's %v", how, got, want.err)
			}
		case got.err != nil || got.step != want.step:
			t.Errorf("%s: step %d, %v; want the rule's %d", how, got.step, got.err, want.step)
		}
	}
	insert := func(t *testing.T, s *store.Store, name string, maxID, step int64) {
		t.Helper()
		if _, err := s.DB().ExecContext(context.Background(), "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, ?, ?)", name, maxID, step); err != nil {
			t.Fatal(err)
		}
	}
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		set, err := storeset.Init(ctx, []storeset.Named{{Name: "a", Store: s}})
		if err != nil {
			t.Fatal(err)
		}
		class, _ := set.Class("a")
		for i, tc := range cases {
			want := rule(tc.maxID, tc.step, tc.ask)
			name := fmt.Sprintf("a%d", i)
			insert(t, s, name, tc.maxID, tc.step)
			a, err := s.Allocate(ctx, name, tc.ask)
			same(t, tc.name+": Allocate", answer{a.Step, err}, want)

			if tc.batch {
				name := fmt.Sprintf("b%d", i)
				insert(t, s, name, tc.maxID, tc.step)
				got, err := s.AllocateBatch(ctx, []string{name})
				if err == nil {
					err = got[0].Err
				}
				step := int64(0)
				if len(got) == 1 {
					step = got[0].Step
				}
				same(t, tc.name+": AllocateBatch", answer{step, err}, want)
			}
			if tc.class {
				name := fmt.Sprintf("c%d", i)
				insert(t, s, name, tc.maxID, tc.step)
				a, _, err := s.AllocateIn(ctx, name, tc.ask, 0, class, set.Version)
				same(t, tc.name+": AllocateIn", answer{a.Step, err}, want)
			}

			m := segmenttest.New(segment.Tag{Name: "m", MaxID: tc.maxID, Step: tc.step})
			a, err = m.Allocate(ctx, "m", tc.ask)
			same(t, tc.name+": the in-memory store", answer{a.Step, err}, want)
		}
	})
}
