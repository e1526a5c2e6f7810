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

// lockDir opens the folder dir (no link followed) and takes flock(2) on it without waiting:
// nil, false, nil when another holds a conflicting lock, and nil, true, nil where the file
// system locks no folders (EBADF, ENOLCK, EINVAL, EOPNOTSUPP: NFS, for one), whose callers
// rely on the lock file alone.
func lockDir(dir string, exclusive bool) (*os.File, bool, error) {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, fmt.Errorf("opening the folder %s to lock it: %w", pathtext.Q(dir), err)
	}
	ok, err := tryLock(d, exclusive)
	switch {
	case err == nil && ok:
		return d, true, nil
	case err == nil:
		d.Close()
		return nil, false, nil
	}
	d.Close()
	if errors.Is(err, unix.EBADF) || errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("locking the folder %s: %w", pathtext.Q(dir), err)
}
