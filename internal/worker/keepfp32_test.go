package worker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeKeepBuilder fails each build whose kept entries lack a node of needs with TensorRT's
// message for the first missing one.
type fakeKeepBuilder struct {
	needs    []string
	converts [][]string
	builds   int
	convErr  error
	notes    []string
}

func (f *fakeKeepBuilder) Retry(note string) {
	if f.builds != len(f.converts) {
		panic("Retry called between a conversion and its build")
	}
	f.notes = append(f.notes, note)
}

func (f *fakeKeepBuilder) Convert(keep []string) (string, error) {
	f.converts = append(f.converts, slices.Clone(keep))
	if f.convErr != nil && len(f.converts) > 1 {
		return "", f.convErr
	}
	return fmt.Sprintf("model-%d.onnx|%s", len(f.converts), strings.Join(keep, ",")), nil
}

func (f *fakeKeepBuilder) Build(model string) (string, error) {
	f.builds++
	kept := strings.Split(model[strings.Index(model, "|")+1:], ",")
	for _, n := range f.needs {
		if !slices.Contains(kept, n) {
			return "TensorRT could not build the engine: No low-precision conv kernel available for the given configuration. " +
				"Consider keeping Conv/ConvTranspose in FP32. Failing node: " + n, nil
		}
	}
	return "", nil
}

func TestBuildKeepingFP32(t *testing.T) {
	tests := []struct {
		name       string
		needs      []string
		keep       []string
		convErr    error
		converts   [][]string
		notes      int
		failureHas string
		err        error
	}{
		{name: "built at once", needs: nil, converts: [][]string{nil}},
		{name: "one node rebuilt", needs: []string{"node_223_Conv"},
			converts: [][]string{nil, {"node_223_Conv"}}, notes: 1},
		{name: "kept by the user already", needs: []string{"a"}, keep: []string{"a"}, converts: [][]string{{"a"}}},
		{name: "only once", needs: []string{"a", "b"},
			converts: [][]string{nil, {"a"}}, notes: 1, failureHas: "keep more nodes with --keep-fp32 a,b"},
		{name: "user's entries come along", needs: []string{"x", "y"}, keep: []string{"x", "Softmax"},
			converts: [][]string{{"x", "Softmax"}, {"x", "Softmax", "y"}}, notes: 1},
		{name: "conversion fails on the retry", needs: []string{"a"}, convErr: errors.New("no node a"),
			converts: [][]string{nil, {"a"}}, notes: 1, err: errors.New("no node a")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeKeepBuilder{needs: tt.needs, convErr: tt.convErr}
			failure, err := buildKeepingFP32(f, tt.keep)
			notes := f.notes
			if (err != nil) != (tt.err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if !slices.EqualFunc(f.converts, tt.converts, func(a, b []string) bool { return slices.Equal(a, b) }) {
				t.Errorf("converted with %q, want %q", f.converts, tt.converts)
			}
			if len(notes) != tt.notes {
				t.Errorf("notes %q, want %d", notes, tt.notes)
			}
			if tt.notes > 0 && !strings.Contains(notes[0], "rebuilding once with it kept in float32") {
				t.Errorf("note %q does not say what happens", notes[0])
			}
			if tt.failureHas == "" && err == nil && len(tt.needs) > 0 && !slices.Contains(tt.keep, tt.needs[0]) && failure != "" {
				t.Errorf("failure %q, want a build", failure)
			}
			if tt.failureHas != "" && !strings.Contains(failure, tt.failureHas) {
				t.Errorf("failure %q lacks %q", failure, tt.failureHas)
			}
		})
	}
}
