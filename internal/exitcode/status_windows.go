package exitcode

import "fmt"

// StoppedStatus is the exit status a process that trtbuild stops at once on Windows ends with
// (TerminateJobObject of the build worker's job): 137, the status a shell gives a process
// killed by SIGKILL, so that a worker stopped by trtbuild is told from one that crashed.
const StoppedStatus = 137

// windowsStatus is one exit status of a Windows process that ended abnormally: an NTSTATUS
// that the system or a runtime gave it.
type windowsStatus struct {
	code  uint32
	ident string // the name in ntstatus.h
	what  string // what it means, for a crash message
}

// windowsStatuses are the statuses a crashing build worker (TensorRT, CUDA or the C++ shim
// inside it) ends with.
var windowsStatuses = []windowsStatus{
	{0xC0000005, "STATUS_ACCESS_VIOLATION", "access violation"},
	{0xC00000FD, "STATUS_STACK_OVERFLOW", "stack overflow"},
	{0xC000013A, "STATUS_CONTROL_C_EXIT", "ended by Ctrl-C or a closed console"},
	{0xC0000409, "STATUS_STACK_BUFFER_OVERRUN", "fail-fast exit: abort(), a failed security check or a corrupt stack"},
	{0xC0000602, "STATUS_FAIL_FAST_EXCEPTION", "fail-fast exception"},
	{0xC0000374, "STATUS_HEAP_CORRUPTION", "heap corruption"},
	{0xC000001D, "STATUS_ILLEGAL_INSTRUCTION", "illegal instruction"},
	{0xC0000096, "STATUS_PRIVILEGED_INSTRUCTION", "privileged instruction"},
	{0xC0000094, "STATUS_INTEGER_DIVIDE_BY_ZERO", "integer division by zero"},
	{0xC0000095, "STATUS_INTEGER_OVERFLOW", "integer overflow"},
	{0xC000008E, "STATUS_FLOAT_DIVIDE_BY_ZERO", "floating-point division by zero"},
	{0xC0000006, "STATUS_IN_PAGE_ERROR", "a page of a mapped file could not be read"},
	{0xC0000017, "STATUS_NO_MEMORY", "out of memory"},
	{0xC000012D, "STATUS_COMMITMENT_LIMIT", "out of virtual memory (the commit limit: enlarge the page file)"},
	{0xC0000135, "STATUS_DLL_NOT_FOUND", "a DLL it needs was not found"},
	{0xC0000139, "STATUS_ENTRYPOINT_NOT_FOUND", "a DLL lacks a function it needs (mismatched DLL versions)"},
	{0xC0000142, "STATUS_DLL_INIT_FAILED", "a DLL failed to initialise"},
	{0xC000007B, "STATUS_INVALID_IMAGE_FORMAT", "a DLL or program is not a 64-bit Windows image"},
	{0x80000003, "STATUS_BREAKPOINT", "breakpoint"},
	{0xC0000025, "STATUS_NONCONTINUABLE_EXCEPTION", "non-continuable exception"},
	{0xE06D7363, "", "unhandled C++ exception"},
}

// DescribeWindowsExit says how a Windows process that ended with exit status code ended:
// "exit status 0xC0000005, access violation (STATUS_ACCESS_VIOLATION)" for a crash,
// "stopped by trtbuild" for StoppedStatus, else "exit status N".
func DescribeWindowsExit(code uint32) string {
	if code == StoppedStatus {
		return fmt.Sprintf("exit status %d, stopped by trtbuild", code)
	}
	for _, s := range windowsStatuses {
		if s.code != code {
			continue
		}
		if s.ident == "" {
			return fmt.Sprintf("exit status 0x%08X, %s", code, s.what)
		}
		return fmt.Sprintf("exit status 0x%08X, %s (%s)", code, s.what, s.ident)
	}
	if code>>30 == 3 { // severity "error": an exception or a fatal NTSTATUS
		return fmt.Sprintf("exit status 0x%08X, an unhandled exception or fatal error (an NTSTATUS)", code)
	}
	return fmt.Sprintf("exit status %d", code)
}
