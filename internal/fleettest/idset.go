package fleettest

import (
	"slices"
	"sort"
)

// idSet holds ids as sorted, disjoint, non-adjacent [lo, hi] intervals:
// ranges of a million ids cost one entry.
type idSet struct{ iv [][2]int64 }

// add records [lo, hi] and reports false if any of it was there.
func (s *idSet) add(lo, hi int64) bool {
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i][1] >= lo-1 })
	j := i
	for ; j < len(s.iv) && s.iv[j][0]-1 <= hi; j++ {
		if s.iv[j][0] <= hi && s.iv[j][1] >= lo {
			return false
		}
		lo, hi = min(lo, s.iv[j][0]), max(hi, s.iv[j][1])
	}
	s.iv = slices.Replace(s.iv, i, j, [2]int64{lo, hi})
	return true
}

// addAll records ids, which must be increasing, and reports false if any
// was there.
func (s *idSet) addAll(ids []int64) bool {
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if !s.add(ids[i], ids[j-1]) {
			return false
		}
		i = j
	}
	return true
}

// has reports whether id is in the set.
func (s *idSet) has(id int64) bool {
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i][1] >= id })
	return i < len(s.iv) && s.iv[i][0] <= id
}
