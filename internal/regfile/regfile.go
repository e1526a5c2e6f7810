// Package regfile opens files trtbuild reads (models, traces, plugins, caches) without ever
// blocking on what is not a file: a FIFO given as a model would block open(2) until a writer
// appears, and read(2) until it writes. Open uses O_NONBLOCK, checks with fstat(2) that the
// file is regular, and only then hands it out.
package regfile

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

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
// are *fs.PathError from open(2) or *NotRegularError.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return open(path, 0)
}

// OpenNoFollow is Open that refuses a symbolic link as the last component (ELOOP), for files in
// folders other users may write.
func OpenNoFollow(path string) (*os.File, fs.FileInfo, error) {
	return open(path, unix.O_NOFOLLOW)
}

func open(path string, flags int) (*os.File, fs.FileInfo, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY|flags, 0)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Kind: outpath.KindOf(st.Mode())}
	}
	// O_NONBLOCK means nothing for a regular file's reads; clear it all the same.
	if err := unix.SetNonblock(fd, false); err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, st, nil
}

// Check says whether path is a readable regular file, without blocking.
func Check(path string) error {
	f, _, err := Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}
