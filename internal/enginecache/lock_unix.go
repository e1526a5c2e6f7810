//go:build !windows

package enginecache

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openLock opens (creating it) the lock file in the cache folder root, O_NOFOLLOW|O_NONBLOCK;
// name is its quoted path for messages. Without exclusive, a folder this user cannot write
// gives errReadOnly.
func openLock(root *os.File, name string, exclusive bool) (*os.File, error) {
	fd, err := unix.Openat(fdOf(root), lockName, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0o644)
	if err == unix.EACCES {
		// A link planted in a sticky folder gives EACCES with O_CREAT: say what is there.
		if st, serr := statAt(root, lockName); serr == nil && !st.regular() {
			return nil, lockKindError(name, st)
		}
	}
	switch {
	case err == unix.ELOOP:
		return nil, lockLinkError(name)
	case (err == unix.EACCES || err == unix.EROFS) && !exclusive:
		return nil, errReadOnly
	case err != nil:
		return nil, fmt.Errorf("opening the lock file %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), lockName)
	st, err := statFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the lock file %s: %w", name, err)
	}
	if !st.regular() {
		f.Close()
		return nil, lockKindError(name, st)
	}
	if st.mine() && st.Mode&0o444 != 0o444 {
		// Created under a strict umask: every user of the cache must be able to open it.
		_ = unix.Fchmod(fd, st.Mode&0o777|0o444)
	}
	return f, nil
}

// tryLock takes flock(2) without waiting; false, nil when another holds it.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := unix.Flock(fdOf(f), how|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK || err == unix.EINTR {
		return false, nil
	}
	return err == nil, err
}
