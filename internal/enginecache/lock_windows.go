package enginecache

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/fserr"
)

// On Windows the lock is LockFileEx on the whole of "lock". Its locks belong to the handle,
// so two opens in one process exclude each other as two processes do, and Windows releases
// them when the handle is closed or its process ends, however it ends.

// openLock opens (creating it: FILE_OPEN_IF) the lock file relative to the cache folder
// handle root, never following a reparse point; name is its quoted path for messages.
// Without exclusive, a folder this user cannot write gives errReadOnly.
func openLock(root *os.File, name string, exclusive bool) (*os.File, error) {
	h, err := ntOpen(handleOf(root), lockName, windows.FILE_GENERIC_READ, windows.FILE_OPEN_IF, windows.FILE_NON_DIRECTORY_FILE, nil)
	if err != nil {
		if st, serr := statAt(root, lockName); serr == nil && !st.regular() {
			if st.reparse() {
				return nil, lockLinkError(name)
			}
			return nil, lockKindError(name, st)
		}
		if (fserr.Is(err, fserr.Denied) || fserr.Is(err, fserr.ReadOnly)) && !exclusive {
			return nil, errReadOnly
		}
		return nil, fmt.Errorf("opening the lock file %s: %w", name, err)
	}
	f := os.NewFile(uintptr(h), lockName)
	st, err := statFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the lock file %s: %w", name, err)
	}
	if st.reparse() {
		f.Close()
		return nil, lockLinkError(name)
	}
	if !st.regular() {
		f.Close()
		return nil, lockKindError(name, st)
	}
	return f, nil
}

// tryLock takes LockFileEx with LOCKFILE_FAIL_IMMEDIATELY; false, nil when another handle
// holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	var ol windows.Overlapped
	switch err := windows.LockFileEx(handleOf(f), flags, 0, ^uint32(0), ^uint32(0), &ol); err {
	case nil:
		return true, nil
	case windows.ERROR_LOCK_VIOLATION, windows.ERROR_IO_PENDING:
		return false, nil
	default:
		return false, err
	}
}
