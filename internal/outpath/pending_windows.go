//go:build windows

package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/winowner"
)

// The Windows rules of a pending output, in the order they apply:
//
//   - The target's folder is opened when the output is created, with FILE_FLAG_BACKUP_SEMANTICS
//     and without FILE_SHARE_DELETE: while the output is pending the folder cannot be renamed,
//     removed or replaced (Windows refuses the DELETE access every such change needs), and the
//     handle is checked to be the folder Inspect saw (volume serial and file index).
//   - The new content goes to .NAME.trtbuild-RANDOM.tmp in that folder, created relative to the
//     folder handle with FILE_CREATE (CREATE_NEW: never an existing file, nor a link planted at
//     the name), the hidden and temporary attributes, and no sharing at all: while its writer
//     lives no other process can open it, to read a partial engine or to remove it.
//   - CloseAtomicallyReplace flushes it (FlushFileBuffers), clears the hidden and temporary
//     attributes, and renames it over the target through its own open handle
//     (FILE_RENAME_INFORMATION relative to the folder handle, ReplaceIfExists). This is
//     MoveFileEx(MOVEFILE_REPLACE_EXISTING) done by handle rather than by name: MoveFileEx and
//     ReplaceFile both open the file by name again, which needs the writer's handle closed
//     first and leaves a moment in which another process may open or remove it; ReplaceFile
//     also copies the old file's ACL and attributes to the new one, which lets whoever planted
//     the old file keep write access to the new engine. The rename replaces what has the name
//     then (a file, or a link itself), never what a link points to. Write-through is the flush
//     before it: the rename is one metadata change the file system journals.
//   - A new file takes the ACL the folder gives files made in it (inheritance): the Linux rules
//     of permission bits, umask and inherited permissions have no Windows meaning, and only the
//     read-only attribute is set or cleared (Chmod's 0o200 bit). A read-only target is refused
//     beforehand (Refusal).
//   - A writer that died leaves its temporary file: the next Create for the same target removes
//     it (cleanStaleAt) when it can be opened exclusively, which succeeds only when no process
//     holds it open: that exclusive open is the lock that tells a dead writer from a living one.

// inheritedPerm is the mode a file replacing old gets. On Windows permissions are the ACL the
// folder passes on, not mode bits: only the read-only attribute (0o200 clear) carries over,
// and a read-only target is refused before it comes to this.
func inheritedPerm(old fs.FileInfo) os.FileMode { return old.Mode().Perm() }

// umask has no Windows meaning: it is 0, and a new file's access is the folder's inherited ACL.
func umask() os.FileMode { return 0 }

// folderAccess is what a held folder handle may do: list the folder and pass through it. It
// is shared for reading and writing but not deleting, which is what keeps the folder in place.
const (
	folderAccess = windows.FILE_LIST_DIRECTORY | windows.FILE_TRAVERSE | windows.FILE_READ_ATTRIBUTES | windows.SYNCHRONIZE
	folderShare  = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE
)

// openFolder opens the folder name and holds it in place (no FILE_SHARE_DELETE). When want is
// not nil (the folder as Inspect saw it), the folder opened must be that one: a folder
// renamed, or replaced by a junction elsewhere, since is refused.
func openFolder(name string, want fs.FileInfo) (*os.File, error) {
	h, err := createFile(name, folderAccess, folderShare, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS)
	if err != nil {
		if errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
			return nil, fmt.Errorf("opening the folder %s: it is being renamed or removed by another program; try again: %w", pathtext.Q(name), err)
		}
		return nil, fmt.Errorf("opening the folder %s: %w", pathtext.Q(name), err)
	}
	dir := newFile(h, name)
	info, err := handleInfo(h)
	if err != nil || info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		dir.Close()
		return nil, fmt.Errorf("%s is not a folder", pathtext.Q(name))
	}
	if want != nil {
		st, err := dir.Stat()
		if err != nil || !os.SameFile(st, want) {
			dir.Close()
			return nil, fmt.Errorf("the folder %s was replaced while trtbuild was starting; check it and try again", pathtext.Q(name))
		}
	}
	return dir, nil
}

