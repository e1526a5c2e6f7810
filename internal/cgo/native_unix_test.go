//go:build !windows

package cgo

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// monotonic returns CLOCK_MONOTONIC in nanoseconds, the clock of Result.CancelSeen.
func monotonic(t testing.TB) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatalf("clock_gettime: %v", err)
	}
	return ts.Nano()
}

// abortSimEnv holds, for the child of TestAbortPhaseKillsProcess, the SimOptions (JSON) of a
// build that aborts.
const abortSimEnv = "TRTBUILD_NATIVE_ABORT_SIM"

// TestAbortPhaseKillsProcess re-runs the test binary as a child whose build aborts inside
// TensorRT (the stand-in's abort-phase and abort-at settings), and checks how the child dies.
// An abort on a builder thread of TensorRT's own (not made by Go) kills the process by SIGABRT
// at once. An abort on the thread that runs the build (a Go thread inside a cgo call) is caught
// by the Go runtime, which prints "SIGABRT: abort" and a traceback and exits with status 2, or
// re-raises the signal when GOTRACEBACK=crash.
func TestAbortPhaseKillsProcess(t *testing.T) {
	if sim := os.Getenv(abortSimEnv); sim != "" {
		_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) // no core file for an expected crash
		var s SimOptions
		if err := json.Unmarshal([]byte(sim), &s); err != nil {
			t.Fatal(err)
		}
		build(t, options(t, &s), nil)
		t.Fatal("the build returned although it was set to abort")
	}
	// With Threads 2 the graph nodes are timed on the stand-in's own threads; without, on the
	// thread that runs the build, as every other phase.
	tests := []struct {
		name      string
		sim       SimOptions
		traceback string
		signaled  bool // else exit status 2
		message   bool // stderr has the Go runtime's "SIGABRT: abort"
	}{
		{"builder thread", SimOptions{Threads: 2, AbortPhase: phaseMeasure}, "", true, false},
		{"builder thread, a node", SimOptions{Threads: 2, AbortAt: ptr(0.5)}, "", true, false},
		{"builder thread crash", SimOptions{Threads: 2, AbortPhase: phaseEvaluate}, "crash", true, false},
		{"run thread", SimOptions{Threads: 2, AbortPhase: phaseSubgraph}, "", false, true},
		{"run thread, a node", SimOptions{AbortAt: ptr(0.5)}, "", false, true},
		{"run thread crash", SimOptions{Threads: 2, AbortPhase: phaseSubgraph}, "crash", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := tt.sim
			sim.Tactics, sim.Iterations, sim.Step = 2, 2, time.Millisecond
			b, err := json.Marshal(sim)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestAbortPhaseKillsProcess$", "-test.count=1")
			// The child dies before its t.TempDir cleanup runs: its temporary files go into a
			// folder of this test, which removes them.
			cmd.Env = append(os.Environ(), abortSimEnv+"="+string(b), "GOTRACEBACK="+tt.traceback, "TMPDIR="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stdout = &stderr
			cmd.Stderr = &stderr
			err = cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("child: %v, want a crash; output:\n%s", err, stderr.Bytes())
			}
			ws := ee.Sys().(syscall.WaitStatus)
			if tt.signaled && (!ws.Signaled() || ws.Signal() != syscall.SIGABRT) {
				t.Errorf("child ended with %v, want death by SIGABRT", ws)
			}
			if !tt.signaled && (ws.Signaled() || ws.ExitStatus() != 2) {
				t.Errorf("child ended with %v, want exit status 2", ws)
			}
			if got := strings.Contains(stderr.String(), "SIGABRT: abort"); got != tt.message {
				t.Errorf("output names SIGABRT: %v, want %v:\n%.2000s", got, tt.message, stderr.Bytes())
			}
		})
	}
}

// TestPluginLibraries: a plugin library is opened before the network is made; one with
// TensorRT's dynamic entry points (getCreators) is registered through the builder's plugin
// registry, one without is only opened (its static initializers register its plugins); either
// is named in the log. One that cannot be opened, or whose plugins the registry refuses,
// refuses the build, naming it.
func TestPluginLibraries(t *testing.T) {
	dir := buildStandIns(t, t.TempDir(),
		standIn{File: "libdynamic_plugins.so", Src: `extern "C" void* getCreators(int* n) { *n = 0; return nullptr; }
`},
		standIn{File: "libstatic_plugins.so", Src: `extern "C" int trtbuild_test_static_plugins() { return 1; }
`})
	for _, name := range []string{"libdynamic_plugins.so", "libstatic_plugins.so"} {
		t.Run(name, func(t *testing.T) {
			o := options(t, quick())
			o.PluginPaths = []string{filepath.Join(dir, name)}
			out := build(t, o, nil)
			if out.err != nil {
				t.Fatalf("Run: %v", out.err)
			}
			tr := checkEvents(t, out.events)
			if !slices.ContainsFunc(tr.logs[SeverityInfo], func(l string) bool { return strings.Contains(l, "loaded plugin library "+o.PluginPaths[0]) }) {
				t.Errorf("no log line names the plugin library: %q", tr.logs[SeverityInfo])
			}
		})
	}
	t.Run("refused by the registry", func(t *testing.T) {
		sim := quick()
		sim.Refuse = "IPluginRegistry::loadLibrary"
		o := options(t, sim)
		o.PluginPaths = []string{filepath.Join(dir, "libdynamic_plugins.so")}
		e := asError(t, build(t, o, nil).err, CodeInvalidArgument)
		if want := "TensorRT could not register the plugins of plugin library " + o.PluginPaths[0] + ": "; !strings.HasPrefix(e.Message, want) ||
			!strings.Contains(e.Message, "the stand-in refuses it") {
			t.Errorf("Run: %q, want %q and TensorRT's error", e.Message, want)
		}
	})
	t.Run("missing", func(t *testing.T) {
		o := options(t, quick())
		o.PluginPaths = []string{filepath.Join(dir, "libnowhere.so")}
		out := build(t, o, nil)
		var nerr *Error
		if !errors.As(out.err, &nerr) || nerr.Code != CodeInvalidArgument || !strings.Contains(nerr.Message, "cannot load plugin library "+o.PluginPaths[0]) {
			t.Fatalf("Run: %v; want CodeInvalidArgument naming the library", out.err)
		}
	})
}

// TestPlanWriteFails: a plan file that cannot take the plan (a full disk) fails the build with
// the system's reason.
func TestPlanWriteFails(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	o := options(t, quick())
	o.PlanFile, o.LogSeverity = full, SeverityWarning
	// Not build: it reads the plan file back, and /dev/full reads as endless zeros. Nobody
	// drains: a small build's warnings fit the queue.
	b, err := NewBuild(BackendSim, o)
	if err != nil {
		t.Fatalf("NewBuild: %v", err)
	}
	defer b.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, err = b.Run()
	e := asError(t, err, CodeIO)
	if want := "cannot write the plan: " + syscall.ENOSPC.Error(); !strings.EqualFold(e.Message, want) {
		t.Errorf("Run: %q, want %q", e.Message, want)
	}
}
