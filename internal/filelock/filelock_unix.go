//go:build !windows

package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// openLockFile opens path read-write, creating it 0600, O_NOFOLLOW|O_NONBLOCK (os.OpenFile
// adds O_CLOEXEC, so a worker process started later does not inherit the lock).
func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Err == syscall.ELOOP {
			return nil, fmt.Errorf("lock file %s: %w", pathtext.Q(path), errLink)
		}
		return nil, fmt.Errorf("opening the lock file %s: %w", pathtext.Q(path), err)
	}
	return f, nil
}

// tryLock takes flock(2) without waiting; false, nil when another holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return false, nil
		}
		return false, err
	}
}
