package main

import (
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in        string
		allowZero bool
		want      uint64
		err       string
	}{
		{in: "512M", want: 512 << 20},
		{in: "1.5GiB", want: 3 << 29},
		{in: "1024", want: 1 << 30}, // a bare number is MiB, as in trtexec
		{in: "1K", want: 1024},
		{in: "0", allowZero: true, want: 0},
		{in: "0", err: `"0" is too small: give at least 1 byte, like 512M or 4G (leave the flag out for TensorRT's default)`},
		{in: "0.1B", err: "is too small"},
		{in: "lots", err: `"lots" is not a size: write a number with a unit, like 512M or 4G`},
		{in: "4Q", err: `unknown unit "Q": use B, K, M, G or T`},
		{in: "99999999T", err: "is too large: give at most 8 EiB"},
		{in: "", err: "the size is empty"},
	}
	for _, tt := range tests {
		got, err := builder.ParseSize(tt.in, tt.allowZero)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("builder.ParseSize(%q): %v, want an error containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("builder.ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestDurationFlag(t *testing.T) {
	var d time.Duration
	v := newDuration(&d, 30*time.Second)
	if v.String() != "30s" {
		t.Errorf("default shows %q", v.String())
	}
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{{"2s", 2 * time.Second}, {"1h30m", 90 * time.Minute}, {"0", 0}} {
		if err := v.Set(tt.in); err != nil || d != tt.want {
			t.Errorf("Set(%q): %v, %v", tt.in, d, err)
		}
	}
	if v.String() != "" {
		t.Errorf("zero shows %q, want nothing", v.String())
	}
	for in, want := range map[string]string{
		"2":    "a duration needs a unit: use a unit, like 2s or 2m",
		"1.5":  "a duration needs a unit: use a unit, like 1.5s or 1.5m",
		"soon": "not a duration: write a number with a unit, like 90s, 20m or 1h30m",
	} {
		if err := v.Set(in); err == nil || err.Error() != want {
			t.Errorf("Set(%q): %v, want %q", in, err, want)
		}
	}
}
