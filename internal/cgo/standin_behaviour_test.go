package cgo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// What builds over the stand-in TensorRT do besides the progress tree of a plain build: cancel,
// failure, optimization level 5, several builder threads, and the timing cache, each through
// the shim of both majors.

// forEachMajor runs f for the stand-in of each major the binary has a shim for, in parallel.
func forEachMajor(t *testing.T, f func(t *testing.T, major int)) {
	for _, c := range CompiledShims() {
		t.Run(fmt.Sprintf("TensorRT %d", c.Major()), func(t *testing.T) {
			t.Parallel()
			f(t, c.Major())
		})
	}
}

// logsOf returns the log lines of events, and where each is among the events.
func logsOf(events []RawEvent, severity int) (lines []string, at []int) {
	for i, ev := range events {
		if ev.Kind == EventLog && ev.Severity == severity {
			lines = append(lines, ev.Name)
			at = append(at, i)
		}
	}
	return lines, at
}

// TestStandInBuildsAPlan: a build through the shim writes the stand-in's plan, which says
// what made it and that it is not an engine; the stand-in logs TensorRT's INFO lines around
// the tree; the version is the stand-in's, on its GPU.
func TestStandInBuildsAPlan(t *testing.T) {
	forEachMajor(t, func(t *testing.T, major int) {
		got := standinBuild(t, standinJob{Major: major, Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1})
		if got.Error != "" || got.Result.PlanBytes == 0 || uint64(len(got.Plan)) != got.Result.PlanBytes {
			t.Fatalf("build: %q, %d plan bytes reported, %d written", got.Error, got.Result.PlanBytes, len(got.Plan))
		}
		c, _ := CompiledFor(major)
		for _, want := range []string{
			"TRTBUILD-SIMULATED-PLAN 1\n", "This is not a TensorRT engine.", "\nbuilder trtfake\n",
			fmt.Sprintf("\ntensorrt %d.%d.%d.%d\n", c.TensorRT/10000, c.TensorRT/100%100, c.TensorRT%100, c.Build),
			"\nregime cnn\n", "\nlayer 0\tstem/conv1 + stem/bn1 + stem/relu1\ttactic 0x",
		} {
			if !strings.Contains(got.Plan, want) {
				t.Errorf("the plan lacks %q:\n%s", want, got.Plan)
			}
		}
		if got.Version.Loaded != c.TensorRT || got.Version.DeviceName != "TensorRT stand-in GPU" || got.Version.ComputeMajor != 9 {
			t.Errorf("version %+v", got.Version)
		}
		info, _ := logsOf(got.Events, SeverityInfo)
		text := strings.Join(info, "\n")
		for _, want := range []string{
			"[MemUsageChange] Init builder kernel library: CPU +",
			"Global timing cache in use. Profiling results in this builder pass will be stored.",
			"Detected 1 inputs and 1 output network tensors.",
			"Total Activation Memory: ",
			"Engine generation completed in ",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("no INFO line %q:\n%s", want, text)
			}
		}
	})
}

// TestStandInCancelFinishesInReverse: a cancel, seen at a step deep in the tree, stops the
// build there: after that step only finishes come, of every open phase, innermost first, and
// the build says cancelled with no plan.
func TestStandInCancelFinishesInReverse(t *testing.T) {
	forEachMajor(t, func(t *testing.T, major int) {
		// The builder holds after its first measured tactic until the cancel comes: however
		// late the drain sees the phase, the build is still running.
		got := standinBuild(t, standinJob{Major: major, Settings: "hold-after=1", Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1, CancelAt: "Measuring tactic time"})
		if got.Code != CodeCancelled || got.Result.PlanBytes != 0 || got.Plan != "" {
			t.Fatalf("build: %v %q, %d plan bytes", got.Code, got.Error, got.Result.PlanBytes)
		}
		events := progressOf(got.Events)
		statsOf(t, "cancelled", events) // every phase finished, innermost first
		lastStep := -1
		for i, ev := range events {
			if ev.kind == EventStep {
				lastStep = i
			}
		}
		var open []string
		for _, ev := range events[:lastStep+1] {
			switch ev.kind {
			case EventPhaseStart:
				open = append(open, ev.name)
			case EventPhaseFinish:
				open = open[:len(open)-1]
			}
		}
		var finished []string
		for _, ev := range events[lastStep+1:] {
			if ev.kind != EventPhaseFinish {
				t.Fatalf("after the last step: %v %s", ev.kind, ev.name)
			}
			finished = append(finished, ev.name)
		}
		if len(open) < 6 {
			t.Errorf("the cancel was seen %d phases deep: %q", len(open), open)
		}
		for i, name := range finished {
			if want := open[len(open)-1-i]; name != want {
				t.Errorf("finish %d after the cancel is %s, want %s (innermost first of %q)", i, name, want, open)
			}
		}
		if len(finished) != len(open) {
			t.Errorf("%d finishes after the cancel, %d phases open", len(finished), len(open))
		}
	})
}

