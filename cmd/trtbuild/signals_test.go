//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/matrix"
)

// TestHangupCancels: SIGHUP (a closed terminal or SSH session) cancels as SIGINT does, exit
// 129, and the timing cache is saved before trtbuild exits, not by an orphaned worker later.
func TestHangupCancels(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	model := repoModel(t, "convnet.onnx")
	tc := filepath.Join(filepath.Dir(model), "timing.cache")
	cmd, errOut, out := startBuild(t, "--backend", "sim", "--sim-speed", "0.2", "--progress", "plain", "--timing-cache", tc, model)
	waitTimed(t, out) // a node was timed: the cache has something to save
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 2*time.Minute); code != 129 {
		t.Fatalf("exit %d, want 129\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	if !strings.Contains(out.String(), "Build cancelled") {
		t.Errorf("stdout lacks the outcome:\n%s", out)
	}
	if st, err := os.Stat(tc); err != nil || st.Size() == 0 {
		t.Fatalf("the timing cache was not saved before trtbuild exited: %v", err)
	}
	if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
		t.Error("a cancelled build wrote an engine")
	}
	assertNoTempFiles(t, filepath.Dir(model))
}

// waitTimed waits until a plain progress view shows that TensorRT timed a node of the graph
// ("Timing graph nodes K/N" with K > 0): the timing cache then holds something.
func waitTimed(t *testing.T, out *lockedBuffer) {
	t.Helper()
	timed := regexp.MustCompile(`Timing graph nodes [1-9][0-9]*/`)
	for !timed.MatchString(out.String()) {
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor waits until out holds want.
func waitFor(t *testing.T, out *lockedBuffer, want string) {
	t.Helper()
	for !strings.Contains(out.String(), want) {
		time.Sleep(20 * time.Millisecond)
	}
}

// TestQuitStopsAtOnce: SIGQUIT (Ctrl-\) stops the worker at once: exit 131, a message, no
// goroutine dump, nothing written, no worker left.
func TestQuitStopsAtOnce(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	model := repoModel(t, "convnet.onnx")
	cmd, errOut, out := startRunning(t, "--backend", "sim", "--sim-step", "1s", "--no-timing-cache", "--sim-ignore-cancel", model)
	worker := childOf(t, cmd.Process.Pid)
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 2*time.Minute); code != 131 {
		t.Fatalf("exit %d, want 131\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	if strings.Contains(errOut.String(), "goroutine ") || !strings.Contains(errOut.String(), "Quit (SIGQUIT)") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if err := syscall.Kill(worker, 0); err == nil {
		if st, _ := os.ReadFile("/proc/" + itoa(worker) + "/stat"); !strings.Contains(string(st), ") Z ") {
			t.Error("the worker outlived trtbuild")
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
		t.Error("an engine was written")
	}
	assertNoTempFiles(t, filepath.Dir(model))
}

// TestReplayTerminated: SIGTERM ends a replay with 143, SIGINT with 130.
func TestReplayTerminated(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	model := repoModel(t, "convnet.onnx")
	trace := filepath.Join(filepath.Dir(model), "build.jsonl")
	simBuild(t, model, "--trace", trace)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}, {syscall.SIGHUP, 129}} {
		cmd, errOut, out := start(t, "Timing graph nodes", "replay", "--speed", "0.2", "--progress", "plain", trace)
		if err := cmd.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		if code := waitExit(t, cmd, 2*time.Minute); code != tc.code {
			t.Fatalf("replay after %v: exit %d, want %d\nstderr: %s\nstdout: %s", tc.sig, code, tc.code, errOut, out)
		}
	}
}

// TestMatrixBuildCancels: Ctrl-C or SIGTERM during `matrix build` cancels the running cell at
// its step boundary, starts no other, and still writes the index.
func TestMatrixBuildCancels(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		dir := matrixDir(t)
		cmd, errOut, out := start(t, "Timing graph nodes", "matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1", "--progress", "plain")
		if err := cmd.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		if code := waitExit(t, cmd, 2*time.Minute); code != tc.code {
			t.Fatalf("matrix build after %v: exit %d, want %d\nstderr: %s\nstdout: %s", tc.sig, code, tc.code, errOut, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "engines", matrix.IndexName))
		if err != nil {
			t.Fatalf("no index after a cancel: %v\n%s", err, out)
		}
		var x matrix.Index
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatal(err)
		}
		skipped := 0
		for _, c := range x.Cells {
			if c.Status == matrix.StatusSkipped {
				skipped++
			}
		}
		if skipped == 0 {
			t.Errorf("no cell was left out after the cancel: %s", b)
		}
	}
}

// TestMatrixCellTerminated: `scancel` sends SIGTERM to a task's `matrix cell`: it cancels, ends
// its JSON stream with a result line, and exits 143.
func TestMatrixCellTerminated(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	dir := matrixDir(t)
	cmd := exec.Command(binary, "matrix", "cell", filepath.Join(dir, "matrix.yaml"), "--index", "0", "--backend", "sim", "--sim-speed", "1", "--progress", "json")
	cmd.Env = testEnv(t)
	out := &lockedBuffer{}
	var errOut bytes.Buffer
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { out.write(string(p)); return len(p), nil })
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, `"phase_start"`)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 2*time.Minute); code != 143 {
		t.Fatalf("exit %d, want 143\nstderr: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"type":"result"`) || !strings.Contains(last, `"status":"cancelled"`) {
		t.Fatalf("the JSON stream does not end with a cancelled result: %s", last)
	}
}
