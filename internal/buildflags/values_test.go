package buildflags

import (
	"testing"
	"time"
)

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