// TestStandInFailureIsTensorRTs: a phase set to fail fails the build as TensorRT fails it:
// the open phases finish, and then the error recorder gets "Error Code 10: Internal Error
// (Could not find any implementation for node ...)" for the node being timed, which the shim
// quotes.
func TestStandInFailureIsTensorRTs(t *testing.T) {
	forEachMajor(t, func(t *testing.T, major int) {
		got := standinBuild(t, standinJob{Major: major, Settings: "fail-phase=Evaluating tactic times", Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1})
		const want = "Error Code 10: Internal Error (Could not find any implementation for node stem/conv1 + stem/bn1 + stem/relu1.)"
		if got.Code != CodeBuildFailed || !strings.Contains(got.Error, want) {
			t.Fatalf("build: %v %q, want failed with %q", got.Code, got.Error, want)
		}
		events := progressOf(got.Events)
		statsOf(t, "failed", events)
		errs, at := logsOf(got.Events, SeverityError)
		rootFinish := -1
		for i, ev := range got.Events {
			if ev.Kind == EventPhaseFinish && ev.Name == "Building engine" {
				rootFinish = i
			}
		}
		if len(errs) == 0 || !strings.Contains(errs[len(errs)-1], want) || rootFinish < 0 {
			t.Errorf("errors %q, want the last to be %q", errs, want)
		}
		for i, e := range errs {
			if strings.Contains(e, "Error Code") && at[i] < rootFinish {
				t.Errorf("error %q came while the tree was open (event %d, the root finished at %d): TensorRT reports it after", e, at[i], rootFinish)
			}
		}
	})
}

// TestStandInOptLevel5Generations: at optimization level 5 the build runs three whole
// generations, as TensorRT 10.16.1 did: three root trees, three "Engine generation
// completed" lines, one plan from the fastest.
func TestStandInOptLevel5Generations(t *testing.T) {
	forEachMajor(t, func(t *testing.T, major int) {
		got := standinBuild(t, standinJob{Major: major, Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: 5})
		if got.Error != "" {
			t.Fatal(got.Error)
		}
		s := statsOf(t, "opt level 5", progressOf(got.Events))
		if len(s.rootSteps) != 3 || s.rootSteps[0] != 6 || s.rootLast[2] != 4 {
			t.Errorf("roots of %v steps ending at %v; want three of 6 ending at 4", s.rootSteps, s.rootLast)
		}
		info, _ := logsOf(got.Events, SeverityInfo)
		if n := strings.Count(strings.Join(info, "\n"), "Engine generation completed in "); n != 3 {
			t.Errorf("%d engine generations logged, want 3", n)
		}
		verbose, _ := logsOf(got.Events, SeverityVerbose)
		for _, want := range []string{"Building graph using backend strategy 4", "Building graph using backend strategy 3", "Building graph using backend strategy 2"} {
			if !strings.Contains(strings.Join(verbose, "\n"), want) {
				t.Errorf("no VERBOSE line %q", want)
			}
		}
		if !strings.Contains(got.Plan, "\ngenerations 3\n") || !strings.Contains(got.Plan, "\nopt_level 5\n") {
			t.Errorf("plan:\n%s", got.Plan)
		}
	})
}

