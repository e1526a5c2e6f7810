package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// WriteFromTrace writes the report of the build recorded in tracePath (a --trace file or
// --progress json output) to out ("": the trace's name with .html), as `trtbuild report`
// does, and returns out. Bad input is a usage error (exit status 2) that says what to do.
func WriteFromTrace(tracePath, out string) (string, error) {
	// The default name beside the trace is trtbuild's choice: it follows no link.
	use := outpath.WholeFile
	if out == "" {
		out, use = strings.TrimSuffix(tracePath, filepath.Ext(tracePath))+".html", outpath.Own
	}
	format, err := FormatOf(out)
	if err != nil {
		return "", exitcode.Usagef("invalid -o: %v", err)
	}
	target, err := outpath.Check("-o", out, use)
	if use == outpath.Own && err != nil {
		return "", exitcode.Usagef("%s, or give the report's path with -o", exitcode.OneLine(err))
	}
	if err != nil {
		return "", err
	}
	if in, err := outpath.Inspect(tracePath); err == nil && in.Info != nil {
		if err := outpath.Conflicts([]outpath.Named{{Name: "-o", Target: target}}, []outpath.Named{{Name: "the trace", Target: in}}); err != nil {
			return "", exitcode.Wrap(exitcode.Usage, err)
		}
	}
	tr, closeTrace, err := OpenTrace(tracePath)
	if err != nil {
		return "", err
	}
	defer closeTrace()
	r, err := FromReader(tr)
	if err != nil {
		return "", TraceError(tracePath, err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, format, r); err != nil {
		return "", exitcode.Wrap(exitcode.Failed, err)
	}
	if err := writeTarget(target, buf.Bytes()); err != nil {
		return "", exitcode.Wrap(exitcode.Failed, fmt.Errorf("writing the report: %w; choose a writable path with -o", err))
	}
	return out, nil
}

// OpenTrace opens a recorded trace for streaming, with errors that say what to do. Only a
// regular file is read: a FIFO or device would block or never end.
func OpenTrace(path string) (*trace.Reader, func(), error) {
	f, _, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, exitcode.Usagef("trace %s does not exist", pathtext.Q(path)).Hintf("record one with trtbuild --trace FILE or --progress json")
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return nil, nil, exitcode.Usagef("trace %s is a directory", pathtext.Q(path)).Hintf("give the .jsonl file")
	case errors.As(err, &nr):
		return nil, nil, exitcode.Usagef("trace %s is %s, not a file", pathtext.Q(path), nr.Kind).Hintf("save the trace to a file first")
	case err != nil:
		return nil, nil, exitcode.Usagef("cannot read trace %s: %v", pathtext.Q(path), exitcode.PathCause(err))
	}
	return trace.NewReader(f), func() { f.Close() }, nil
}

// TraceError says what went wrong reading a trace: a file that is not a trace at all is bad
// input (exit 2), a damaged trace a failure.
func TraceError(path string, err error) error {
	if errors.Is(err, trace.ErrNotTrace) {
		return exitcode.Usagef("%s: this is not a trace recorded by --trace or --progress json", pathtext.Q(path)).Hintf("record one with trtbuild MODEL.onnx --trace build.jsonl")
	}
	return exitcode.Wrap(exitcode.Failed, fmt.Errorf("trace %s: %w", pathtext.Q(path), err))
}

// Load reads a build as a trace, or as a JSON report written by --report FILE.json.
func Load(path string) (*Report, error) {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, exitcode.Usagef("cannot read report %s: %v", pathtext.Q(path), exitcode.PathCause(err))
		}
		var r Report
		if err := json.Unmarshal(data, &r); err != nil || r.Version == 0 {
			return nil, exitcode.Usagef("%s is not a JSON report written by --report FILE.json", pathtext.Q(path)).Hintf("give a trace or such a report")
		}
		return &r, nil
	}
	tr, closeTrace, err := OpenTrace(path)
	if err != nil {
		return nil, err
	}
	defer closeTrace()
	r, err := FromReader(tr)
	if err != nil {
		return nil, TraceError(path, err)
	}
	return r, nil
}

// writeTarget writes data to t, the output Check inspected, atomically (internal/outpath).
func writeTarget(t outpath.Target, data []byte) error {
	p, err := outpath.Create(t)
	if err != nil {
		return err
	}
	defer p.Cleanup() //nolint:errcheck // a no-op once committed
	if _, err := p.Write(data); err != nil {
		return err
	}
	return p.CloseAtomicallyReplace()
}
