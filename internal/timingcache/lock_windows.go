package timingcache

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winowner"
)

// On Windows the lock is LockFileEx on the whole of "<file>.lock", exclusive or shared, tried
// with LOCKFILE_FAIL_IMMEDIATELY and retried until LockWait. LockFileEx locks belong to the
// handle, not the process, so two opens in one process exclude each other as two processes
// do (the same as the OFD locks of the Unix build), and Windows releases them when the handle
// is closed or its process ends, however it ends.

// lockFile is an open lock file, not yet locked.
type lockFile struct{ f *os.File }

// openLock opens the lock file at name, creating it when create is set. A reparse point
// (symbolic link, junction) is opened itself, never followed (FILE_FLAG_OPEN_REPARSE_POINT),
// and refused as a link; a folder, or anything that is not a file on a disk (a device name),
// is refused with errLockNotRegular.
func openLock(name string, create bool) (*lockFile, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, err
	}
	disposition := uint32(windows.OPEN_EXISTING)
	if create {
		disposition = windows.OPEN_ALWAYS
	}
	open := func(access uint32) (windows.Handle, error) {
		return windows.CreateFile(p, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, disposition,
			windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	}
	h, err := open(windows.GENERIC_READ | windows.GENERIC_WRITE)
	if err == windows.ERROR_ACCESS_DENIED {
		// Another user's lock file this user may only read: LockFileEx needs read or write
		// access, so both kinds of lock work on it.
		h, err = open(windows.GENERIC_READ)
	}
	if err != nil {
		return nil, err
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, errLockNotRegular
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, syscall.ELOOP
	}
	if t, err := windows.GetFileType(h); err != nil || t != windows.FILE_TYPE_DISK || info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		windows.CloseHandle(h)
		return nil, errLockNotRegular
	}
	return &lockFile{f: os.NewFile(uintptr(h), name)}, nil
}

// try takes the lock without waiting; false when another handle holds a conflicting one.
func (l *lockFile) try(exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(l.f.Fd()), flags, 0, ^uint32(0), ^uint32(0), &ol)
	switch err {
	case nil:
		return true, nil
	case windows.ERROR_LOCK_VIOLATION, windows.ERROR_IO_PENDING:
		return false, nil
	}
	return false, err
}

// writable says whether this user may create files in the folder dir: Windows has no
// access(2), and its ACLs decide, so it creates a temporary file there, deleted on close.
func writable(dir string) error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(filepath.Join(dir, ".trtbuild-write-check-"+hex.EncodeToString(b[:])))
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_WRITE, 0, nil, windows.CREATE_NEW,
		windows.FILE_ATTRIBUTE_TEMPORARY|windows.FILE_FLAG_DELETE_ON_CLOSE, 0)
	if err != nil {
		return err
	}
	return windows.CloseHandle(h)
}

// ownedBySelf says whether the regular file at path belongs to this user: its owner SID is
// this user's (internal/winowner has the rule, elevated processes included).
func ownedBySelf(path string, _ fs.FileInfo) bool {
	owner, err := winowner.OfPath(path)
	return err == nil && winowner.IsSelf(owner)
}
