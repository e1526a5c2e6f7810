// Package trace reads a recorded build: the JSON-lines event stream that `--progress json`
// prints and `--trace FILE` records (docs/events.md), for `trtbuild report` and
// `trtbuild replay`.
package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// maxLine bounds one line of a trace (a phase name or log message is at most a few KiB).
const maxLine = 16 << 20

// ErrEmpty is returned for a trace without a single event.
var ErrEmpty = errors.New("the trace holds no events; record one with --trace FILE or --progress json")

// Trace is a decoded event stream: what `--progress json` or `--trace` wrote.
type Trace struct {
	Info   progress.BuildInfo
	Result *progress.Result // nil when the trace ends without a result line
	Events []progress.Event // every event but build and result, in order
}

// ErrNotTrace is returned when the first line of a file is not an event: the file is
// something else (a model, an engine, a log).
var ErrNotTrace = errors.New("this is not a trace recorded by --trace or --progress json")

// Read decodes a whole JSON-lines event stream into memory. Blank lines are skipped; events of
// types this version does not know are dropped; a malformed line is an error naming its
// number. Reader reads a trace without holding it.
func Read(r io.Reader) (*Trace, error) {
	tr := NewReader(r)
	t := &Trace{}
	for {
		e, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		t.Events = append(t.Events, e)
	}
	t.Info, t.Result = tr.Info, tr.Result
	return t, nil
}

// Reader reads a trace one event at a time, holding one line: `trtbuild report` and `replay`
// stream traces of any length through it.
type Reader struct {
	br   *bufio.Reader
	line int
	seen bool
	// Info is the recorded build, once its line was read (the first line of a trace).
	Info progress.BuildInfo
	// Result is how the build ended, once its line was read; nil before, and at the end of a
	// trace that has none.
	Result *progress.Result
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader { return &Reader{br: bufio.NewReaderSize(r, 1<<16)} }

// Next returns the next phase_start, step, phase_finish or log event; build and result lines
// set Info and Result, and events of unknown types are skipped. It returns io.EOF at the end,
// ErrEmpty for a trace without any event, and an error wrapping ErrNotTrace when the first
// line is not an event at all.
func (r *Reader) Next() (progress.Event, error) {
	for {
		r.line++
		line, err := readLine(r.br)
		if err != nil && err != io.EOF {
			return progress.Event{}, r.lineError(err)
		}
		if len(trimSpace(line)) > 0 {
			e, derr := progress.DecodeJSON(line)
			if derr != nil {
				return progress.Event{}, r.lineError(derr)
			}
			r.seen = true
			switch e.Type {
			case progress.EventBuild:
				r.Info = *e.Info
			case progress.EventResult:
				res := *e.Result
				r.Result = &res
			case progress.EventPhaseStart, progress.EventStep, progress.EventPhaseFinish, progress.EventLog:
				return e, nil
			}
		}
		if err == io.EOF {
			if !r.seen {
				return progress.Event{}, ErrEmpty
			}
			return progress.Event{}, io.EOF
		}
	}
}

// lineError names the line of err; on the first line of a file, the file is not a trace.
func (r *Reader) lineError(err error) error {
	if !r.seen && !errors.Is(err, progress.ErrNewerSchema) {
		return fmt.Errorf("%w (line %d: %v)", ErrNotTrace, r.line, err)
	}
	return fmt.Errorf("line %d: %w", r.line, err)
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if len(long) > maxLine {
				return nil, fmt.Errorf("a line is longer than %d MiB: this is not a trtbuild trace", maxLine>>20)
			}
			continue
		}
		if long != nil {
			long = append(long, chunk...)
			if len(long) > maxLine {
				return nil, fmt.Errorf("a line is longer than %d MiB: this is not a trtbuild trace", maxLine>>20)
			}
			return long, err
		}
		return chunk, err
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}
