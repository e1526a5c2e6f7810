package cgo

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

var (
	kernel32 = windows.NewLazySystemDLL("kernel32.dll")
	procQPF  = kernel32.NewProc("QueryPerformanceFrequency")
	procQPC  = kernel32.NewProc("QueryPerformanceCounter")
)

// monotonic returns the clock of Result.CancelSeen in nanoseconds: the C++ side's
// std::chrono::steady_clock, which MinGW's runtime (winpthreads' clock_gettime(CLOCK_MONOTONIC))
// takes from QueryPerformanceCounter.
func monotonic(t testing.TB) int64 {
	var count, freq int64
	if r, _, err := procQPF.Call(uintptr(unsafe.Pointer(&freq))); r == 0 {
		t.Fatalf("QueryPerformanceFrequency: %v", err)
	}
	if r, _, err := procQPC.Call(uintptr(unsafe.Pointer(&count))); r == 0 {
		t.Fatalf("QueryPerformanceCounter: %v", err)
	}
	return count/freq*int64(time.Second) + count%freq*int64(time.Second)/freq
}

// abortSimEnv holds, for the child of TestAbortPhaseKillsProcess, the SimOptions (JSON) of a
// build that aborts.
const abortSimEnv = "TRTBUILD_NATIVE_ABORT_SIM"

// TestAbortPhaseKillsProcess re-runs the test binary as a child whose build aborts inside
// TensorRT (the stand-in's abort-phase and abort-at settings), and checks that the child ends
// at once with the C runtime's status of abort(), 3, on a builder thread of TensorRT's own and
// on the thread that runs the build alike: Windows has no signal the Go runtime could catch,
// the C runtime's SIGABRT handler ends the process itself.
func TestAbortPhaseKillsProcess(t *testing.T) {
	if sim := os.Getenv(abortSimEnv); sim != "" {
		var s SimOptions
		if err := json.Unmarshal([]byte(sim), &s); err != nil {
			t.Fatal(err)
		}
		build(t, options(t, &s), nil)
		t.Fatal("the build returned although it was set to abort")
	}
	tests := []struct {
		name string
		sim  SimOptions
	}{
		{"builder thread", SimOptions{Threads: 2, AbortPhase: phaseMeasure}},
		{"builder thread, a node", SimOptions{Threads: 2, AbortAt: ptr(0.5)}},
		{"run thread", SimOptions{Threads: 2, AbortPhase: phaseSubgraph}},
		{"run thread, a node", SimOptions{AbortAt: ptr(0.5)}},
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
			cmd.Env = append(os.Environ(), abortSimEnv+"="+string(b), "TMP="+testDir(t))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("child: %v, want a crash; output:\n%s", err, out)
			}
			if ee.ExitCode() != 3 {
				t.Errorf("child exited with %d, want 3 (abort); output:\n%.2000s", ee.ExitCode(), out)
			}
			if strings.Contains(string(out), "--- PASS") {
				t.Errorf("the aborted child reported a pass:\n%.2000s", out)
			}
		})
	}
}

// TestModelInUnicodeFolder: the shim and the stand-in open the model by its UTF-16 path, so a
// model in a folder named outside the ANSI code page builds, its name in the plan, and the
// plan reaches the file handle.
func TestModelInUnicodeFolder(t *testing.T) {
	data, err := os.ReadFile(testmodels.Bundled(t, "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testDir(t), "Modèles 模型 ✓")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "модель.onnx")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := build(t, optionsFor(t, model, quick()), nil)
	if out.err != nil {
		t.Fatalf("build: %v", out.err)
	}
	if !strings.HasPrefix(string(out.plan), planMagic) || !strings.Contains(string(out.plan), "\nmodel модель.onnx\n") {
		t.Errorf("plan does not start with %q and name the model:\n%.600s", planMagic, out.plan)
	}
}
