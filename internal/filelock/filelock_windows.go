package filelock

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// On Windows the lock is LockFileEx on the whole file. Its locks belong to the handle, and
// Windows releases them when the handle is closed or its process ends, however it ends.

// openLockFile opens path read-write, creating it, after refusing a link or junction there
// (FILE_FLAG_OPEN_REPARSE_POINT opens a link itself, which TryLock's Stat refuses as no
// regular file, and the check below one put there between the Lstat and the open). It shares
// the file with readers and writers but not with deleters: while the lock is held, the file
// can be neither removed nor renamed, so its lock cannot be undone by replacing the file.
func openLockFile(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err == nil && before.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("lock file %s: %w", pathtext.Q(path), errLink)
	}
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file %s: %w", pathtext.Q(path), err)
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_ALWAYS,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file %s: %w", pathtext.Q(path), err)
	}
	f := os.NewFile(uintptr(h), path)
	if before != nil {
		if now, err := f.Stat(); err != nil || !os.SameFile(before, now) {
			f.Close()
			return nil, fmt.Errorf("lock file %s changed while it was opened; try again", pathtext.Q(path))
		}
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
	switch err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, ^uint32(0), ^uint32(0), &ol); err {
	case nil:
		return true, nil
	case windows.ERROR_LOCK_VIOLATION, windows.ERROR_IO_PENDING:
		return false, nil
	default:
		return false, err
	}
}

// lockDir takes no lock on Windows, which locks no folders: TryLockDir relies on the lock
// file, which cannot be removed while it is held.
func lockDir(string, bool) (*os.File, bool, error) { return nil, true, nil }