// tempAttrs are the attributes of a temporary file: hidden from a folder listing, and
// temporary, which asks the cache manager to keep it in memory.
const tempAttrs = windows.FILE_ATTRIBUTE_HIDDEN | windows.FILE_ATTRIBUTE_TEMPORARY

// createTemp makes a file named after base in the open folder dir that only this process can
// open: FILE_CREATE (CREATE_NEW) relative to the folder handle, no sharing, DELETE access for
// the rename by handle. named is its name in dir.
func createTemp(dir *os.File, base string) (f *os.File, named string, err error) {
	for range 100 {
		name := tempName(base)
		h, err := ntOpenAt(windows.Handle(dir.Fd()), name, windows.GENERIC_READ|windows.GENERIC_WRITE|windows.DELETE, tempAttrs,
			0, windows.FILE_CREATE, windows.FILE_NON_DIRECTORY_FILE)
		if errors.Is(err, windows.ERROR_FILE_EXISTS) || errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			continue
		}
		if err != nil {
			return nil, "", &os.PathError{Op: "create", Path: filepath.Join(dir.Name(), name), Err: err}
		}
		return newFile(h, filepath.Join(dir.Name(), name)), name, nil
	}
	return nil, "", errors.New("no free temporary name")
}

// commit flushes the file, gives it its attributes and renames it over the target by handle,
// inside the folder opened by Create.
func (p *Pending) commit() error {
	h := windows.Handle(p.Fd())
	if err := windows.FlushFileBuffers(h); err != nil {
		return p.fail("syncing", err)
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if p.perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	if err := setAttributes(h, attrs); err != nil {
		return p.fail("setting the attributes of", err)
	}
	err := renameAt(h, windows.Handle(p.dir.Fd()), p.base)
	// The target may be held open for a moment by another program: a build committing the same
	// output (its handle stays open until just after its rename) or a reader. Windows cannot
	// replace an open file; wait for it a bounded time, as Lock does.
	for deadline := time.Now().Add(replaceWait); err != nil && isBusy(err) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		err = renameAt(h, windows.Handle(p.dir.Fd()), p.base)
	}
	if err != nil {
		if isBusy(err) {
			return fmt.Errorf("renaming into place %s: %w (another program has it open, or it is read-only or a folder); close it and build again", pathtext.Q(p.target.Final), err)
		}
		return p.fail("renaming into place", err)
	}
	return nil
}

// replaceWait bounds how long a commit waits for a target another program holds open.
const replaceWait = FolderLockWait

// isBusy reports whether a rename failed because the target is in use (or cannot be replaced).
func isBusy(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

// createDeviceTemp makes the file in %TEMP% that an output to the character device t (NUL) is
// written to before it is copied there: created with FILE_DELETE_ON_CLOSE and no sharing, so it
// is gone when its handle closes, a killed process's included, as an unnamed file is on Linux.
func createDeviceTemp(t Target) (*os.File, error) {
	tmp, err := openFolder(os.TempDir(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s is written through a temporary file in %%TEMP%%, and %s cannot be opened (%v); set TEMP to a writable folder", pathtext.Q(t.Path), pathtext.Q(os.TempDir()), unwrapPath(errors.Unwrap(err)))
	}
	defer tmp.Close()
	for range 100 {
		name := tempName("device-output")
		h, err := ntOpenAt(windows.Handle(tmp.Fd()), name, windows.GENERIC_READ|windows.GENERIC_WRITE|windows.DELETE, tempAttrs,
			0, windows.FILE_CREATE, windows.FILE_NON_DIRECTORY_FILE|windows.FILE_DELETE_ON_CLOSE)
		if errors.Is(err, windows.ERROR_FILE_EXISTS) || errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s is written through a temporary file in %%TEMP%%, and none can be made in %s (%v); set TEMP to a writable folder", pathtext.Q(t.Path), pathtext.Q(os.TempDir()), err)
		}
		return newFile(h, ""), nil
	}
	return nil, errors.New("no free temporary name")
}

// openThrough opens the null device or the named pipe t for writing through. A pipe that no
// process serves is refused at once (ERROR_FILE_NOT_FOUND), and one whose every instance is
// taken too (ERROR_PIPE_BUSY): opening never waits.
func openThrough(t Target) (*os.File, error) {
	h, err := createFile(t.Final, windows.GENERIC_WRITE, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, windows.OPEN_EXISTING, 0)
	switch {
	case t.Kind == FIFO && (errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND)):
		return nil, fmt.Errorf("%s is a named pipe that no process is serving; start its reader first", pathtext.Q(t.Path))
	case t.Kind == FIFO && errors.Is(err, windows.ERROR_PIPE_BUSY):
		return nil, fmt.Errorf("%s is a named pipe whose every instance is in use; let its reader accept another client and try again", pathtext.Q(t.Path))
	case err != nil:
		return nil, fmt.Errorf("opening %s: %w", pathtext.Q(t.Path), err)
	}
	ft, err := windows.GetFileType(h)
	if err != nil || (ft != windows.FILE_TYPE_PIPE && ft != windows.FILE_TYPE_CHAR) {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("%s changed while it was opened (it is no longer a pipe or a device); try again", pathtext.Q(t.Path))
	}
	return newFile(h, t.Final), nil
}

