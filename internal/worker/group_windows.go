package worker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// handlesEnv tells a worker on Windows the values of its two inherited handles, the event
// pipe's and the plan file's, as "EVENTS,PLAN" in decimal (Windows has no fds 3 and 4).
const handlesEnv = "TRTBUILD_WORKER_HANDLES"

// processGroup is the worker's Job Object on Windows: the worker and whatever it starts, which
// die together, also with the parent.
//
// The job has JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and its handle is not inheritable, so it
// lives exactly as long as the parent's handle: when the parent ends in any way (it returns,
// it crashes, TerminateProcess, the closed console after its 5 s), Windows closes the handle
// and ends every process in the job. The worker is put in the job before it runs an
// instruction: it is created suspended (CREATE_SUSPENDED), assigned, and only then resumed.
//
// The worker is created with CREATE_NO_WINDOW: a console of its own that has no window.
// Console control events go to the processes of a console, so the user's Ctrl-C, Ctrl-Break
// and closing of the window reach only the parent, which decides, as the worker's own process
// group does on Linux (CREATE_NEW_PROCESS_GROUP would keep Ctrl-Break and the close event
// reaching the worker). Its output is not affected: its stdout and stderr are the pipe the
// parent reads (STARTF_USESTDHANDLES), never the console, and a console program it starts
// inherits the hidden console instead of opening a window.
type processGroup struct {
	mu        sync.Mutex
	job       windows.Handle   // 0 once released
	inherited []windows.Handle // inheritable copies of the event pipe and the plan file
	peak      int64            // the job's peak committed memory, read at release
}

// newProcessGroup makes the worker's job and sets cmd up to start the worker suspended, with
// the event pipe and the plan file as inherited handles named in handlesEnv (cmd.Env must be
// set).
func newProcessGroup(cmd *exec.Cmd, events, plan, _ *os.File) (*processGroup, error) {
	job, err := windows.CreateJobObject(nil, nil) // nil attributes: the handle is not inheritable
	if err != nil {
		return nil, fmt.Errorf("creating the build worker's job object: %w", err)
	}
	g := &processGroup{job: job}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		g.abandon()
		return nil, fmt.Errorf("making the build worker's job end it with trtbuild (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): %w", err)
	}
	// The worker inherits only the handles listed in AdditionalInheritedHandles (os/exec uses
	// PROC_THREAD_ATTRIBUTE_HANDLE_LIST), which must be inheritable: copies are made, so the
	// parent's own handles stay as they are, and closed once the worker has its own.
	cur := windows.CurrentProcess()
	for _, f := range []*os.File{events, plan} {
		var dup windows.Handle
		if err := windows.DuplicateHandle(cur, windows.Handle(f.Fd()), cur, &dup, 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
			g.abandon()
			return nil, fmt.Errorf("passing %s to the build worker: %w", f.Name(), err)
		}
		g.inherited = append(g.inherited, dup)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags:              windows.CREATE_SUSPENDED | windows.CREATE_NO_WINDOW,
		AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(g.inherited[0]), syscall.Handle(g.inherited[1])},
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d,%d", handlesEnv, g.inherited[0], g.inherited[1]))
	return g, nil
}

// started puts the suspended worker in the job and resumes it. When either fails the worker is
// ended before it ran.
func (g *processGroup) started(cmd *exec.Cmd) error {
	g.closeInherited()
	pid := uint32(cmd.Process.Pid)
	// cmd.Process holds the process's handle, so the pid cannot name another process here.
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		_ = cmd.Process.Kill()
		return fmt.Errorf("opening the build worker to put it in its job object: %w", err)
	}
	defer windows.CloseHandle(proc)
	if err := windows.AssignProcessToJobObject(g.job, proc); err != nil {
		_ = windows.TerminateProcess(proc, exitcode.StoppedStatus)
		return fmt.Errorf("putting the build worker in its job object: %w", err)
	}
	if err := resumeProcess(pid); err != nil {
		_ = windows.TerminateJobObject(g.job, exitcode.StoppedStatus)
		return fmt.Errorf("starting the build worker's main thread: %w", err)
	}
	return nil
}

