// Package regfile opens files trtbuild reads (models, traces, plugins, caches) without ever
// blocking on what is not a file: a FIFO given as a model would block open(2) until a writer
// appears, and read(2) until it writes. Open uses O_NONBLOCK, checks with fstat(2) that the
// file is regular, and only then hands it out.
//
// On Windows no open blocks on a named pipe or a device (it fails or succeeds at once: a pipe
// given as a model is connected to as a client, and closed as soon as its type is seen), and
// the file is examined through its handle (GetFileType, GetFileInformationByHandle): a
// folder, a pipe (\\.\pipe\NAME), the console or another device is refused the same way, and
// so is a name Windows maps to a device in every folder (CON, aux.onnx), without opening it.
// OpenNoFollow opens a reparse point itself (FILE_FLAG_OPEN_REPARSE_POINT) and refuses it: a
// symbolic link or a junction is not followed.
package regfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// NotRegularError is returned for a path that exists but is not a regular file.
type NotRegularError struct {
	Path string
	Kind outpath.Kind
}

func (e *NotRegularError) Error() string {
	if e.Kind == outpath.Dir {
		return fmt.Sprintf("%s is a folder, not a file", pathtext.Q(e.Path))
	}
	return fmt.Sprintf("%s is %s, not a regular file", pathtext.Q(e.Path), e.Kind)
}

// Open opens path for reading when it is a regular file (symbolic links are followed). Errors
// are *fs.PathError from the open or *NotRegularError.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return open(path, false)
}

// OpenNoFollow is Open that refuses a symbolic link as the last component (IsLink reports
// it), for files in folders other users may write.
func OpenNoFollow(path string) (*os.File, fs.FileInfo, error) {
	return open(path, true)
}

// IsLink reports whether err is OpenNoFollow's refusal of a link.
func IsLink(err error) bool { return errors.Is(err, errLink) }

// Check says whether path is a readable regular file, without blocking.
func Check(path string) error {
	f, _, err := Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}