// removeTemp removes the pending file's temporary name: the file is marked for deletion
// through its own handle (no other can be opened: it is not shared), and goes when the handle
// closes.
func (p *Pending) removeTemp() error {
	if !p.closed {
		return deleteByHandle(windows.Handle(p.Fd()))
	}
	h, err := ntOpenAt(windows.Handle(p.dir.Fd()), p.named, windows.DELETE|windows.FILE_READ_ATTRIBUTES, 0,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, windows.FILE_OPEN, windows.FILE_NON_DIRECTORY_FILE)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return deleteByHandle(h)
}

// Folder returns the pending file's folder, held open until Close (a duplicate of the handle
// that keeps it in place); nil for a device. Call it before the commit.
func (p *Pending) Folder() (*Folder, error) {
	if p.dir == nil {
		return nil, nil
	}
	h, err := duplicate(windows.Handle(p.dir.Fd()))
	if err != nil {
		return nil, fmt.Errorf("holding the folder of %s: %w", pathtext.Q(p.target.Path), err)
	}
	return &Folder{f: newFile(h, p.dir.Name())}, nil
}

// duplicate returns a second handle of h, with the same access, not inherited.
func duplicate(h windows.Handle) (windows.Handle, error) {
	self := windows.CurrentProcess()
	var d windows.Handle
	err := windows.DuplicateHandle(self, h, self, &d, 0, false, windows.DUPLICATE_SAME_ACCESS)
	return d, err
}

// folderLockName is the file in an output's folder that Lock locks. Windows locks byte ranges
// of files, not folders (LockFileEx on a folder handle fails), so the lock is LockFileEx on
// this hidden, empty file, which stays in the folder. It is opened as itself: a link or junction
// planted at the name is not followed and the lock not taken.
const folderLockName = ".trtbuild.lock"

