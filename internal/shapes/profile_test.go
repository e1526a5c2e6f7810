package shapes

import (
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) []Spec {
	t.Helper()
	specs, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return specs
}

func TestProfile(t *testing.T) {
	tests := []struct {
		name                  string
		shapes, min, opt, max string
		want                  []Input
		wantWarnings          []string
	}{
		{
			name: "nothing",
		},
		{
			name:   "shapes only fixes all three",
			shapes: "a:1x3,b:2",
			want: []Input{
				{"a", []int64{1, 3}, []int64{1, 3}, []int64{1, 3}},
				{"b", []int64{2}, []int64{2}, []int64{2}},
			},
		},
		{
			name: "all three",
			min:  "x:1x3", opt: "x:8x3", max: "x:16x3",
			want: []Input{{"x", []int64{1, 3}, []int64{8, 3}, []int64{16, 3}}},
		},
		{
			name: "opt only broadcasts to min and max",
			opt:  "x:4",
			want: []Input{{"x", []int64{4}, []int64{4}, []int64{4}}},
			wantWarnings: []string{
				`input "x" has no --min-shapes; using its --opt-shapes value 4`,
				`input "x" has no --max-shapes; using its --opt-shapes value 4`,
			},
		},
		{
			name: "min only",
			min:  "x:2",
			want: []Input{{"x", []int64{2}, []int64{2}, []int64{2}}},
			wantWarnings: []string{
				`input "x" has no --opt-shapes; using its --min-shapes value 2`,
				`input "x" has no --max-shapes; using its --min-shapes value 2`,
			},
		},
		{
			name: "max only",
			max:  "x:9",
			want: []Input{{"x", []int64{9}, []int64{9}, []int64{9}}},
			wantWarnings: []string{
				`input "x" has no --min-shapes; using its --max-shapes value 9`,
				`input "x" has no --opt-shapes; using its --max-shapes value 9`,
			},
		},
		{
			name: "min and max, opt from max",
			min:  "x:1", max: "x:9",
			want:         []Input{{"x", []int64{1}, []int64{9}, []int64{9}}},
			wantWarnings: []string{`input "x" has no --opt-shapes; using its --max-shapes value 9`},
		},
		{
			name: "opt and max, min from opt",
			opt:  "x:4", max: "x:9",
			want:         []Input{{"x", []int64{4}, []int64{4}, []int64{9}}},
			wantWarnings: []string{`input "x" has no --min-shapes; using its --opt-shapes value 4`},
		},
		{
			name: "min and opt, max from opt",
			min:  "x:1", opt: "x:4",
			want:         []Input{{"x", []int64{1}, []int64{4}, []int64{4}}},
			wantWarnings: []string{`input "x" has no --max-shapes; using its --opt-shapes value 4`},
		},
		{
			name:   "shapes for one input, profile for another, order of appearance",
			shapes: "s:1x2", min: "d:1", opt: "d:2", max: "d:3",
			want: []Input{
				{"s", []int64{1, 2}, []int64{1, 2}, []int64{1, 2}},
				{"d", []int64{1}, []int64{2}, []int64{3}},
			},
		},
		{
			name:   "profile wins over shapes for the same input",
			shapes: "d:5", min: "d:1", opt: "d:2", max: "d:3",
			want: []Input{{"d", []int64{1}, []int64{2}, []int64{3}}},
		},
		{
			name: "scalar",
			min:  "s:scalar", opt: "s:", max: "s:scalar",
			want: []Input{{"s", []int64{}, []int64{}, []int64{}}},
		},
		{
			name: "equal is fine",
			min:  "x:0x3", opt: "x:0x3", max: "x:0x3",
			want: []Input{{"x", []int64{0, 3}, []int64{0, 3}, []int64{0, 3}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := Ranges(mustParse(t, tt.shapes), mustParse(t, tt.min), mustParse(t, tt.opt), mustParse(t, tt.max))
			if err != nil {
				t.Fatalf("Profile: %v", err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				got = nil
				tt.want = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Profile = %#v, want %#v", got, tt.want)
			}
			if !reflect.DeepEqual(warnings, tt.wantWarnings) {
				t.Fatalf("warnings = %q, want %q", warnings, tt.wantWarnings)
			}
		})
	}
}

func TestProfileErrors(t *testing.T) {
	tests := []struct {
		name                  string
		shapes, min, opt, max string
		wantErr               string
	}{
		{"min > opt", "", "x:8x3", "x:4x3", "x:16x3", `input "x": dimension 0 of --min-shapes (8) is larger than of --opt-shapes (4)`},
		{"opt > max", "", "x:1x3", "x:4x5", "x:16x3", `input "x": dimension 1 of --opt-shapes (5) is larger than of --max-shapes (3)`},
		{"min > max via broadcast", "", "x:9", "", "x:3", `dimension 0 of --min-shapes (9) is larger than of --opt-shapes (3)`},
		{"rank mismatch", "", "x:1x3", "x:1", "x:1x3", `input "x" has shapes of different ranks (--min-shapes 1x3, --opt-shapes 1, --max-shapes 1x3)`},
		{"rank mismatch with scalar", "", "x:scalar", "x:1", "x:1", `different ranks (--min-shapes scalar`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Ranges(mustParse(t, tt.shapes), mustParse(t, tt.min), mustParse(t, tt.opt), mustParse(t, tt.max))
			if err == nil {
				t.Fatalf("Profile = %v, want error %q", got, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %q does not contain %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), "min <= opt <= max") && !strings.Contains(err.Error(), "same number of dimensions") {
				t.Fatalf("error %q does not say how to fix it", err)
			}
		})
	}
}

func TestProfileDoesNotAlias(t *testing.T) {
	opt := mustParse(t, "x:4x4")
	in, _, err := Ranges(nil, nil, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	in[0].Min[0] = 1
	if in[0].Opt[0] != 4 || in[0].Max[0] != 4 || opt[0].Dims[0] != 4 {
		t.Fatalf("Profile's slices share memory: %v %v", in, opt)
	}
}
