package exitcode

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

func TestDescribeWindowsExit(t *testing.T) {
	tests := []struct {
		code uint32
		want string
	}{
		{0, "exit status 0"},
		{1, "exit status 1"},
		{3, "exit status 3"},
		{StoppedStatus, "exit status 137, stopped by trtbuild"},
		{0xC0000005, "exit status 0xC0000005, access violation (STATUS_ACCESS_VIOLATION)"},
		{0xC00000FD, "exit status 0xC00000FD, stack overflow (STATUS_STACK_OVERFLOW)"},
		{0xC000013A, "exit status 0xC000013A, ended by Ctrl-C or a closed console (STATUS_CONTROL_C_EXIT)"},
		{0xC0000409, "exit status 0xC0000409, fail-fast exit: abort(), a failed security check or a corrupt stack (STATUS_STACK_BUFFER_OVERRUN)"},
		{0xC0000135, "exit status 0xC0000135, a DLL it needs was not found (STATUS_DLL_NOT_FOUND)"},
		{0xE06D7363, "exit status 0xE06D7363, unhandled C++ exception"},
		{0xC0001234, "exit status 0xC0001234, an unhandled exception or fatal error (an NTSTATUS)"},
		{0x40000000, "exit status 1073741824"},
	}
	for _, tt := range tests {
		if got := DescribeWindowsExit(tt.code); got != tt.want {
			t.Errorf("DescribeWindowsExit(%#x) = %q, want %q", tt.code, got, tt.want)
		}
	}
}

func TestWindowsSignals(t *testing.T) {
	tests := []struct {
		sig    os.Signal
		code   Code
		atOnce bool
		grace  time.Duration
	}{
		{os.Interrupt, Interrupted, false, 0},
		{syscall.SIGTERM, Terminated, false, 3 * time.Second},
	}
	for _, tt := range tests {
		if got := ForSignal(tt.sig); got != tt.code {
			t.Errorf("ForSignal(%v) = %d, want %d", tt.sig, got, tt.code)
		}
		if got := Grace(tt.sig); got != tt.grace {
			t.Errorf("Grace(%v) = %s, want %s", tt.sig, got, tt.grace)
		}
		if got := StopsAtOnce(tt.sig); got != tt.atOnce {
			t.Errorf("StopsAtOnce(%v) = %v, want %v", tt.sig, got, tt.atOnce)
		}
	}
	if got := fmt.Sprint(Signals()); got != fmt.Sprint([]os.Signal{os.Interrupt, syscall.SIGTERM}) {
		t.Errorf("Signals() = %s, want only interrupt and SIGTERM: Windows has no SIGHUP or SIGQUIT", got)
	}
	if got := SignalName(syscall.SIGTERM); got != "terminated (the console was closed, or the user logged off, or Windows shuts down)" {
		t.Errorf("SignalName(SIGTERM) = %q", got)
	}
}

func TestWindowsClosedPipe(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "write", Path: "/dev/stdout", Err: windows.ERROR_BROKEN_PIPE}, true},
		{&os.PathError{Op: "write", Path: "/dev/stdout", Err: windows.ERROR_NO_DATA}, true},
		{fmt.Errorf("writing: %w", syscall.EPIPE), true},
		{&os.PathError{Op: "write", Path: "x", Err: windows.ERROR_DISK_FULL}, false},
		{errors.New("broken pipe"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := IsClosedPipe(tt.err); got != tt.want {
			t.Errorf("IsClosedPipe(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	if got := SyscallCause(&os.PathError{Op: "write", Path: "x", Err: windows.ERROR_NO_DATA}).Error(); got != "broken pipe" {
		t.Errorf("SyscallCause(ERROR_NO_DATA) = %q, want broken pipe", got)
	}
}

func TestWriteToAClosedPipeIsAClosedPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	_, err = w.Write([]byte("progress\n"))
	if err == nil {
		t.Fatal("a write to a pipe whose reader closed it succeeded")
	}
	if !IsClosedPipe(err) {
		t.Fatalf("IsClosedPipe(%v) = false: Windows reported the closed pipe with an error not in the list", err)
	}
}
