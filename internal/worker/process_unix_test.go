//go:build !windows

package worker

import (
	"os"
	"syscall"
	"testing"
)

// hangReport is what a hanging helper worker prints first: its process group.
func hangReport() string {
	pgid, _ := syscall.Getpgid(0)
	if pgid == os.Getpid() {
		return "own process group"
	}
	return "shares a process group"
}

// checkKilled checks that Kill ended the worker with SIGKILL.
func checkKilled(t *testing.T, st *os.ProcessState) {
	t.Helper()
	if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("worker ended %v, want killed by SIGKILL", st)
	}
}