// Lock takes an exclusive LockFileEx on the folder's lock file (folderLockName), and returns
// its release. Other trtbuild processes committing into the same folder wait; nothing else is
// blocked, and Windows releases the lock of a process that dies. held is false when the lock
// could not be had within FolderLockWait (someone else holds it, or the lock file cannot be
// made or is not a plain file): the caller goes on without it.
func (d *Folder) Lock() (unlock func(), held bool) {
	h, err := ntOpenAt(windows.Handle(d.f.Fd()), folderLockName, windows.GENERIC_READ, windows.FILE_ATTRIBUTE_HIDDEN,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, windows.FILE_OPEN_IF, windows.FILE_NON_DIRECTORY_FILE)
	if err != nil {
		return func() {}, false
	}
	if info, err := handleInfo(h); err != nil || isReparse(info.FileAttributes) {
		windows.CloseHandle(h)
		return func() {}, false
	}
	deadline := time.Now().Add(FolderLockWait)
	for {
		ol := new(windows.Overlapped)
		err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
		if err == nil {
			return func() {
				windows.UnlockFileEx(h, 0, 1, 0, new(windows.Overlapped)) //nolint:errcheck // closing releases it too
				windows.CloseHandle(h)
			}, true
		}
		if !errors.Is(err, windows.ERROR_LOCK_VIOLATION) || time.Now().After(deadline) {
			windows.CloseHandle(h)
			return func() {}, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Holds reports whether name in the folder is the file f (the same volume and file index), and
// not a link to it.
func (d *Folder) Holds(name string, f *os.File) bool {
	h, err := ntOpenAt(windows.Handle(d.f.Fd()), name, windows.FILE_READ_ATTRIBUTES, 0,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, windows.FILE_OPEN, 0)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	at, err1 := handleInfo(h)
	want, err2 := handleInfo(windows.Handle(f.Fd()))
	return err1 == nil && err2 == nil && !isReparse(at.FileAttributes) && sameFileInfo(at, want)
}

// RemoveTarget removes the regular file now at the target's name (an old manifest that would
// describe a file no longer there), in the folder opened by Create; a link or junction there
// is left alone, not followed, and a missing file is no error.
func (p *Pending) RemoveTarget() error {
	if p.dir == nil {
		return nil
	}
	h, err := ntOpenAt(windows.Handle(p.dir.Fd()), p.base, windows.DELETE|windows.FILE_READ_ATTRIBUTES, 0,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, windows.FILE_OPEN, windows.FILE_NON_DIRECTORY_FILE)
	if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
		return nil
	}
	if err != nil {
		return p.fail("removing", err)
	}
	defer windows.CloseHandle(h)
	if info, err := handleInfo(h); err != nil || isReparse(info.FileAttributes) {
		return nil
	}
	if err := deleteByHandle(h); err != nil {
		return p.fail("removing", err)
	}
	return nil
}

// ReadBack returns a second handle of the file being written (DuplicateHandle), for reading it
// with ReadAt (its offset is shared with the writer): the content the build wrote, whatever
// happens to the target's path later. The caller closes it; it stays valid after the commit.
// While it is open the committed file is open, and Windows does not replace an open file:
// another build's commit into the same path waits for it to be closed (up to replaceWait).
func (p *Pending) ReadBack() (*os.File, error) {
	h, err := duplicate(windows.Handle(p.Fd()))
	if err != nil {
		return nil, fmt.Errorf("duplicating the handle of %s: %w", pathtext.Q(p.target.Path), err)
	}
	return newFile(h, p.target.Final), nil
}

// readNames lists the folder. The names only say which files to try: each is then opened
// relative to the held folder handle.
func readNames(dir *os.File) ([]string, error) {
	d, err := os.Open(dir.Name())
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// removeIfStale removes the temporary file name in dir when its writer is gone: it opens the
// file with DELETE access and no sharing, which succeeds only when no process holds it open (a
// living writer holds it from its creation on, unshared), checks that it is a plain file (not
// a link or junction) owned by this user, and deletes it through that handle. Unlike Linux's
// flock there is no moment between creating and locking, so no age is needed.
func removeIfStale(dir *os.File, name string) bool {
	h, err := ntOpenAt(windows.Handle(dir.Fd()), name, windows.DELETE|windows.FILE_READ_ATTRIBUTES|windows.READ_CONTROL, 0,
		0, windows.FILE_OPEN, windows.FILE_NON_DIRECTORY_FILE)
	if err != nil {
		return false // a living writer holds it, or it is gone, or it is not ours to open
	}
	defer windows.CloseHandle(h)
	info, err := handleInfo(h)
	if err != nil || isReparse(info.FileAttributes) || !ownedBySelf(h) {
		return false
	}
	return deleteByHandle(h) == nil
}

// ownedBySelf reports whether the open file h (opened with READ_CONTROL) is this user's, by
// winowner's rule (its owner SID is this user's, or Administrators when elevated).
func ownedBySelf(h windows.Handle) bool {
	owner, err := winowner.OfHandle(h)
	return err == nil && winowner.IsSelf(owner)
}
