package probe

import (
	"errors"
	"testing"
)

// TestLocalTargetSim: the simulated builder is described without starting a probe.
func TestLocalTargetSim(t *testing.T) {
	got, err := Target("sim", 0, "")
	if err != nil || got.Backend != "sim" {
		t.Fatalf("Target(sim) = %+v, %v; want the sim target", got, err)
	}
}

// TestChildMessage: a failed probe is said in one line: the child's own message, or the first
// line of a crash with how the child ended, never its traceback.
func TestChildMessage(t *testing.T) {
	exit := errors.New("signal: aborted")
	for _, tt := range []struct{ stderr, want string }{
		{"trtbuild: cannot load libnvinfer.so.10\n", "cannot load libnvinfer.so.10"},
		{"SIGABRT: abort\nPC=0x1 m=0\ngoroutine 1 [running]:\nmain.main()\n", "SIGABRT: abort (signal: aborted)"},
		{"", "signal: aborted"},
		{"warning: x\ntrtbuild: no CUDA device 2\n", "no CUDA device 2"},
	} {
		if got := childMessage(tt.stderr, exit); got != tt.want {
			t.Errorf("childMessage(%q) = %q, want %q", tt.stderr, got, tt.want)
		}
	}
}
