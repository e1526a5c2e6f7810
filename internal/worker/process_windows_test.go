package worker

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/exitcode"
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
	case info.BasicLimitInformation.LimitFlags == 0 && isWine():
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
		if isWine() {
			t.Skip("Wine 8 answers JobObjectExtendedLimitInformation with zeros (QueryInformationJobObject gave PeakProcessMemoryUsed 0)")
		}
		t.Fatalf("PeakCommit() = %d after a build, want the worker's peak", p.PeakCommit())
	}
}

// isWine reports whether the test runs under Wine (ntdll exports wine_get_version).
func isWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

func TestJobEndsTheWorkerWithItsParent(t *testing.T) {
	parent := exec.Command(os.Args[0])
	parent.Env = append(helperEnviron("parent"), helperEnv+"_PLAN="+filepath.Join(tempDir(t), "plan.tmp"))
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the helper parent's report: %v (%q)", err, line)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "worker "))
	if err != nil {
		t.Fatalf("the helper parent said %q, want \"worker PID\"", line)
	}
	// Held before the parent dies, so the pid cannot be another process's later.
	worker, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatalf("opening the worker %d: %v", pid, err)
	}
	defer windows.CloseHandle(worker)
	if ev, _ := windows.WaitForSingleObject(worker, 0); ev != uint32(windows.WAIT_TIMEOUT) {
		t.Fatalf("the worker %d ended before its parent did (wait %#x)", pid, ev)
	}
	if err := parent.Process.Kill(); err != nil { // TerminateProcess: the parent runs no code of its own
		t.Fatal(err)
	}
	parent.Wait()
	// The hanging worker never reads its control pipe: only its job can end it.
	ev, err := windows.WaitForSingleObject(worker, 30_000)
	if ev != windows.WAIT_OBJECT_0 {
		windows.TerminateProcess(worker, 1) // not left behind holding the test's output
		t.Fatalf("the worker %d still runs 30 s after its parent was terminated (wait %#x, %v)", pid, ev, err)
	}
}

func TestServeFilesRefusesAWorkerStartedByHand(t *testing.T) {
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	f, err := os.Create(filepath.Join(tempDir(t), "plan"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pipe, file := pipeW.Fd(), f.Fd()
	tests := []struct {
		name, val, want string
	}{
		{"unset", "", "the worker must be started by trtbuild, not by hand"},
		{"one value", "12", `TRTBUILD_WORKER_HANDLES="12" is not two handles`},
		{"not numbers", "a,b", `TRTBUILD_WORKER_HANDLES="a,b" is not two handles`},
		{"zero", "0,0", `TRTBUILD_WORKER_HANDLES="0,0" is not two handles`},
		{"swapped", fmt.Sprintf("%d,%d", file, pipe), "the event pipe handle"},
		{"closed", "999999,999998", "the event pipe handle 999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(handlesEnv, tt.val)
			_, _, err := inheritedFiles()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "not by hand") {
				t.Fatalf("inheritedFiles with %s=%q: %v, want an error with %q", handlesEnv, tt.val, err, tt.want)
			}
		})
	}
	// Copies, as a worker has: the files inheritedFiles returns own their handles.
	cur := windows.CurrentProcess()
	var pipeDup, fileDup windows.Handle
	if err := windows.DuplicateHandle(cur, windows.Handle(pipe), cur, &pipeDup, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		t.Fatal(err)
	}
	if err := windows.DuplicateHandle(cur, windows.Handle(file), cur, &fileDup, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		t.Fatal(err)
	}
	t.Setenv(handlesEnv, fmt.Sprintf("%d,%d", pipeDup, fileDup))
	ev, plan, err := inheritedFiles()
	if err != nil {
		t.Fatalf("inheritedFiles with a pipe and a file: %v", err)
	}
	defer ev.Close()
	defer plan.Close()
	if _, err := ev.Write([]byte("x\n")); err != nil {
		t.Fatalf("writing to the inherited event pipe: %v", err)
	}
	if _, err := bufio.NewReader(pipeR).ReadString('\n'); err != nil {
		t.Fatalf("reading what went through the inherited event pipe: %v", err)
	}
}
