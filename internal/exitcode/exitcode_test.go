package exitcode

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	usage := Usagef("bad flag %q", "x")
	tests := []struct {
		name     string
		err      error
		want     Code
		reported bool
	}{
		{"nil", nil, OK, false},
		{"plain error", errors.New("boom"), Failed, false},
		{"usage", usage, Usage, false},
		{"wrapped usage", fmt.Errorf("context: %w", usage), Usage, false},
		{"interrupted", &Error{Code: Interrupted, Err: errors.New("cancelled"), Reported: true}, Interrupted, true},
		{"outermost wins", &Error{Code: TimedOut, Err: Wrap(Usage, errors.New("x"))}, TimedOut, false},
		{"wrap nil", Wrap(Failed, nil), OK, false},
	}
	for _, tt := range tests {
		if got := Of(tt.err); got != tt.want {
			t.Errorf("%s: Of = %d, want %d", tt.name, got, tt.want)
		}
		if got := IsReported(tt.err); got != tt.reported {
			t.Errorf("%s: IsReported = %v, want %v", tt.name, got, tt.reported)
		}
	}
	if got := usage.Error(); got != `bad flag "x"` {
		t.Errorf("message %q", got)
	}
}

func TestSplit(t *testing.T) {
	hinted := Usagef("invalid --gpus %q", "x").Hintf("give CUDA device numbers, like %s", "0,1")
	for _, tc := range []struct {
		name          string
		err           error
		problem, hint string
	}{
		{"a hint as a field", hinted, `invalid --gpus "x"`, "give CUDA device numbers, like 0,1"},
		{"a hint holding a \"; \"", Usagef("no model").Hintf("give one; or two"), "no model", "give one; or two"},
		{"a problem holding a \"; \"", Usagef("a; b").Hintf("c"), "a; b", "c"},
		{"wrapped with context", fmt.Errorf("options: %w", hinted), `invalid --gpus "x"`, "give CUDA device numbers, like 0,1"},
		{"given a code", Wrap(Failed, hinted), `invalid --gpus "x"`, "give CUDA device numbers, like 0,1"},
		{"joined", errors.Join(errors.New("first"), hinted), `invalid --gpus "x"`, "give CUDA device numbers, like 0,1"},
		{"Hinted", Hinted(errors.New("no engine"), "build it"), "no engine", "build it"},
		{"a lower layer's text", errors.New("no model; give one"), "no model", "give one"},
		{"a lower layer's text, two", errors.New("a; b; c"), "a", "b; c"},
		{"no hint", errors.New("nothing to split"), "nothing to split", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, h := Split(tc.err)
			want := strings.Join(strings.Fields(tc.problem), " ")
			if p != want || h != tc.hint {
				t.Errorf("Split = %q, %q; want %q, %q", p, h, want, tc.hint)
			}
		})
	}
	if Of(Hinted(Usagef("x"), "y")) != Usage {
		t.Error("Hinted lost the exit code")
	}
	if Hinted(nil, "y") != nil {
		t.Error("Hinted(nil) is not nil")
	}
}
