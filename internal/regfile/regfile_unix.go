//go:build !windows

package regfile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/outpath"
)

// errLink is the open's error for a link refused by OpenNoFollow.
var errLink error = unix.ELOOP

// open opens path with O_NONBLOCK (a FIFO with no writer does not block), and O_NOFOLLOW when
// noFollow is set, and keeps it only when fstat(2) says it is a regular file.
func open(path string, noFollow bool) (*os.File, fs.FileInfo, error) {
	flags := 0
	if noFollow {
		flags = unix.O_NOFOLLOW
	}
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
