// Package parserops holds which standard ONNX operators the ONNX parser of a TensorRT release
// imports, as data: onnx-tensorrt's operator support matrix (docs/operators.md), kept in
// onnx-tensorrt-*.txt beside this file with its source named. A model whose graph uses an
// operator the parser does not import fails when TensorRT parses it ("No importer registered
// for op"), after TensorRT's start-up; `trtbuild inspect --check` says so first.
package parserops

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// List is one TensorRT release's operator list.
type List struct {
	// TensorRT is the release the list describes, "10.15".
	TensorRT string
	// MinOpset and MaxOpset are the ai.onnx opsets the parser supports.
	MinOpset, MaxOpset int
	// supported maps every listed operator to whether the parser imports it.
	supported map[string]bool
}

// Support is what a List says of one operator.
type Support int

// The answers of List.Support.
const (
	Supported   Support = iota // listed, imported
	Unsupported                // listed as not imported
	Unlisted                   // not in the list at all
)

// Support says whether the parser imports the standard ONNX operator op (case matters, as in
// ONNX).
func (l *List) Support(op string) Support {
	ok, listed := l.supported[op]
	switch {
	case !listed:
		return Unlisted
	case ok:
		return Supported
	}
	return Unsupported
}

//go:embed onnx-tensorrt-10.15.txt
var list10 string

// For returns the operator list to check a build for TensorRT major version major against, and
// a note when that list is not the release's own: TensorRT 11's parser has no published list
// yet, so it is checked against the newest one (10.15), and the note says so. Other major
// versions are an error.
func For(major int) (*List, string, error) {
	l, err := Parse(list10)
	if err != nil {
		return nil, "", fmt.Errorf("the bundled operator list: %w", err)
	}
	switch major {
	case 10:
		return l, "", nil
	case 11:
		return l, fmt.Sprintf("onnx-tensorrt publishes no operator list for TensorRT 11 yet; checked against TensorRT %s's, the newest", l.TensorRT), nil
	}
	return nil, "", fmt.Errorf("no ONNX parser operator list for TensorRT %d; trtbuild builds with TensorRT 10 and 11", major)
}

// Parse reads a list in the format of onnx-tensorrt-*.txt: '#' comments and blank lines,
// "tensorrt MAJOR.MINOR", "opsets MIN MAX", then "OPERATOR Y" or "OPERATOR N" a line. Any other
// line is an error naming its number.
func Parse(text string) (*List, error) {
	l := &List{supported: map[string]bool{}}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		bad := func(why string) error { return fmt.Errorf("line %d (%q): %s", i+1, line, why) }
		switch {
		case f[0] == "tensorrt":
			if len(f) != 2 || l.TensorRT != "" {
				return nil, bad("want one \"tensorrt MAJOR.MINOR\" line")
			}
			l.TensorRT = f[1]
		case f[0] == "opsets":
			if len(f) != 3 || l.MaxOpset != 0 {
				return nil, bad("want one \"opsets MIN MAX\" line")
			}
			lo, err1 := strconv.Atoi(f[1])
			hi, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil || lo < 1 || hi < lo {
				return nil, bad("opsets must be two numbers, MIN <= MAX")
			}
			l.MinOpset, l.MaxOpset = lo, hi
		case len(f) == 2 && (f[1] == "Y" || f[1] == "N"):
			if _, dup := l.supported[f[0]]; dup {
				return nil, bad("operator listed twice")
			}
			l.supported[f[0]] = f[1] == "Y"
		default:
			return nil, bad("want \"OPERATOR Y\" or \"OPERATOR N\"")
		}
	}
	if l.TensorRT == "" || l.MaxOpset == 0 || len(l.supported) == 0 {
		return nil, fmt.Errorf("the list needs a tensorrt line, an opsets line and operators")
	}
	return l, nil
}
