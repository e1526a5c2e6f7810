package shapes

import (
	"reflect"
	"strings"
	"testing"
)

func TestMatchWildcard(t *testing.T) {
	// trtexec's own cases (samples/common/sampleUtils.test.cpp, MatchStringWithOneWildcard).
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"hello", "hello", true}, {"hello", "world", false}, {"hello", "hello2", false},
		{"*", "anything", true}, {"*", "", true},
		{"hello*", "hello", true}, {"hello*", "hello world", true}, {"hello*", "world", false},
		{"*world", "world", true}, {"*world", "hello world", true}, {"*world", "hello", false},
		{"he*ld", "held", true}, {"he*ld", "hello world", true}, {"he*ld", "hello", false},
		{"ab*ba", "aba", false}, // prefix and suffix may not overlap
	}
	for _, c := range cases {
		if got := MatchWildcard(c.pattern, c.name); got != c.want {
			t.Errorf("MatchWildcard(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func TestExpandWildcards(t *testing.T) {
	bert := []string{"input_ids", "attention_mask", "token_type_ids"}
	cases := []struct {
		name    string
		spec    string
		inputs  []string
		want    string // Format of the result
		wantErr string
	}{
		{"no pattern", "input_ids:1x128", bert, "input_ids:1x128", ""},
		{"all inputs", "*:1x128", bert, "input_ids:1x128,attention_mask:1x128,token_type_ids:1x128", ""},
		{"suffix", "*_ids:2x64", bert, "input_ids:2x64,token_type_ids:2x64", ""},
		{"exact wins", "*:1x128,attention_mask:1x64", bert, "input_ids:1x128,token_type_ids:1x128,attention_mask:1x64", ""},
		{"in place", "attention_mask:1x64,*_ids:1x32", bert, "attention_mask:1x64,input_ids:1x32,token_type_ids:1x32", ""},
		{"an input named with a star", "a*b:1", []string{"a*b", "axb"}, "a*b:1", ""},
		{"unknown plain name is kept", "images:1x3", bert, "images:1x3", ""},
		{"no match", "pixel_*:1x3", bert, "", `--shapes: "pixel_*" matches no input of the model; its inputs are "input_ids", "attention_mask", "token_type_ids"`},
		{"two stars", "*_*:1", bert, "", `--shapes: name "*_*" holds more than one '*'`},
		{"two patterns", "input*:1x8,*ids:1x8", bert, "", `--shapes: input "input_ids" matches both "input*" and "*ids"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			specs, err := Parse(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ExpandWildcards("--shapes", specs, c.inputs)
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f := Format(got); f != c.want {
				t.Errorf("expanded to %s, want %s", f, c.want)
			}
		})
	}
	// The expansion copies the dimensions: entries never share a slice.
	specs, _ := Parse("*:1x2")
	got, _ := ExpandWildcards("--shapes", specs, []string{"a", "b"})
	got[0].Dims[0] = 9
	if !reflect.DeepEqual(got[1].Dims, []int64{1, 2}) || !reflect.DeepEqual(specs[0].Dims, []int64{1, 2}) {
		t.Errorf("expanded entries share their dimensions: %v", got)
	}
}
