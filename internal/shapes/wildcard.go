package shapes

import (
	"fmt"
	"strconv"
	"strings"
)

// ExpandWildcards gives the entries of one shape flag (flag names it in messages) whose name
// holds a '*' to the model's inputs that name matches, as trtexec 11 matches --shapes,
// --minShapes, --optShapes and --maxShapes against the network's inputs
// (samples/common/sampleUtils.cpp, matchStringWithOneWildcard): the '*' stands for any run of
// characters, and a name holds at most one. inputs are the model's input names, in order.
//
//   - An entry that names an input exactly is kept as it is (an input may have '*' in its
//     name), and wins over patterns: a pattern gives it no shape.
//   - A pattern becomes one entry per input it matches, in the model's order, in its place.
//   - A pattern that matches no input, a name with more than one '*', and an input matched by
//     two patterns (trtexec would pick one of them arbitrarily) are errors.
//
// Entries without a '*' that name no input are kept: the preflight names them.
func ExpandWildcards(flag string, specs []Spec, inputs []string) ([]Spec, error) {
	exact := make(map[string]bool, len(specs))
	isInput := make(map[string]bool, len(inputs))
	for _, in := range inputs {
		isInput[in] = true
	}
	for _, sp := range specs {
		if isInput[sp.Name] {
			exact[sp.Name] = true
		}
	}
	matchedBy := map[string]string{} // input → the pattern that gave it its shape
	var out []Spec
	for _, sp := range specs {
		if exact[sp.Name] || !strings.Contains(sp.Name, "*") {
			out = append(out, sp)
			continue
		}
		if strings.Count(sp.Name, "*") > 1 {
			return nil, fmt.Errorf("%s: name %q holds more than one '*'; a name may hold one wildcard, as in trtexec (input_*:1x128)", flag, sp.Name)
		}
		n := 0
		for _, in := range inputs {
			if !MatchWildcard(sp.Name, in) {
				continue
			}
			n++
			if exact[in] {
				continue // named exactly in this flag too: that shape wins
			}
			if other, dup := matchedBy[in]; dup {
				return nil, fmt.Errorf("%s: input %q matches both %q and %q; give it once, by its name or by one pattern", flag, in, other, sp.Name)
			}
			matchedBy[in] = sp.Name
			out = append(out, Spec{Name: in, Dims: append([]int64(nil), sp.Dims...)})
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: %q matches no input of the model; its inputs are %s", flag, sp.Name, quoteList(inputs))
		}
	}
	return out, nil
}

// MatchWildcard reports whether name matches pattern, whose one '*' stands for any run of
// characters (none included); a pattern without '*' matches only itself.
func MatchWildcard(pattern, name string) bool {
	prefix, suffix, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == name
	}
	return len(name) >= len(prefix)+len(suffix) && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix)
}

func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
