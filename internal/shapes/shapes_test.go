package shapes

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want []Spec
	}{
		{"", nil},
		{"   ", nil},
		{"images:1x3x224x224", []Spec{{"images", []int64{1, 3, 224, 224}}}},
		{"a:1x16,b:4", []Spec{{"a", []int64{1, 16}}, {"b", []int64{4}}}},
		{"a:1 , b:2", []Spec{{"a", []int64{1}}, {"b", []int64{2}}}},
		{"input:0:1x3", []Spec{{"input:0", []int64{1, 3}}}},
		{"'input:0':1x3", []Spec{{"input:0", []int64{1, 3}}}},
		{"'a,b':2x2,c:1", []Spec{{"a,b", []int64{2, 2}}, {"c", []int64{1}}}},
		{"' padded ':7", []Spec{{" padded ", []int64{7}}}},
		{"s:scalar", []Spec{{"s", []int64{}}}},
		{"s:", []Spec{{"s", []int64{}}}},
		{"z:0x3", []Spec{{"z", []int64{0, 3}}}},
		{"big:9223372036854775807", []Spec{{"big", []int64{9223372036854775807}}}},
		{"r8:1x1x1x1x1x1x1x1", []Spec{{"r8", []int64{1, 1, 1, 1, 1, 1, 1, 1}}}},
		{"gpu_0/data_0:1x3x224x224", []Spec{{"gpu_0/data_0", []int64{1, 3, 224, 224}}}},
		{"x:007", []Spec{{"x", []int64{7}}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"images", "has no ':'"},
		{":1x3", "empty input name"},
		{"''" + ":1x3", "empty input name"},
		{"a:1x-3", `dimension 1 is negative ("-3")`},
		{"a:-1", "dimension 0 is negative"},
		{"a:1xx3", "dimension 1 is empty"},
		{"a:1x3x", "dimension 2 is empty"},
		{"a:x", "dimension 0 is empty"},
		{"a:9223372036854775808", "too large"},
		{"a:99999999999999999999999", "too large"},
		{"a:1.5", "not a whole number"},
		{"a:+1", "not a whole number"},
		{"a:1X3", "not a whole number"},
		{"a: 1", "not a whole number"},
		{"a:0x1e3", "not a whole number"},
		{"a:1x1x1x1x1x1x1x1x1", "more than TensorRT's limit of 8"},
		{"a:1,a:2", `input "a" is given more than once`},
		{"a:1,,b:2", "empty entry"},
		{"a:1,", "empty entry"},
		{",a:1", "empty entry"},
		{"'a:1", "unmatched single quote"},
		{"'a'1x3", "must be followed by ':'"},
		{"'a'x:1x3", "must be followed by ':'"},
		{"a'b':1", "single quote may only wrap the whole name"},
		{"a'b:1", "unmatched single quote"},
		{"'a':1'x'", "more than two single quotes"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error containing %q", tt.in, got, tt.wantErr)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantErr) {
				t.Fatalf("Parse(%q) error %q does not contain %q", tt.in, msg, tt.wantErr)
			}
			if strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			// Every error quotes the offending text so the user can find it.
			if !strings.Contains(msg, "\"") {
				t.Fatalf("error %q does not quote the offending input", msg)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		specs []Spec
		want  string
	}{
		{nil, ""},
		{[]Spec{{"images", []int64{1, 3, 224, 224}}}, "images:1x3x224x224"},
		{[]Spec{{"a", []int64{1}}, {"s", nil}}, "a:1,s:scalar"},
		{[]Spec{{"input:0", []int64{2}}}, "input:0:2"},
		{[]Spec{{"a,b", []int64{2}}}, "'a,b':2"},
		{[]Spec{{" a", []int64{2}}}, "' a':2"},
	}
	for _, tt := range tests {
		got := Format(tt.specs)
		if got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.specs, got, tt.want)
		}
		back, err := Parse(got)
		if err != nil {
			t.Errorf("Parse(Format(%v)) = error %v", tt.specs, err)
			continue
		}
		if len(back) != len(tt.specs) {
			t.Errorf("Parse(%q) gave %d specs, want %d", got, len(back), len(tt.specs))
			continue
		}
		for i := range back {
			if back[i].Name != tt.specs[i].Name || FormatDims(back[i].Dims) != FormatDims(tt.specs[i].Dims) {
				t.Errorf("round trip of %v gave %v", tt.specs[i], back[i])
			}
		}
	}
}

func FuzzParseShapes(f *testing.F) {
	for _, s := range []string{
		"images:1x3x224x224",
		"a:1x16,b:4",
		"'input:0':1x3,'a,b':2",
		"s:scalar,t:",
		"a:-1", "a:1xx3", "a:9223372036854775808", "'a:1", "a:1,a:2", ",", "'", "''':",
		"x:1x1x1x1x1x1x1x1x1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		specs, err := Parse(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error for %q: %q", s, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, sp := range specs {
			if sp.Name == "" {
				t.Fatalf("Parse(%q) returned an empty name", s)
			}
			if seen[sp.Name] {
				t.Fatalf("Parse(%q) returned %q twice", s, sp.Name)
			}
			seen[sp.Name] = true
			if len(sp.Dims) > MaxRank {
				t.Fatalf("Parse(%q) returned rank %d", s, len(sp.Dims))
			}
			for _, d := range sp.Dims {
				if d < 0 {
					t.Fatalf("Parse(%q) returned negative dim %d", s, d)
				}
			}
		}
		out := Format(specs)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Format(Parse(%q))) = Parse(%q): %v", s, out, err)
		}
		if Format(again) != out {
			t.Fatalf("round trip changed %q into %q", out, Format(again))
		}
	})
}
