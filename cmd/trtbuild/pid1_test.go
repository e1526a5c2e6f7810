//go:build !windows

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unsharePID1 returns the command that runs trtbuild as PID 1 of a new PID namespace, as a
// container's entrypoint is; the test is skipped where one cannot be made.
func unsharePID1(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a new PID namespace needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	if err := exec.Command(unshare, "--pid", "--fork", "--mount-proc", "true").Run(); err != nil {
		t.Skipf("cannot make a PID namespace here: %v", err)
	}
	cmd := exec.Command(unshare, append([]string{"--pid", "--fork", "--mount-proc", binary}, args...)...)
	cmd.Env = testEnv(t)
	return cmd
}

// TestBuildAsPID1: in a container trtbuild is PID 1; its worker's parent is then PID 1 too,
// which is no sign of the parent's death. The build runs to its end.
func TestBuildAsPID1(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	model := repoModel(t, "convnet.onnx")
	cmd := unsharePID1(t, "--backend", "sim", "--sim-speed", "20", "--progress", "plain", "--no-timing-cache", model)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), "Built ") {
		t.Fatalf("a build as PID 1: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
	}
	if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err != nil {
		t.Fatalf("no engine: %v", err)
	}
}

// TestSIGTERMToPID1: SIGTERM to trtbuild as PID 1 (the kernel gives PID 1 no default action for
// it) cancels the build as anywhere else: exit 143, nothing written.
func TestSIGTERMToPID1(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	model := repoModel(t, "convnet.onnx")
	cmd := unsharePID1(t, "--backend", "sim", "--sim-speed", "1", "--progress", "plain", "--no-timing-cache", model)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out := &lockedBuffer{}
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { out.write(string(p)); return len(p), nil })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// trtbuild is the child of unshare; wait until it has started its build.
	var pid int
	for pid == 0 || !strings.Contains(out.String(), "Timing graph nodes") {
		if pid == 0 {
			pid = childOf(t, cmd.Process.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 2*time.Minute); code != 143 {
		t.Fatalf("exit %d, want 143 (pid %s)\nstdout: %s\nstderr: %s", code, strconv.Itoa(pid), out.String(), errOut.String())
	}
	if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
		t.Fatal("a cancelled build wrote an engine")
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
