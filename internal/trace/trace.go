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

// Read decodes a JSON-lines event stream. Blank lines are skipped; events of types this
// version does not know are dropped; a malformed line is an error naming its number.
func Read(r io.Reader) (*Trace, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	t := &Trace{}
	seen := false
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(trimSpace(line)) > 0 {
			e, derr := progress.DecodeJSON(line)
			if derr != nil {
				return nil, fmt.Errorf("line %d: %w", n, derr)
			}
			seen = true
			switch e.Type {
			case progress.EventBuild:
				t.Info = *e.Info
			case progress.EventResult:
				res := *e.Result
				t.Result = &res
			case progress.EventPhaseStart, progress.EventStep, progress.EventPhaseFinish, progress.EventLog:
				t.Events = append(t.Events, e)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if !seen {
		return nil, ErrEmpty
	}
	return t, nil
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
