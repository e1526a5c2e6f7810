//go:build !windows

package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWorkerCancelsWhenParentDies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the worker through /proc")
	}
	model := repoModel(t, "convnet.onnx")
	cmd, _, _ := startBuild(t, "--backend", "sim", "--sim-speed", "1", model)
	workerPid := childOf(t, cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(workerPid, 0); err != nil {
			return // gone
		}
		if state, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", workerPid)); strings.Contains(string(state), ") Z ") {
			return // exited, waiting to be reaped by init
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(workerPid, syscall.SIGKILL)
	t.Fatal("the worker kept running after its parent died")
}

func childOf(t *testing.T, pid int) int {
	t.Helper()
	for i := 0; i < 100; i++ {
		if child := childPid(pid); child > 0 {
			return child
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no worker process found")
	return 0
}
