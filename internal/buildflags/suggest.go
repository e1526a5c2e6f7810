package buildflags

import "strings"

// MaxTypo is the most edits (a letter added, dropped, changed, or two swapped) by which a
// mistyped name may differ from the one meant for Closest to suggest it.
const MaxTypo = 2

// Closest is the candidate name meant when name is a typo of one (--fp61 for fp16, inpsect
// for inspect): the nearest by edit distance, ignoring case, dashes and underscores, when
// it is at most MaxTypo edits away and the edits do not make up half of name. The first of
// equally near candidates wins; one spelt otherwise alike (--JSON for json) is nearest. ok is
// false when none is near, or name is one of them.
func Closest(name string, candidates []string) (best string, ok bool) {
	n := Fold(name)
	bestD := min(MaxTypo, (len(n)-1)/2) + 1
	for _, c := range candidates {
		if c == name {
			return "", false
		}
		if d := distance(n, Fold(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// Fold is a flag or command name as it is compared whatever its spelling: lower case,
// without dashes and underscores (minShapes, min-shapes, MINSHAPES and min_shapes fold alike).
func Fold(name string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(name))
}

// distance is the edit distance of a and b in bytes, where swapping two neighbours is one
// edit (the optimal string alignment distance): fp61 is one edit from fp16.
func distance(a, b string) int {
	// rows i-2, i-1 and i of the table of distances of a's prefixes to b's.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				c = min(c, prev2[j-2]+1)
			}
			cur[j] = c
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