// TestStandInStressThreads: the stress setting calls the monitor from several threads at
// once, with equally named phases open on each, still within the contract.
func TestStandInStressThreads(t *testing.T) {
	forEachMajor(t, func(t *testing.T, major int) {
		got := standinBuild(t, standinJob{Major: major, Settings: "threads=4", Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1})
		if got.Error != "" {
			t.Fatal(got.Error)
		}
		s := statsOf(t, "threads", progressOf(got.Events))
		if len(s.threads) < 2 || s.concurrent == 0 {
			t.Errorf("callbacks from %d threads, %d starts beside another thread's phase; want several at once", len(s.threads), s.concurrent)
		}
	})
}

// TestStandInTimingCache: the build's timing cache is saved through the shim as TensorRT's
// is; a second build given it times only what it lacks; a cache of another device is used
// with a warning (and refused strictly), one of another TensorRT or none at all is not used.
func TestStandInTimingCache(t *testing.T) {
	forEachMajor(t, func(t *testing.T, major int) {
		dir := testDir(t)
		model := testmodels.Bundled(t, "convnet.onnx")
		first := filepath.Join(dir, "first.cache")
		got := standinBuild(t, standinJob{Major: major, Model: model, OptLevel: -1, CacheOut: first})
		data, err := os.ReadFile(first)
		if got.Error != "" || got.CacheErr != "" || !got.Changed || err != nil || !strings.HasPrefix(string(data), "TRTFAKE-TIMING-CACHE 1\n") {
			t.Fatalf("first build: %q %q, changed %v, cache %q %v", got.Error, got.CacheErr, got.Changed, data, err)
		}
		if got.Result.CacheMisses == 0 {
			t.Errorf("the first build timed nothing new: %+v", got.Result)
		}
		measures := func(o standinOutcome) int { return statsOf(t, "cached", progressOf(o.Events)).measures }
		cold := measures(got)

		again := standinBuild(t, standinJob{Major: major, Model: model, OptLevel: -1, CacheIn: first})
		if again.Error != "" || !again.Result.TimingCacheUsed || again.Result.CacheMisses != 0 {
			t.Errorf("second build: %q, %+v: want the cache used and nothing new timed", again.Error, again.Result)
		}
		if warm := measures(again); warm*4 > cold {
			t.Errorf("%d tactics measured with the cache, %d without", warm, cold)
		}

		other := filepath.Join(dir, "other.cache")
		if got := standinBuild(t, standinJob{Major: major, Settings: "device=sm_80", Model: model, OptLevel: -1, CacheOut: other}); got.Error != "" {
			t.Fatal(got.Error)
		}
		mismatch := standinBuild(t, standinJob{Major: major, Model: model, OptLevel: -1, CacheIn: other})
		warnings, _ := logsOf(mismatch.Events, SeverityWarning)
		if mismatch.Error != "" || !mismatch.Result.TimingCacheUsed || !strings.Contains(strings.Join(warnings, "\n"), "another device") {
			t.Errorf("a cache of another device: %q, %+v, warnings %q", mismatch.Error, mismatch.Result, warnings)
		}
		strict := standinBuild(t, standinJob{Major: major, Model: model, OptLevel: -1, CacheIn: other, Flags: FlagStrictTimingCache})
		if strict.Code != CodeCacheRejected {
			t.Errorf("strictly, a cache of another device: %v %q", strict.Code, strict.Error)
		}

		foreign := filepath.Join(dir, "foreign.cache")
		if err := os.WriteFile(foreign, []byte(strings.Replace(string(data), "\ntensorrt ", "\ntensorrt 9.", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		old := standinBuild(t, standinJob{Major: major, Model: model, OptLevel: -1, CacheIn: foreign})
		warnings, _ = logsOf(old.Events, SeverityWarning)
		if old.Error != "" || old.Result.TimingCacheUsed || !strings.Contains(strings.Join(warnings, "\n"), "cannot use it") {
			t.Errorf("a cache of another TensorRT: %q, %+v, warnings %q", old.Error, old.Result, warnings)
		}
	})
}
