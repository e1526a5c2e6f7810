package onnx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// OpenModel opens the model file at path for reading and returns it with
// what the file system says about it; the caller closes the file. It is the
// one way trtbuild opens a model (inspect, preflight, convert, the build
// worker's conversion). Anything but a regular file is refused with a
// one-line error: a folder, and a named pipe (FIFO), socket or device,
// which would block the reader forever or never end. The file is opened
// without blocking, so that opening a FIFO with no writer returns at once,
// and examined through the open descriptor, so that the file checked is the
// file read.
func OpenModel(path string) (*os.File, os.FileInfo, error) {
	f, st, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	switch {
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return nil, nil, fmt.Errorf("reading model: %s is a directory; pass the .onnx file inside it", pathtext.Q(path))
	case errors.As(err, &nr):
		return nil, nil, fmt.Errorf("reading model: %s is %s, not a regular file; pass the .onnx file itself (save a piped model to a file first)", pathtext.Q(path), nr.Kind)
	case err != nil:
		return nil, nil, fmt.Errorf("reading model: %w", err)
	}
	return f, st, nil
}

// FileKind names the type of a file that is not regular, for messages:
// "a named pipe (FIFO)", "a socket", "a device", "a folder".
func FileKind(mode fs.FileMode) string { return outpath.KindOf(mode).String() }

// notRegularError is returned by openRegular for a file that is not a
// regular file.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string { return "it is " + e.kind() + ", not a regular file" }

// kind names the type of file e.mode describes.
func (e *notRegularError) kind() string { return FileKind(e.mode) }

// openRegular opens a file with open, which must not block, and keeps it
// only when it is a regular file.
func openRegular(open func() (*os.File, error)) (*os.File, os.FileInfo, error) {
	f, err := open()
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &notRegularError{mode: st.Mode()}
	}
	return f, st, nil
}

// ExternalProblem says why an external data file cannot be read.
type ExternalProblem int

// The problems OpenExternal and StatExternal report.
const (
	// ExternalUnsafe: the location is absolute, climbs out of the model's
	// folder, or is a link that leads out of it.
	ExternalUnsafe ExternalProblem = iota + 1
	// ExternalMissing: there is no such file.
	ExternalMissing
	// ExternalNotRegular: it is a folder, FIFO, socket or device.
	ExternalNotRegular
	// ExternalUnreadable: the file system refused (permissions, for example).
	ExternalUnreadable
)

// ExternalError says why the external data file Location cannot be read.
type ExternalError struct {
	Location string
	Problem  ExternalProblem
	// Reason is a phrase for messages: "it climbs out of the model's
	// folder with \"..\"", "it is a named pipe (FIFO)" ...
	Reason string
	// Err is the file system's error, if any.
	Err error
}

// Error implements error.
func (e *ExternalError) Error() string {
	return fmt.Sprintf("external data file %q cannot be read: %s", e.Location, e.Reason)
}

// Unwrap returns the file system's error.
func (e *ExternalError) Unwrap() error { return e.Err }

// OpenExternal opens the external data file loc of a model whose folder is
// dir, for reading; the caller closes the file. It is the one way trtbuild
// opens external data, so the check that keeps a model from reading files
// outside its folder cannot be skipped: loc is checked with UnsafeLocation,
// and the file is opened through an os.Root on dir, which refuses links
// that lead out of the folder at every step of the path. A file that is not
// regular (a FIFO, a device, a folder) is refused without blocking. Errors
// are *ExternalError values.
func OpenExternal(dir, loc string) (*os.File, os.FileInfo, error) {
	if why := UnsafeLocation(loc); why != "" {
		return nil, nil, &ExternalError{Location: loc, Problem: ExternalUnsafe, Reason: why}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, &ExternalError{Location: loc, Problem: ExternalUnreadable, Reason: err.Error(), Err: err}
	}
	defer root.Close()
	f, st, err := openRegular(func() (*os.File, error) {
		return root.OpenFile(filepath.FromSlash(loc), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, nil, externalError(dir, loc, err)
	}
	return f, st, nil
}

// StatExternal examines the external data file loc of a model whose folder
// is dir without opening it, with the checks of OpenExternal. Errors are
// *ExternalError values.
func StatExternal(dir, loc string) (os.FileInfo, error) {
	if why := UnsafeLocation(loc); why != "" {
		return nil, &ExternalError{Location: loc, Problem: ExternalUnsafe, Reason: why}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &ExternalError{Location: loc, Problem: ExternalUnreadable, Reason: err.Error(), Err: err}
	}
	defer root.Close()
	return statExternalIn(root, dir, loc)
}

// statExternalIn is StatExternal through root, the model's folder dir held open.
func statExternalIn(root *os.Root, dir, loc string) (os.FileInfo, error) {
	if why := UnsafeLocation(loc); why != "" {
		return nil, &ExternalError{Location: loc, Problem: ExternalUnsafe, Reason: why}
	}
	st, err := root.Stat(filepath.FromSlash(loc))
	if err == nil && !st.Mode().IsRegular() {
		err = &notRegularError{mode: st.Mode()}
	}
	if err != nil {
		return st, externalError(dir, loc, err)
	}
	return st, nil
}

// externalError classifies an error of os.Root for location loc.
func externalError(dir, loc string, err error) *ExternalError {
	e := &ExternalError{Location: loc, Err: err}
	var nr *notRegularError
	switch {
	case errors.As(err, &nr):
		e.Problem, e.Reason = ExternalNotRegular, "it is "+nr.kind()
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		e.Problem, e.Reason = ExternalMissing, "it does not exist"
	case errors.Is(err, fs.ErrPermission):
		e.Problem, e.Reason = ExternalUnreadable, err.Error()
	default:
		// os.Root refuses a path that a link leads out of dir with an
		// unexported error; a path that exists outside the root is that
		// case. Anything else is reported as it is.
		if _, statErr := os.Lstat(filepath.Join(dir, filepath.FromSlash(loc))); statErr == nil {
			e.Problem, e.Reason = ExternalUnsafe, "it is a link that leads out of the model's folder"
		} else {
			e.Problem, e.Reason = ExternalUnreadable, err.Error()
		}
	}
	return e
}
