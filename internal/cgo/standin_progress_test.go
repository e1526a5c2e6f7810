package cgo

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// The stand-in's progress compared with TensorRT's own, by shape: names, nesting, depth, how
// phases end and how many callbacks they make; never exact counts, which depend on the model
// and TensorRT's version ("Phase names and their hierarchies may change between versions of
// TensorRT", NvInfer.h).

// TestStandInProgressLikeTensorRT: a CNN built over the stand-in of each major, through the
// shim, reports the tree TensorRT 10.16.1 reported for MNIST (and 11.1 on Hopper, research):
// the same phase names (none naming a layer) under the same parents, 8 levels, one root of 6
// steps ending after step 4, the same phases finishing early as often, about as many
// callbacks per phase, mostly "Measuring tactic time" leaves, steps that jump, a parent's
// steps while a child is open, and every callback from the thread that built.
func TestStandInProgressLikeTensorRT(t *testing.T) {
	real := statsOf(t, "TensorRT 10.16.1", readRealProgress(t, "trt-10.16.1-mnist-progress-events.tsv.gz"))
	older := statsOf(t, "TensorRT 10.16.0", readRealProgress(t, "trt-10.16.0-mnist-progress-events.tsv.gz"))
	realPairs := map[string]bool{}
	for p := range real.pairs {
		realPairs[p] = true
	}
	for p := range older.pairs {
		realPairs[p] = true
	}
	for _, c := range CompiledShims() {
		t.Run(fmt.Sprintf("TensorRT %d", c.Major()), func(t *testing.T) {
			t.Parallel()
			got := standinBuild(t, standinJob{Major: c.Major(), Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1})
			if got.Error != "" {
				t.Fatalf("build failed: %s", got.Error)
			}
			s := statsOf(t, "stand-in", progressOf(got.Events))
			t.Logf("real:     %v", real)
			t.Logf("stand-in: %v", s)
			if g, w := sortedKeys(s.names), sortedKeys(real.names); !slices.Equal(g, w) {
				t.Errorf("phase names %q, TensorRT's %q", g, w)
			}
			for p := range s.pairs {
				if !realPairs[p] {
					t.Errorf("phase %s: no TensorRT trace nests these", p)
				}
			}
			for p := range real.pairs {
				if !s.pairs[p] {
					t.Errorf("phase %s of TensorRT's trace never happens", p)
				}
			}
			if s.maxDepth != real.maxDepth || s.maxDepth < 7 {
				t.Errorf("depth %d, TensorRT's %d", s.maxDepth, real.maxDepth)
			}
			if !slices.Equal(s.rootSteps, []int{6}) || !slices.Equal(s.rootLast, []int{4}) {
				t.Errorf("roots of %v steps ending at %v, want one of 6 ending at 4", s.rootSteps, s.rootLast)
			}
			for name, n := range real.early {
				if s.early[name] != n {
					t.Errorf("%s finished early %d times, TensorRT's %d", name, s.early[name], n)
				}
			}
			if share, realShare := frac(s.earlyTotal(), s.phases), frac(real.earlyTotal(), real.phases); share > 3*realShare || share == 0 {
				t.Errorf("%.2f%% of phases finished early, TensorRT %.2f%%", 100*share, 100*realShare)
			}
			if per, realPer := frac(s.callbacks, s.phases), frac(real.callbacks, real.phases); math.Abs(per-realPer) > 0.3*realPer {
				t.Errorf("%.2f callbacks per phase, TensorRT %.2f", per, realPer)
			}
			if share := frac(s.measures, s.phases); share < 0.85 || share > 0.98 {
				t.Errorf("%.0f%% of phases measure a tactic, TensorRT %.0f%%", 100*share, 100*frac(real.measures, real.phases))
			}
			if s.jumps == 0 || s.stepsUnderChild == 0 {
				t.Errorf("%d jumping steps and %d steps under an open child; TensorRT's trace has %d and %d", s.jumps, s.stepsUnderChild, real.jumps, real.stepsUnderChild)
			}
			if len(s.threads) != 1 || s.concurrent != 0 {
				t.Errorf("callbacks from %d threads, %d starts beside another thread's phase; TensorRT's come from one", len(s.threads), s.concurrent)
			}
		})
	}
}

// TestStandInMyelinRegime: a transformer block goes to Myelin, as TensorRT 11.0 on a B200 did
// even with MNIST: a short tree of the same names with no "Measuring tactic time", one
// evaluation for the ForeignNode and refit engines in one step; and the build spends most of
// its time in the one silent step that compiles the ForeignNode.
func TestStandInMyelinRegime(t *testing.T) {
	real := statsOf(t, "TensorRT 11.0.0 B200", readRealProgress(t, "trt-11.0.0-b200-mnist-progress-events.tsv.gz"))
	for _, c := range CompiledShims() {
		t.Run(fmt.Sprintf("TensorRT %d", c.Major()), func(t *testing.T) {
			t.Parallel()
			const myelin = 400 * time.Millisecond
			got := standinBuild(t, standinJob{Major: c.Major(), Settings: "myelin=400ms", Model: testmodels.Bundled(t, "transformer_block.onnx"), OptLevel: -1})
			if got.Error != "" {
				t.Fatalf("build failed: %s", got.Error)
			}
			s := statsOf(t, "stand-in", progressOf(got.Events))
			t.Logf("real:     %v", real)
			t.Logf("stand-in: %v", s)
			if g, w := sortedKeys(s.names), sortedKeys(real.names); !slices.Equal(g, w) {
				t.Errorf("phase names %q, TensorRT's in the Myelin regime %q", g, w)
			}
			if s.maxDepth != real.maxDepth || s.measures != 0 {
				t.Errorf("depth %d and %d measurements, TensorRT's %d and none", s.maxDepth, s.measures, real.maxDepth)
			}
			if s.phases < real.phases/2 || s.phases > 2*real.phases {
				t.Errorf("%d phases, TensorRT's %d", s.phases, real.phases)
			}
			if !slices.Equal(s.nbSteps["Determining refit engines"], []int{1}) || !slices.Equal(s.nbSteps["Evaluating tactic times"], []int{1}) {
				t.Errorf("refit engines in %v steps, evaluations of %v tactics; TensorRT's one and one", s.nbSteps["Determining refit engines"], s.nbSteps["Evaluating tactic times"])
			}
			// The silence: the longest gap between callbacks, against the root phase's span.
			var first, last, gap, prev time.Duration
			for i, ev := range got.Events {
				if ev.Kind == EventLog {
					continue
				}
				if i > 0 && prev > 0 {
					gap = max(gap, ev.Time-prev)
				}
				if first == 0 {
					first = ev.Time
				}
				last, prev = ev.Time, ev.Time
			}
			if gap < myelin || float64(gap) < 0.5*float64(last-first) {
				t.Errorf("the longest silence is %v of a %v tree; want the Myelin step's %v, most of the build", gap, last-first, myelin)
			}
		})
	}
}

func frac(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