// resumeProcess resumes the threads of a process created suspended: its main thread only, as
// no other exists before it runs. os/exec does not keep the main thread's handle, so the thread
// is found in a snapshot of the system's threads.
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("listing threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("opening thread %d: %w", entry.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resuming thread %d: %w", entry.ThreadID, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("listing threads: %w", err)
	}
	if resumed == 0 {
		return fmt.Errorf("process %d has no thread", pid)
	}
	return nil
}

// closeInherited closes the parent's inheritable copies of the worker's handles.
func (g *processGroup) closeInherited() {
	for _, h := range g.inherited {
		windows.CloseHandle(h)
	}
	g.inherited = nil
}

// abandon undoes newProcessGroup when the worker did not start.
func (g *processGroup) abandon() {
	g.closeInherited()
	g.release()
}

// kill ends every process of the job at once, with exit status exitcode.StoppedStatus.
func (g *processGroup) kill(cmd *exec.Cmd) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job == 0 {
		return nil // the worker has exited and was waited for
	}
	if err := windows.TerminateJobObject(g.job, exitcode.StoppedStatus); err != nil {
		if cmd.Process != nil {
			return cmd.Process.Kill()
		}
		return fmt.Errorf("stopping the build worker's job: %w", err)
	}
	return nil
}

// release closes the job once the worker has exited, ending what the worker left running in
// it, after reading the job's peak memory.
func (g *processGroup) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job == 0 {
		return
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if err := windows.QueryInformationJobObject(g.job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err == nil {
		g.peak = int64(info.PeakProcessMemoryUsed)
	}
	windows.CloseHandle(g.job)
	g.job = 0
}

// PeakCommit returns, once Wait has returned, the most memory the worker (or any process it
// started) committed at one time, in bytes; 0 when unknown. Windows keeps no peak resident set
// of an exited process; the job's peak commit (private memory) stands for it.
func (p *Process) PeakCommit() int64 {
	p.group.mu.Lock()
	defer p.group.mu.Unlock()
	return p.group.peak
}

// inheritedFiles are the event pipe and the plan file the parent passed (handlesEnv), checked
// to be a pipe and a disk file.
func inheritedFiles() (events, plan *os.File, err error) {
	byHand := errors.New("the worker must be started by trtbuild, not by hand")
	val := os.Getenv(handlesEnv)
	if val == "" {
		return nil, nil, byHand
	}
	e, p, ok := strings.Cut(val, ",")
	if !ok {
		return nil, nil, fmt.Errorf("%s=%q is not two handles: %w", handlesEnv, val, byHand)
	}
	var hs [2]windows.Handle
	for i, s := range []string{e, p} {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return nil, nil, fmt.Errorf("%s=%q is not two handles: %w", handlesEnv, val, byHand)
		}
		hs[i] = windows.Handle(n)
	}
	for i, want := range []struct {
		what string
		typ  uint32
	}{{"event pipe", windows.FILE_TYPE_PIPE}, {"plan file", windows.FILE_TYPE_DISK}} {
		typ, err := windows.GetFileType(hs[i])
		if err != nil || typ != want.typ {
			return nil, nil, fmt.Errorf("the %s handle %d of %s is not one trtbuild passed (file type %d, %v): %w", want.what, hs[i], handlesEnv, typ, err, byHand)
		}
	}
	return os.NewFile(uintptr(hs[0]), "events"), os.NewFile(uintptr(hs[1]), "plan"), nil
}

// watchParent does nothing on Windows: the worker's job ends it with its parent, and the end
// of the control pipe cancels the build before that where the parent closed it.
func watchParent(*watchdog) (stop func()) { return func() {} }

// modelFolderArg is Request.ModelFolder on Windows: the folder's path (dir), which the parent's
// open handle keeps in place.
func modelFolderArg(_ *os.File, dir string) string { return dir }

// enterModelFolder makes the worker work in the model's folder, named by its path.
func enterModelFolder(arg string) error {
	if err := os.Chdir(arg); err != nil {
		return fmt.Errorf("entering the model's folder: %w", err)
	}
	return nil
}
