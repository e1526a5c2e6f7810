// Package shapes parses trtexec-style input shape specifications and turns the
// --shapes, --min-shapes, --opt-shapes and --max-shapes flags into one
// optimization profile.
//
// A specification is a comma-separated list of NAME:DIMS entries, for example
//
//	images:1x3x224x224,mask:1x16
//
// NAME is everything before the last ':' of the entry, so names that contain
// ':' (as TensorFlow-exported models often have, "input:0") need no quoting.
// A name may also be wrapped in single quotes, 'input:0':1x3, which is the
// only way to write a name that contains ','. DIMS are non-negative decimal
// integers joined by 'x'; "scalar" or nothing at all after the ':' means a
// rank-0 (scalar) input. As in trtexec 11, a name may hold one '*' standing for
// any run of characters (input_*:1x128); ExpandWildcards gives such an entry to
// the model's inputs it matches.
package shapes

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxRank is the largest number of dimensions a shape may have. It is
// TensorRT's Dims::MAX_DIMS (TRTB_MAX_DIMS in the builder ABI).
const MaxRank = 8

// Spec is one input's shape as written on the command line.
type Spec struct {
	// Name is the input tensor's name, without quotes.
	Name string
	// Dims are the dimensions, outermost first. An empty slice is a scalar.
	Dims []int64
}

// example is the expected form shown in every syntax error.
const example = "expected NAME:DxDx... such as images:1x3x224x224 (several joined by ',')"

// Parse reads a specification such as "images:1x3x224x224,mask:1x16". The
// empty string yields no specs and no error. Entries keep their order; a name
// given twice is an error.
func Parse(s string) ([]Spec, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	entries, err := splitEntries(s)
	if err != nil {
		return nil, err
	}
	specs := make([]Spec, 0, len(entries))
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		sp, err := parseEntry(e)
		if err != nil {
			return nil, err
		}
		if seen[sp.Name] {
			return nil, fmt.Errorf("shape %q: input %q is given more than once; give each input one shape", e, sp.Name)
		}
		seen[sp.Name] = true
		specs = append(specs, sp)
	}
	return specs, nil
}

// splitEntries splits s on the commas that are not inside single quotes and
// trims blanks around each entry.
func splitEntries(s string) ([]string, error) {
	var entries []string
	inQuote := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				entries = append(entries, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if inQuote {
		return nil, fmt.Errorf("shape list %q has an unmatched single quote; quote a name as 'NAME':1x3", s)
	}
	entries = append(entries, strings.TrimSpace(s[start:]))
	for _, e := range entries {
		if e == "" {
			return nil, fmt.Errorf("shape list %q has an empty entry; %s", s, example)
		}
	}
	return entries, nil
}

// parseEntry parses one NAME:DIMS entry (already trimmed, never empty).
func parseEntry(e string) (Spec, error) {
	var name, dims string
	if strings.HasPrefix(e, "'") {
		end := strings.IndexByte(e[1:], '\'')
		// splitEntries guarantees the quotes are balanced, so end >= 0.
		name = e[1 : 1+end]
		rest := e[2+end:]
		if !strings.HasPrefix(rest, ":") {
			return Spec{}, fmt.Errorf("shape %q: a quoted name must be followed by ':' and the dimensions, as 'NAME':1x3x224x224", e)
		}
		dims = rest[1:]
		if strings.Contains(dims, "'") {
			return Spec{}, fmt.Errorf("shape %q has more than two single quotes; only the name may be quoted, as 'NAME':1x3x224x224", e)
		}
	} else {
		if strings.Contains(e, "'") {
			return Spec{}, fmt.Errorf("shape %q: a single quote may only wrap the whole name, as 'NAME':1x3x224x224", e)
		}
		i := strings.LastIndexByte(e, ':')
		if i < 0 {
			return Spec{}, fmt.Errorf("shape %q has no ':' between name and dimensions; %s", e, example)
		}
		name, dims = e[:i], e[i+1:]
	}
	if name == "" {
		return Spec{}, fmt.Errorf("shape %q has an empty input name; %s", e, example)
	}
	d, err := parseDims(dims)
	if err != nil {
		return Spec{}, fmt.Errorf("shape %q: %w", e, err)
	}
	return Spec{Name: name, Dims: d}, nil
}

// parseDims parses "1x3x224x224", "scalar" or "".
func parseDims(s string) ([]int64, error) {
	if s == "" || s == "scalar" {
		return []int64{}, nil
	}
	parts := strings.Split(s, "x")
	if len(parts) > MaxRank {
		return nil, fmt.Errorf("%d dimensions is more than TensorRT's limit of %d", len(parts), MaxRank)
	}
	dims := make([]int64, len(parts))
	for i, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("dimension %d is empty; write dimensions as 1x3x224x224", i)
		}
		if p[0] == '-' {
			return nil, fmt.Errorf("dimension %d is negative (%q); give every dimension as a size >= 0", i, p)
		}
		for j := 0; j < len(p); j++ {
			if p[j] < '0' || p[j] > '9' {
				return nil, fmt.Errorf("dimension %d (%q) is not a whole number; write dimensions as 1x3x224x224", i, p)
			}
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("dimension %d (%s) is too large; the largest is %d", i, p, int64(1<<63-1))
			}
			return nil, fmt.Errorf("dimension %d (%q): %w", i, p, err)
		}
		dims[i] = v
	}
	return dims, nil
}

// FormatDims writes dims as 1x3x224x224, or "scalar" for rank 0.
func FormatDims(dims []int64) string {
	if len(dims) == 0 {
		return "scalar"
	}
	var b strings.Builder
	for i, d := range dims {
		if i > 0 {
			b.WriteByte('x')
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	return b.String()
}

// Format writes specs in the syntax Parse reads. Names that contain ',' or
// start or end with a blank are single-quoted, so that for every list Parse
// accepts, Parse(Format(list)) gives the list back. A name that itself
// contains a single quote cannot be written in this syntax; Format writes it
// as it is and Parse will refuse it.
func Format(specs []Spec) string {
	var b strings.Builder
	for i, sp := range specs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(formatName(sp.Name))
		b.WriteByte(':')
		b.WriteString(FormatDims(sp.Dims))
	}
	return b.String()
}

func formatName(name string) string {
	if strings.Contains(name, ",") || strings.TrimSpace(name) != name {
		return "'" + name + "'"
	}
	return name
}
