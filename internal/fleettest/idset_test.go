package fleettest

import (
	"slices"
	"testing"
)

func TestIDSet(t *testing.T) {
	var s idSet
	for _, r := range [][2]int64{{10, 20}, {30, 40}, {21, 29}, {1, 5}, {6, 9}, {50, 50}} {
		if !s.add(r[0], r[1]) {
			t.Fatalf("add %v refused; set %v", r, s.iv)
		}
	}
	if want := [][2]int64{{1, 40}, {50, 50}}; !slices.Equal(s.iv, want) {
		t.Fatalf("set %v, want %v", s.iv, want)
	}
	for _, r := range [][2]int64{{40, 45}, {0, 1}, {50, 50}, {45, 55}, {-5, 100}} {
		if s.add(r[0], r[1]) {
			t.Fatalf("add %v accepted; set %v", r, s.iv)
		}
	}
	if !s.addAll([]int64{60, 61, 62, 70}) || s.addAll([]int64{63, 70}) {
		t.Fatalf("addAll: set %v", s.iv)
	}
	for id, want := range map[int64]bool{0: false, 1: true, 40: true, 41: false, 50: true, 62: true, 63: true, 64: false, 70: true, 71: false} {
		if s.has(id) != want {
			t.Errorf("has(%d) = %v; set %v", id, !want, s.iv)
		}
	}
}
