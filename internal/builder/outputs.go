package builder

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/outstream"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/report"
)

// outputs records a build for --report and --trace beside the renderer the user watches.
type outputs struct {
	flags    outputFiles
	recorder *report.Recorder
	report   *outpath.Pending // created at the start, in its folder as it was then
	trace    *outpath.Stream
	traceOut *outstream.Writer // writes to trace without blocking the build
	began    bool
	done     bool
}

// openOutputs checks --report's extension and opens the --trace output (its paths were
// checked by checkBuildPaths), before anything is built, so a mistake costs no build time. A
// regular --trace file is written beside its target and put in place when the build ends; a
// FIFO or device is written as the build goes.
func openOutputs(f outputFiles, paths *buildPaths) (*outputs, error) {
	o := &outputs{flags: f}
	if f.report != "" {
		if _, err := report.FormatOf(f.report); err != nil {
			return nil, exitcode.Usagef("invalid --report: %v", err)
		}
		o.recorder = report.NewRecorder()
		if paths != nil && paths.report != nil {
			p, err := outpath.Create(*paths.report)
			if err != nil {
				return nil, exitcode.Usagef("cannot write --report %s: %v", q(f.report), exitcode.PathCause(err))
			}
			o.report = p
		}
	}
	if f.trace != "" && paths != nil && paths.trace != nil {
		st, err := outpath.OpenStream(*paths.trace)
		if err != nil {
			return nil, exitcode.Usagef("cannot write --trace %s: %v", q(f.trace), exitcode.PathCause(err))
		}
		o.trace = st
		o.traceOut = outstream.New(st, outstream.Options{})
	}
	return o, nil
}

// wrap returns r with the recorders beside it.
func (o *outputs) wrap(r progress.Renderer) progress.Renderer {
	tee := progress.Tee{r}
	if o.recorder != nil {
		tee = append(tee, o.recorder)
	}
	if o.trace != nil {
		tee = append(tee, progress.NewJSONLines(o.traceOut, nil))
	}
	if len(tee) == 1 {
		return r
	}
	o.began = true
	return tee
}

// finish puts the trace in place and writes the report. Problems are warnings on errOut: the
// build's outcome stands. A trace that never received the build (it failed to start) is
// dropped, and an old file at its path stays. A signal stops waiting for a slow --trace reader
// (a FIFO or a device; a file never waits): it is returned, for the caller to answer.
func (o *outputs) finish(errOut io.Writer, sigs <-chan os.Signal) (late os.Signal) {
	o.done = true
	if o.trace != nil {
		if o.trace.ToFile() {
			sigs = nil
		}
		stop, end := stopOnSignal(sigs)
		n, err := o.traceOut.Close(outputStall, stop)
		late = end()
		switch {
		case !o.began:
			o.trace.Cleanup() //nolint:errcheck // nothing was recorded
		case err != nil || n > 0:
			o.trace.Cleanup() //nolint:errcheck // a FIFO or device: nothing to undo
			fmt.Fprintf(errOut, "trtbuild: warning: the trace %s is incomplete: %s\n", q(o.flags.trace), traceProblem(err, n))
		default:
			if err := o.trace.Commit(); err != nil {
				fmt.Fprintf(errOut, "trtbuild: warning: no trace written: %v\n", err)
			}
		}
	}
	if o.recorder != nil && o.began && o.report != nil {
		if err := o.writeReport(); err != nil {
			fmt.Fprintf(errOut, "trtbuild: warning: no report written: %v\n", err)
		}
	}
	return late
}

// writeReport renders the report into its pending file and puts it in place.
func (o *outputs) writeReport() error {
	format, err := report.FormatOf(o.flags.report)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.Write(&buf, format, o.recorder.Report()); err != nil {
		return err
	}
	if _, err := o.report.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", q(o.flags.report), exitcode.PathCause(err))
	}
	return o.report.CloseAtomicallyReplace()
}

func traceProblem(err error, unwritten int64) string {
	if err != nil {
		return exitcode.SyscallCause(err).Error()
	}
	return fmt.Sprintf("its reader stopped reading, %d bytes were not written", unwritten)
}

// cleanup drops what finish did not put in place (a build that never started).
func (o *outputs) cleanup() {
	if o.report != nil {
		o.report.Cleanup() //nolint:errcheck // a no-op once committed
	}
	if !o.done && o.trace != nil {
		stop := make(chan struct{})
		close(stop)
		o.traceOut.Close(0, stop) //nolint:errcheck // dropped
		o.trace.Cleanup()         //nolint:errcheck // nothing to keep
	}
}

// outputStall is how long the end of a build waits for a stdout reader that accepts nothing
// before it gives up on the progress output that is left (the engine is written already).
const outputStall = 5 * time.Second

// drain waits for the progress output to reach stdout: until it did, the reader stopped
// reading for outputStall, or a signal came; that signal is returned, for the caller to answer.
func drain(w *outstream.Writer, errOut io.Writer, sigs <-chan os.Signal) os.Signal {
	stop, end := stopOnSignal(sigs)
	n, err := w.Close(outputStall, stop)
	late := end()
	if n > 0 && err == nil {
		fmt.Fprintf(errOut, "trtbuild: %d bytes of progress output were not written: stdout is not being read\n", n)
	}
	return late
}

// stopOnSignal watches sigs until end is called: stop is closed when a signal comes, and end
// returns that signal (nil if none came), so that it is answered, not lost.
func stopOnSignal(sigs <-chan os.Signal) (stop <-chan struct{}, end func() os.Signal) {
	stopped := make(chan struct{})
	done := make(chan struct{})
	var got os.Signal
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case sig := <-sigs:
			got = sig
			close(stopped)
		case <-done:
		}
	}()
	return stopped, func() os.Signal {
		close(done)
		<-finished
		return got
	}
}

// outputFiles are the build's --report and --trace files ("": none).
type outputFiles struct {
	report, trace string
}

// ProgressOutput is stdout for a build's progress: a writer that never blocks (internal/
// outstream), so that a reader that does not read delays no signal, budget or kill timer. A
// closed stdout is said once on errOut; the build goes on.
type ProgressOutput struct {
	w      *outstream.Writer
	errOut io.Writer
}

// NewProgressOutput writes progress to out; problems go to errOut.
func NewProgressOutput(out, errOut io.Writer) *ProgressOutput {
	return &ProgressOutput{errOut: errOut, w: outstream.New(out, outstream.Options{OnError: func(err error) {
		fmt.Fprintf(errOut, "trtbuild: stdout was closed (%v); progress output stops here, the build goes on\n", exitcode.SyscallCause(err))
	}})}
}

// Write queues p; it never blocks.
func (p *ProgressOutput) Write(b []byte) (int, error) { return p.w.Write(b) }

// Drain waits for the progress output to reach stdout: until it did, the reader stopped
// reading for outputStall, or a signal came; that signal is returned, for the caller to answer.
func (p *ProgressOutput) Drain(sigs <-chan os.Signal) os.Signal { return drain(p.w, p.errOut, sigs) }
