package cgo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
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

// TestAbortPhaseKillsProcess re-runs the test binary as a child whose build aborts, and checks
// that the child ends at once with the C runtime's status of abort(), 3, on a builder thread
// and on the thread that runs the build alike: Windows has no signal the Go runtime could
// catch, the C runtime's SIGABRT handler ends the process itself.
func TestAbortPhaseKillsProcess(t *testing.T) {
	if phase := os.Getenv("TRTBUILD_NATIVE_ABORT_PHASE"); phase != "" {
		o := options(t, &SimOptions{Threads: 2, NbLayers: 4, Tactics: 2, Iterations: 2, Step: time.Millisecond, AbortPhase: phase})
		build(t, o, nil)
		t.Fatal("the build returned although abort_phase was set")
	}
	tests := []struct{ name, phase string }{
		{"builder thread", phaseMeasure},
		{"run thread", phaseSubgraph},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestAbortPhaseKillsProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "TRTBUILD_NATIVE_ABORT_PHASE="+tt.phase, "TMP="+testDir(t))
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

// TestModelInUnicodeFolder: the simulated builder opens the model by its UTF-16 path, so a
// folder named outside the ANSI code page builds, and the plan reaches the file handle.
func TestModelInUnicodeFolder(t *testing.T) {
	o := options(t, &SimOptions{NbLayers: 1, Step: time.Microsecond})
	dir := filepath.Join(testDir(t), "Modèles 模型 ✓")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o.ModelPath = filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(o.ModelPath, []byte("simulated builds only check that the model can be read"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("build: %v", out.err)
	}
	if !strings.HasPrefix(string(out.plan), planMagic) || !strings.Contains(string(out.plan), "Modèles 模型 ✓") {
		t.Errorf("plan does not start with %q and name the model's folder:\n%.300s", planMagic, out.plan)
	}
}
