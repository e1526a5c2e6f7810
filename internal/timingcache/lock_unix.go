//go:build !windows

package timingcache

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Unix the lock is two locks on the same file: flock(2), which earlier trtbuild releases
// take, and an open file description lock (fcntl F_OFD_SETLK), which conflicts with the POSIX
// record lock trtexec takes with lockf(3). Both belong to the open file description, so two
// opens in one process exclude each other as two processes do.

// lockFile is an open lock file, not yet locked.
type lockFile struct {
	f          *os.File
	readOnlyFD bool // opened read-only: another user's lock file this user may only read
}

// openLock opens the lock file at name, creating it when create is set, never through a link
// (O_NOFOLLOW) and never blocking on a FIFO (O_NONBLOCK). It returns errLockNotRegular for
// anything but a regular file.
func openLock(name string, create bool) (*lockFile, error) {
	flags := unix.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if create {
		flags |= unix.O_CREAT
	}
	fd, err := unix.Open(name, flags, 0o644)
	readOnlyFD := false
	if err == unix.EACCES {
		// Another user's lock file this user may only read: flock(2) works on it, and so does
		// a shared OFD lock; an exclusive one needs a writable descriptor and is left out.
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		readOnlyFD = true
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, errLockNotRegular
	}
	return &lockFile{f: f, readOnlyFD: readOnlyFD}, nil
}

// try takes both locks without waiting; false when another holds one of them.
func (l *lockFile) try(exclusive bool) (bool, error) {
	fd := int(l.f.Fd())
	how := unix.LOCK_SH
	typ := int16(unix.F_RDLCK)
	if exclusive {
		how, typ = unix.LOCK_EX, unix.F_WRLCK
	}
	if err := unix.Flock(fd, how|unix.LOCK_NB); err != nil {
		if err == unix.EWOULDBLOCK {
			return false, nil
		}
		return false, err
	}
	if l.readOnlyFD && exclusive {
		return true, nil
	}
	lk := unix.Flock_t{Type: typ, Whence: io.SeekStart}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk); err != nil {
		unix.Flock(fd, unix.LOCK_UN) //nolint:errcheck // retried by the caller
		if err == unix.EAGAIN || err == unix.EACCES {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// writable says whether this user may create files in the folder dir (access(2) W_OK).
func writable(dir string) error { return unix.Access(dir, unix.W_OK) }

// ownedBySelf says whether st, the regular file at path, belongs to this user (its uid is the
// effective uid).
func ownedBySelf(_ string, st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Geteuid()
}
