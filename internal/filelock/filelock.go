// Package filelock takes advisory locks on files that the system releases when the process
// that holds them ends, however it ends (SIGKILL and a crash included): flock(2) on Unix,
// LockFileEx on Windows (filelock_unix.go, filelock_windows.go). A lock belongs to its open
// file, so two Locks of one file in one process exclude each other as two processes do.
//
// The lock file is opened as trtbuild opens its own files: never through a symbolic link (on
// Windows, no reparse point), never blocking on a FIFO planted there, and only when it is a
// regular file. The file is created (0600) when it is missing, and its contents are never read.
//
// A lock file can be removed while it is held, and a later TryLock then locks a new file at
// its path: a lock that must hold whatever is done to the files in a folder is TryLockDir's,
// which on Unix locks the folder itself.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// Lock is a held lock. Release lets it go; so does the end of the process.
type Lock struct {
	f    *os.File
	path string
	dir  *os.File // TryLockDir's folder, locked too; nil where it is not
}

// TryLock opens path, creating it when it is missing, and takes its lock, exclusive or
// shared, without waiting. held is false (with a nil Lock and error) when another holder's
// lock conflicts: an exclusive lock conflicts with every other, a shared one only with an
// exclusive one.
func TryLock(path string, exclusive bool) (l *Lock, held bool, err error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, false, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("lock file %s is not a regular file; remove it", pathtext.Q(path))
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	ok, err := tryLock(f, exclusive)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("locking %s: %w", pathtext.Q(path), err)
		}
		return nil, false, nil
	}
	return &Lock{f: f, path: path}, true, nil
}

// TryLockDir takes the lock of the folder dir, exclusive or shared, without waiting, as TryLock
// does: on Unix flock(2) on the folder itself, which no removal or rename of a file inside it
// can undo, and also TryLock's on its file name (created when missing), which trtbuild
// versions before this one take alone. Windows locks no folders: there it is the lock of the
// file name alone, which cannot be removed or renamed while it is held (openLockFile). Where
// the file system locks no folders (NFS), the file's lock is taken alone too.
func TryLockDir(dir, name string, exclusive bool) (l *Lock, held bool, err error) {
	d, ok, err := lockDir(dir, exclusive)
	if err != nil || !ok {
		return nil, false, err
	}
	l, held, err = TryLock(filepath.Join(dir, name), exclusive)
	if err != nil || !held {
		if d != nil {
			d.Close()
		}
		return nil, held, err
	}
	l.dir = d
	return l, true, nil
}

// Stat is the locked file's information, from its open file (not its path).
func (l *Lock) Stat() (os.FileInfo, error) { return l.f.Stat() }

// Named reports whether the lock's path still names the locked file: another process may have
// removed a file it found unlocked, and a lock on a removed file guards nothing.
func (l *Lock) Named() bool {
	held, err := l.f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(l.path)
	return err == nil && os.SameFile(held, now)
}

// Release lets the lock go. Releasing a nil Lock does nothing.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if l.dir != nil {
		l.dir.Close()
		l.dir = nil
	}
	return err
}

// errLink is the refusal of a lock file that is a symbolic link.
var errLink = errors.New("it is a symbolic link, which trtbuild does not follow; remove it")
