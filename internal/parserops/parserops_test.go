package parserops

import (
	"strings"
	"testing"
)

func TestBundledList(t *testing.T) {
	l, note, err := For(10)
	if err != nil || note != "" {
		t.Fatalf("For(10) = %v, %q", err, note)
	}
	if l.TensorRT != "10.15" || l.MinOpset != 9 || l.MaxOpset != 24 {
		t.Errorf("list header = %s, opsets %d-%d", l.TensorRT, l.MinOpset, l.MaxOpset)
	}
	for _, tt := range []struct {
		op   string
		want Support
	}{
		{"Conv", Supported}, {"Unique", Unsupported}, {"LayerNormalization", Supported},
		{"SequenceAt", Unsupported}, {"NoSuchOp", Unlisted}, {"conv", Unlisted},
	} {
		if got := l.Support(tt.op); got != tt.want {
			t.Errorf("Support(%q) = %d, want %d", tt.op, got, tt.want)
		}
	}
}

func TestFor(t *testing.T) {
	if _, note, err := For(11); err != nil || !strings.Contains(note, "TensorRT 11") {
		t.Errorf("For(11) = %v, %q; want the 10.15 list with a note", err, note)
	}
	if _, _, err := For(8); err == nil {
		t.Error("For(8) gave a list")
	}
}

func TestParseErrors(t *testing.T) {
	head := "tensorrt 10.15\nopsets 9 24\n"
	for _, tt := range []struct{ name, text, want string }{
		{"empty", "", "needs a tensorrt line"},
		{"no operators", head, "needs a tensorrt line"},
		{"bad mark", head + "Conv yes\n", "line 3"},
		{"twice", head + "Conv Y\nConv N\n", "listed twice"},
		{"bad opsets", "tensorrt 10\nopsets 24 9\nConv Y\n", "MIN <= MAX"},
		{"two headers", head + "tensorrt 11\n", "one \"tensorrt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(list10)
	f.Add("tensorrt 1\nopsets 1 1\nA Y\n")
	f.Fuzz(func(t *testing.T, text string) {
		l, err := Parse(text)
		if err == nil && (l.TensorRT == "" || l.MaxOpset < l.MinOpset) {
			t.Fatalf("Parse accepted an incomplete list: %+v", l)
		}
	})
}
