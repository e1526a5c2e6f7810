package trt

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestFromInt(t *testing.T) {
	tests := []struct {
		in      int
		want    Version
		wantErr string
	}{
		{in: 101600, want: Version{10, 16, 0}},
		{in: 110100, want: Version{11, 1, 0}},
		{in: 100001, want: Version{10, 0, 1}},
		{in: 109999, want: Version{10, 99, 99}},
		{in: 8601, want: Version{8, 6, 1}},
		{in: 8205, want: Version{8, 2, 5}},
		{in: 9999, want: Version{9, 9, 99}},
		{in: 0, wantErr: "not a version number"},
		{in: -101600, wantErr: "not a version number"},
		{in: 999, wantErr: "too small"},
	}
	for _, tt := range tests {
		got, err := FromInt(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("FromInt(%d) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("FromInt(%d) error = %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("FromInt(%d) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestVersionIntRoundTrip(t *testing.T) {
	for _, v := range []Version{{10, 0, 0}, {10, 16, 0}, {11, 1, 0}, {11, 4, 1}, {12, 99, 99}} {
		got, err := FromInt(v.Int())
		if err != nil || got != v {
			t.Errorf("FromInt(%v.Int() = %d) = %v, %v; want %v", v, v.Int(), got, err, v)
		}
	}
}

func TestVersionString(t *testing.T) {
	if got := (Version{11, 1, 0}).String(); got != "11.1.0" {
		t.Errorf("String() = %q, want 11.1.0", got)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr string
	}{
		{in: "10.16", want: Version{10, 16, 0}},
		{in: "10.16.0", want: Version{10, 16, 0}},
		{in: "11.1.0.106", want: Version{11, 1, 0}},
		{in: " 11.4.1 ", want: Version{11, 4, 1}},
		{in: "11", wantErr: "want major.minor"},
		{in: "1.2.3.4.5", wantErr: "want major.minor"},
		{in: "v11.1", wantErr: `"v11" is not a number`},
		{in: "11.x", wantErr: `"x" is not a number`},
		{in: "11.-1", wantErr: "is not a number"},
		{in: "0.1.0", wantErr: "major version must be 1 to 9999"},
		{in: "99999999999999999999.1", wantErr: "is not a number"},
		{in: "10000.1", wantErr: "major version must be 1 to 9999"},
		{in: "10.100", wantErr: "below 100"},
		{in: "", wantErr: "want major.minor"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"10.16", "11.1.0.106", "8.6.1", "", "1..2", "99.99.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			return
		}
		if v.Major <= 0 || v.Minor < 0 || v.Minor > 99 || v.Patch < 0 || v.Patch > 99 {
			t.Fatalf("Parse(%q) = %+v: out of range", s, v)
		}
		// Every parsed version survives the integer encoding unless its major overflows it.
		if got, err := FromInt(v.Int()); v.Major >= 10 && (err != nil || got != v) {
			t.Fatalf("FromInt(Parse(%q).Int()) = %+v, %v; want %+v", s, got, err, v)
		}
		// Formatting and parsing again gives the same version.
		if again, err := Parse(v.String()); err != nil || again != v {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", v.String(), again, err, v)
		}
	})
}

// TestShimVersionMessages checks that the TensorRT shim, which repeats the major's guard in C++
// (it cannot call Go), still spells its message like CheckVersions: every literal piece of the
// Go format must appear inside one string literal of the shim.
func TestShimVersionMessages(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "cgo", "shim", "tensorrt_common.cpp"))
	if err != nil {
		t.Fatalf("reading the shim: %v", err)
	}
	var literals []string
	for _, m := range regexp.MustCompile(`"((?:[^"\\\n]|\\.)*)"`).FindAllStringSubmatch(string(src), -1) {
		literals = append(literals, m[1])
	}
	verb := regexp.MustCompile(`%[a-z]`)
	for _, format := range []string{majorMismatchFormat} {
		for _, piece := range verb.Split(format, -1) {
			if strings.TrimSpace(piece) == "" || piece == "." {
				continue
			}
			found := false
			for _, lit := range literals {
				if strings.Contains(lit, piece) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("tensorrt_common.cpp has no string literal containing %q (from %q)", piece, format)
			}
		}
	}
	// The shim names the mismatch as ErrVersionMismatch does.
	if !strings.Contains(string(src), `"`+ErrVersionMismatch.Error()+`: `) {
		t.Errorf("tensorrt_common.cpp does not start its messages with %q", ErrVersionMismatch.Error()+": ")
	}
}
