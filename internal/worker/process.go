package worker

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// StartOptions describe how to start a worker.
type StartOptions struct {
	// Command is the worker's argv: the trtbuild executable and the worker subcommand (tests
	// may put a test binary here). Env, when non-nil, replaces the environment; either way
	// LD_LIBRARY_PATH is that of Request.TensorRT when the request has one.
	Command []string
	Env     []string
	Plan    *os.File // the temporary plan file (see the package comment)
	// ModelFolder, when not nil, is the model's folder, held open, and ModelDir its path: the
	// worker works in it (Request.ModelFolder), reading Request.Model, the file's name there.
	ModelFolder *os.File
	ModelDir    string
	Request     Request
	// TailLines is how many lines of the worker's stdout/stderr to keep for crash reports;
	// 0 means 40.
	TailLines int
}

// Process is a running worker seen from the parent. Cancel and Kill may be called from any
// goroutine; Events is read by one.
type Process struct {
	cmd    *exec.Cmd
	group  *processGroup // the worker's process group (Unix) or job object (Windows)
	events chan []progress.Event
	// free holds batches their reader handed back (Recycle), for readEvents to fill again: a
	// flood of events then allocates no new batch per read.
	free chan []progress.Event

	ctrlMu sync.Mutex
	ctrl   io.WriteCloser

	tail     *lineRing
	headMu   sync.Mutex
	head     []string // the first lines the worker printed, where a crash names its signal
	readDone chan struct{}
	readErr  error // set before readDone closes
	outDone  chan struct{}
}

// Start launches the worker and sends it the request.
func Start(opts StartOptions) (*Process, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("no worker command")
	}
	if opts.Plan == nil {
		return nil, errors.New("no plan file")
	}
	if opts.ModelFolder != nil {
		opts.Request.ModelFolder = modelFolderArg(opts.ModelFolder, opts.ModelDir)
	}
	msg, err := encodeControl(control{Type: controlBuild, Request: &opts.Request})
	if err != nil {
		return nil, err
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the event pipe: %w", err)
	}
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	if loc := opts.Request.TensorRT; loc != nil {
		// TensorRT opens its builder resources and lean runtime by bare file name, and glibc
		// reads LD_LIBRARY_PATH only at exec: the chosen folders go first on the worker's.
		env = loc.Environ(env)
	}
	if opts.ModelFolder != nil {
		// The worker works in the model's folder: the library path's relative and empty entries
		// keep naming what they named here.
		cwd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("reading the working folder for the worker's library path: %w", err)
		}
		env = trt.AbsoluteLibraryPath(env, cwd)
	}
	// The worker compares its parent with this pid to tell its parent's death (it is
	// reparented) from a parent that happens to be PID 1, as trtbuild is in a container.
	cmd.Env = append(env[:len(env):len(env)], parentPIDEnv+"="+strconv.Itoa(os.Getpid()))
	group, err := newProcessGroup(cmd, evW, opts.Plan, opts.ModelFolder)
	if err != nil {
		evR.Close()
		evW.Close()
		return nil, err
	}
	ctrl, err := cmd.StdinPipe()
	if err != nil {
		group.abandon()
		evR.Close()
		evW.Close()
		return nil, fmt.Errorf("creating the control pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		group.abandon()
		evR.Close()
		evW.Close()
		return nil, fmt.Errorf("creating the output pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	if err := cmd.Start(); err != nil {
		group.abandon()
		evR.Close()
		evW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("starting the build worker: %w", err)
	}
	// The child has its copies; close ours so EOF arrives when the child exits.
	evW.Close()
	outW.Close()
	if err := group.started(cmd); err != nil {
		// The worker was ended before it ran a build.
		ctrl.Close()
		_ = cmd.Wait()
		group.release()
		evR.Close()
		outR.Close()
		return nil, err
	}

	lines := opts.TailLines
	if lines <= 0 {
		lines = 40
	}
	p := &Process{
		cmd: cmd, group: group, ctrl: ctrl, events: make(chan []progress.Event, 4), free: make(chan []progress.Event, 8),
		tail: newLineRing(lines), readDone: make(chan struct{}), outDone: make(chan struct{}),
	}
	go p.readEvents(evR)
	go p.readOutput(outR)
	if _, err := ctrl.Write(msg); err != nil {
		p.Kill()
		return nil, fmt.Errorf("sending the build request to the worker: %w", err)
	}
	return p, nil
}

// maxBatch bounds the number of events passed to the renderer at once.
const maxBatch = 1024

func (p *Process) readEvents(r *os.File) {
	defer close(p.events)
	defer close(p.readDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<16)
	batch := p.emptyBatch()
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: collect it whole.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 && (err == nil || err == io.EOF) {
			e, derr := progress.DecodeJSON(line)
			if derr != nil {
				p.readErr = fmt.Errorf("the build worker sent a malformed event: %w", derr)
				p.Kill()
				break
			}
			batch = append(batch, e)
		}
		if len(batch) > 0 && (len(batch) >= maxBatch || br.Buffered() == 0 || err != nil) {
			p.events <- batch
			batch = p.emptyBatch()
		}
		if err != nil {
			if err != io.EOF {
				p.readErr = fmt.Errorf("reading events from the build worker: %w", err)
			}
			break
		}
	}
	if len(batch) > 0 {
		p.events <- batch
	}
}

