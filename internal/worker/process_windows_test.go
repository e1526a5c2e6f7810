package worker

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/winetest"
)

var (
	procIsProcessInJob   = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")
	procGetConsoleWindow = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleWindow")
	procGetHandleInfo    = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetHandleInformation")
)

// hangReport is what a hanging helper worker prints first, before anything else runs: whether
// it is in a job, whether it has a console window (it must not: the user's console events are
// the parent's), and whether it was given its handles.
func hangReport() string {
	var in int32
	r, _, err := procIsProcessInJob.Call(uintptr(windows.CurrentProcess()), 0, uintptr(unsafe.Pointer(&in)))
	if r == 0 {
		return "IsProcessInJob: " + err.Error()
	}
	window, _, _ := procGetConsoleWindow.Call()
	return fmt.Sprintf("in-job=%v console-window=%v handles=%v", in != 0, window != 0, os.Getenv(handlesEnv) != "")
}

// checkKilled checks that Kill ended the worker's job with exitcode.StoppedStatus.
func checkKilled(t *testing.T, st *os.ProcessState) {
	t.Helper()
	if st.ExitCode() != exitcode.StoppedStatus {
		t.Fatalf("worker ended with exit status %d, want %d (TerminateJobObject)", st.ExitCode(), exitcode.StoppedStatus)
	}
}

func TestWorkerRunsInItsJobFromItsStart(t *testing.T) {
	p, _ := startHelper(t, "hang", Request{Backend: "sim"})
	waitFor(t, "the worker's first line", func() bool { return len(p.Head()) > 0 })
	if got, want := p.Head()[0], "in-job=true console-window=false handles=true"; got != want {
		t.Fatalf("the worker reported %q at its start, want %q", got, want)
	}
	// The job is the parent's, and ends its processes when its handle closes.
	proc, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION, false, uint32(p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(proc)
	var in int32
	if r, _, err := procIsProcessInJob.Call(uintptr(proc), uintptr(p.group.job), uintptr(unsafe.Pointer(&in))); r == 0 || in == 0 {
		t.Fatalf("the worker is not in the job Start made (IsProcessInJob: %v, %v)", in, err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if err := windows.QueryInformationJobObject(p.group.job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		t.Fatal(err)
	}
	switch {
	case info.BasicLimitInformation.LimitFlags&windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE != 0:
	case info.BasicLimitInformation.LimitFlags == 0 && winetest.Wine():
		// Wine 8 answers JobObjectExtendedLimitInformation with zeros (its limits are kept, as
		// TestJobEndsTheWorkerWithItsParent shows, but not reported).
		t.Log("Wine 8 reports no limits of a job (QueryInformationJobObject gave LimitFlags 0): not checked here")
	default:
		t.Fatalf("the job's limits are %#x, without JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE", info.BasicLimitInformation.LimitFlags)
	}
	// Nothing but the worker's own handles was inherited: not the job's.
	var flags uint32
	if r, _, err := procGetHandleInfo.Call(uintptr(p.group.job), uintptr(unsafe.Pointer(&flags))); r == 0 {
		t.Fatalf("GetHandleInformation: %v", err)
	}
	if flags&windows.HANDLE_FLAG_INHERIT != 0 {
		t.Fatal("the job's handle is inheritable: a worker would keep its own job alive")
	}
}

func TestPeakCommitOfAFinishedWorker(t *testing.T) {
	p, _ := startHelper(t, "worker", simRequest(t))
	collect(p, nil)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if p.PeakCommit() <= 0 {
		if winetest.Wine() {
			t.Skip("Wine 8 answers JobObjectExtendedLimitInformation with zeros (QueryInformationJobObject gave PeakProcessMemoryUsed 0)")
		}
		t.Fatalf("PeakCommit() = %d after a build, want the worker's peak", p.PeakCommit())
	}
}
