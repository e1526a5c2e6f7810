//go:build !windows

package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestServeKilledLeavesNoWorker(t *testing.T) {
	t.Parallel()
	root, state := serveModelRoot(t), t.TempDir()
	s := startServe(t, root, state)
	b := s.submit(t, slowBuild)
	s.waitBuild(t, b.ID, "running")
	worker := childOf(t, s.cmd.Process.Pid)
	s.cmd.Process.Kill()
	s.cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for gone := false; !gone; {
		if err := syscall.Kill(worker, 0); err != nil {
			gone = true
		} else if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", worker)); strings.Contains(string(st), ") Z ") {
			gone = true
		} else if time.Now().After(deadline) {
			syscall.Kill(worker, syscall.SIGKILL)
			t.Fatal("the build worker kept running after its server was killed")
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	again := startServe(t, root, state)
	if got := again.build(t, b.ID); got.State != "interrupted" {
		t.Fatalf("after the restart the build is %+v, want interrupted", got)
	}
}
