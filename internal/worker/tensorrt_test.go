package worker

import (
	"slices"
	"testing"

	"github.com/trtbuild/trtbuild/internal/trt"
)

// Every option the table of older minors can refuse must be told apart from a request: one
// flagInUse lacks counts as used, so every build on an older minor would be refused.
func TestFlagInUseKnowsEveryFlagNeedingAMinor(t *testing.T) {
	for _, flag := range trt.FlagsNeedingMinors() {
		if flagInUse[flag] == nil {
			t.Errorf("trt's table of older minors says %s needs a newer minor, but flagInUse cannot tell whether a request uses it; add it", flag)
		}
	}
	for flag := range flagInUse {
		if !slices.Contains(trt.FlagsNeedingMinors(), flag) {
			t.Errorf("flagInUse knows %s, which no table of older minors names any more; drop it", flag)
		}
	}
}

func TestFlagInUse(t *testing.T) {
	inUse := flagInUse["--set-build-route"]
	if inUse == nil {
		t.Skip("no table names --set-build-route")
	}
	if inUse(Request{}) {
		t.Error("a request without a build route uses --set-build-route")
	}
	if !inUse(Request{BuildRoute: "-conv_use_long_w=off"}) {
		t.Error("a request with a build route does not use --set-build-route")
	}
}
