package exitcode

import (
	"errors"
	"fmt"
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