func (p *Process) readOutput(r *os.File) {
	defer close(p.outDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.headMu.Lock()
		if len(p.head) < headLines {
			p.head = append(p.head, line)
		}
		p.headMu.Unlock()
		p.tail.add(line)
	}
}

// headLines is how many of the worker's first output lines are kept.
const headLines = 20

// Head returns the first lines the worker printed on its stdout or stderr.
func (p *Process) Head() []string {
	p.headMu.Lock()
	defer p.headMu.Unlock()
	return append([]string(nil), p.head...)
}

// Events returns the worker's events in batches. The channel closes when the worker closes its
// end of the event pipe (it finished, or it died).
func (p *Process) Events() <-chan []progress.Event { return p.events }

// Recycle hands back a batch received from Events once its reader is done with it (nothing
// may keep it or the events in it), so that it is filled again instead of allocated anew.
func (p *Process) Recycle(batch []progress.Event) {
	select {
	case p.free <- batch:
	default:
	}
}

// emptyBatch returns a recycled batch, emptied, or a new one.
func (p *Process) emptyBatch() []progress.Event {
	select {
	case b := <-p.free:
		clear(b) // drop the old events' strings and pointers for the collector
		return b[:0]
	default:
		return make([]progress.Event, 0, 64)
	}
}

// Cancel asks the worker to stop the build at the next step boundary.
func (p *Process) Cancel() error {
	msg, err := encodeControl(control{Type: controlCancel})
	if err != nil {
		return err
	}
	p.ctrlMu.Lock()
	defer p.ctrlMu.Unlock()
	if _, err := p.ctrl.Write(msg); err != nil {
		return fmt.Errorf("sending cancel to the worker: %w", err)
	}
	return nil
}

// Kill stops the worker and its process group (on Windows: its job) at once.
func (p *Process) Kill() error {
	return p.group.kill(p.cmd)
}

// Wait waits for the worker to exit, after the event stream has ended. It closes the control
// pipe. The returned error describes a stream or protocol failure; the process state tells how
// the worker exited.
func (p *Process) Wait() (*os.ProcessState, error) {
	<-p.readDone
	p.ctrlMu.Lock()
	p.ctrl.Close()
	p.ctrlMu.Unlock()
	err := p.cmd.Wait()
	p.group.release()
	<-p.outDone
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return p.cmd.ProcessState, fmt.Errorf("waiting for the build worker: %w", err)
	}
	return p.cmd.ProcessState, p.readErr
}

// Tail returns the last lines the worker printed on its stdout or stderr.
func (p *Process) Tail() []string { return p.tail.lines() }

// lineRing keeps the last n lines; safe for concurrent use.
type lineRing struct {
	mu   sync.Mutex
	buf  []string
	next int
	full bool
}

func newLineRing(n int) *lineRing { return &lineRing{buf: make([]string, n)} }

func (r *lineRing) add(s string) {
	const maxLine = 2048
	if len(s) > maxLine {
		s = s[:maxLine] + "…"
	}
	s = strings.TrimRight(s, "\r")
	r.mu.Lock()
	r.buf[r.next] = s
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
	r.mu.Unlock()
}

func (r *lineRing) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.buf[:r.next]...)
	}
	return append(append([]string(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// State returns the worker's exit state once Wait has returned, else nil.
func (p *Process) State() *os.ProcessState { return p.cmd.ProcessState }
