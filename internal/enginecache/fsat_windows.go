package enginecache

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winowner"
)

// The Windows rules, as fsat.go states them for both systems:
//   - Every name is opened with NtCreateFile relative to a held folder handle (the
//     OBJECT_ATTRIBUTES root directory), one component at a time: no '\', '/', ':' (an
//     alternate data stream), "." or "..".
//   - FILE_OPEN_REPARSE_POINT opens a symbolic link, junction or any other reparse point
//     itself, never its target; one found where the cache expects a file or folder is refused
//     as a link, and removed (the link, not its target) when the cache removes that name.
//   - Folders are held without FILE_SHARE_DELETE, so while the cache holds its folder,
//     entries/ and tmp/ (and an entry while it reads it), none of them can be renamed,
//     removed or swapped for a junction by anyone.
//   - A file is regular when it is on a disk (GetFileType FILE_TYPE_DISK) and is neither a
//     folder nor a reparse point.

// attr is what the handle says about a file: its attributes, volume and index, size and
// times (GetFileInformationByHandle), its kind (GetFileType), and its owner and ACL
// (GetSecurityInfo), which trust.go checks.
type attr struct {
	info  windows.ByHandleFileInformation
	ftype uint32
	sd    *windows.SECURITY_DESCRIPTOR // owner and DACL; nil when they could not be read
	owner *windows.SID
}

func (a *attr) reparse() bool { return a.info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 }
func (a *attr) dir() bool     { return a.info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 }
func (a *attr) regular() bool { return a.ftype == windows.FILE_TYPE_DISK && !a.dir() && !a.reparse() }
func (a *attr) size() int64   { return int64(a.info.FileSizeHigh)<<32 | int64(a.info.FileSizeLow) }
func (a *attr) mtime() time.Time {
	return time.Unix(0, a.info.LastWriteTime.Nanoseconds()).Truncate(time.Second)
}
func (a *attr) id() fileID {
	return fileID{dev: uint64(a.info.VolumeSerialNumber), ino: uint64(a.info.FileIndexHigh)<<32 | uint64(a.info.FileIndexLow)}
}
func (a *attr) mine() bool { return winowner.IsSelf(a.owner) }

// kind is the FileMode type a stands for, for messages.
func (a *attr) kind() fs.FileMode {
	switch {
	case a.reparse():
		return fs.ModeSymlink
	case a.dir():
		return fs.ModeDir
	case a.ftype == windows.FILE_TYPE_PIPE:
		return fs.ModeNamedPipe
	case a.ftype == windows.FILE_TYPE_CHAR:
		return fs.ModeDevice | fs.ModeCharDevice
	case a.ftype != windows.FILE_TYPE_DISK:
		return fs.ModeIrregular
	}
	return 0
}

func handleOf(f *os.File) windows.Handle { return windows.Handle(f.Fd()) }

// statHandle reads what attr holds from the open handle h (opened with READ_CONTROL and
// FILE_READ_ATTRIBUTES).
func statHandle(h windows.Handle) (*attr, error) {
	var a attr
	if err := windows.GetFileInformationByHandle(h, &a.info); err != nil {
		return nil, err
	}
	t, err := windows.GetFileType(h)
	if err != nil {
		return nil, err
	}
	a.ftype = t
	if sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION); err == nil {
		a.sd = sd
		a.owner, _, _ = sd.Owner()
	}
	return &a, nil
}

// The share mode of every open: others may read and write, never delete or rename.
const shareMode = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE

// checkName refuses anything but one plain component.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `\/:`) {
		return fmt.Errorf("%q is not a name in the folder: %w", name, windows.ERROR_INVALID_NAME)
	}
	return nil
}

// ntOpen opens name relative to the folder parent ("" opens parent itself again), never
// following a reparse point. access gets SYNCHRONIZE, FILE_READ_ATTRIBUTES and READ_CONTROL
// added; sd, when not nil, is the security descriptor of a file or folder it creates.
func ntOpen(parent windows.Handle, name string, access, disposition, options uint32, sd *windows.SECURITY_DESCRIPTOR) (windows.Handle, error) {
	if name != "" {
		if err := checkName(name); err != nil {
			return windows.InvalidHandle, err
		}
	}
	uname, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return windows.InvalidHandle, err
	}
	oa := windows.OBJECT_ATTRIBUTES{RootDirectory: parent, ObjectName: uname, Attributes: windows.OBJ_CASE_INSENSITIVE, SecurityDescriptor: sd}
	oa.Length = uint32(unsafe.Sizeof(oa))
	var h windows.Handle
	var iosb windows.IO_STATUS_BLOCK
	err = windows.NtCreateFile(&h, access|windows.SYNCHRONIZE|windows.FILE_READ_ATTRIBUTES|windows.READ_CONTROL, &oa, &iosb, nil,
		windows.FILE_ATTRIBUTE_NORMAL, shareMode, disposition,
		options|windows.FILE_OPEN_REPARSE_POINT|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_FOR_BACKUP_INTENT, 0, 0)
	if err != nil {
		return windows.InvalidHandle, ntError(err)
	}
	return h, nil
}

// ntError turns an NTSTATUS into the Win32 error internal/fserr classifies.
func ntError(err error) error {
	s, ok := err.(windows.NTStatus)
	if !ok {
		return err
	}
	switch s {
	case windows.STATUS_NOT_A_DIRECTORY:
		return windows.ERROR_DIRECTORY
	case windows.STATUS_FILE_IS_A_DIRECTORY:
		return syscall.EISDIR
	case windows.STATUS_OBJECT_NAME_COLLISION:
		return windows.ERROR_ALREADY_EXISTS
	case windows.STATUS_REPARSE_POINT_ENCOUNTERED:
		return syscall.ELOOP
	}
	return s.Errno()
}

// openCacheDir opens the cache folder, following links in dir (the user's path), and holds it
// without FILE_SHARE_DELETE.
func openCacheDir(dir string) (*os.File, *attr, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return nil, nil, err
	}
	h, err := windows.CreateFile(p, windows.FILE_LIST_DIRECTORY|windows.FILE_TRAVERSE|windows.FILE_READ_ATTRIBUTES|windows.READ_CONTROL|windows.SYNCHRONIZE,
		shareMode, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	st, err := statHandle(h)
	if err == nil && !st.dir() {
		err = &os.PathError{Op: "open", Path: dir, Err: windows.ERROR_DIRECTORY}
	}
	if err != nil {
		windows.CloseHandle(h)
		return nil, nil, err
	}
	return os.NewFile(uintptr(h), dir), st, nil
}

// openDir opens a folder with options and disposition, refusing a reparse point as a link.
func openDir(parent *os.File, name string, disposition uint32, sd *windows.SECURITY_DESCRIPTOR) (*os.File, *attr, error) {
	h, err := ntOpen(handleOf(parent), name, windows.FILE_LIST_DIRECTORY|windows.FILE_TRAVERSE, disposition, windows.FILE_DIRECTORY_FILE, sd)
	if err != nil {
		return nil, nil, err
	}
	st, err := statHandle(h)
	if err == nil && st.reparse() {
		err = syscall.ELOOP
	}
	if err != nil {
		windows.CloseHandle(h)
		return nil, nil, err
	}
	return os.NewFile(uintptr(h), name), st, nil
}

// openDirAt opens the folder name in parent, refusing a reparse point or anything but a folder.
func openDirAt(parent *os.File, name string) (*os.File, *attr, error) {
	return openDir(parent, name, windows.FILE_OPEN, nil)
}

// openFileAt opens name in parent for reading when it is a regular file.
func openFileAt(parent *os.File, name string) (*os.File, *attr, error) {
	h, err := ntOpen(handleOf(parent), name, windows.FILE_GENERIC_READ, windows.FILE_OPEN, windows.FILE_NON_DIRECTORY_FILE, nil)
	if err == syscall.EISDIR {
		return nil, nil, errNotRegular
	}
	if err != nil {
		return nil, nil, err
	}
	st, err := statHandle(h)
	if err == nil && !st.regular() {
		err = errNotRegular
	}
	if err != nil {
		windows.CloseHandle(h)
		return nil, nil, err
	}
	return os.NewFile(uintptr(h), name), st, nil
}

// mkdirAt makes the folder name in parent if it is missing, and opens it, in one call
// (FILE_OPEN_IF). perm is Unix's: on Windows the folder inherits its parent's ACL.
func mkdirAt(parent *os.File, name string, _ uint32) (*os.File, *attr, error) {
	return openDir(parent, name, windows.FILE_OPEN_IF, nil)
}

// mkdirTempAt makes the new folder name in parent for an entry being written. Its ACL is its
// own (protected: nothing inherited from the cache folder): full control for this user,
// SYSTEM and Administrators, and, when perm lets others read (as a 0644 engine does), read
// for BUILTIN\Users. The entry's files inherit it.
func mkdirTempAt(parent *os.File, name string, perm uint32) error {
	self, err := winowner.Self()
	if err != nil {
		return err
	}
	sddl := fmt.Sprintf("D:P(A;OICI;FA;;;%s)(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)", self)
	if perm&0o004 != 0 {
		sddl += "(A;OICI;FR;;;BU)"
	}
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return fmt.Errorf("making the entry's ACL: %w", err)
	}
	d, _, err := openDir(parent, name, windows.FILE_CREATE, sd)
	if err != nil {
		return err
	}
	return d.Close()
}

// createAt creates the new file name in parent for writing (FILE_CREATE: never an existing
// file, never through a reparse point).
func createAt(parent *os.File, name string) (*os.File, error) {
	h, err := ntOpen(handleOf(parent), name, windows.FILE_GENERIC_WRITE|windows.FILE_GENERIC_READ, windows.FILE_CREATE, windows.FILE_NON_DIRECTORY_FILE, nil)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(h), name), nil
}

// statAt says what name in parent is, not following a reparse point.
func statAt(parent *os.File, name string) (*attr, error) {
	h, err := ntOpen(handleOf(parent), name, 0, windows.FILE_OPEN, 0, nil)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	return statHandle(h)
}

// statFile says what the open file f is.
func statFile(f *os.File) (*attr, error) { return statHandle(handleOf(f)) }

// touchAt sets the last-access and last-write times of name in parent to t.
func touchAt(parent *os.File, name string, t time.Time) error {
	h, err := ntOpen(handleOf(parent), name, windows.FILE_WRITE_ATTRIBUTES, windows.FILE_OPEN, 0, nil)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	ft := windows.NsecToFiletime(t.UnixNano())
	return windows.SetFileTime(h, nil, &ft, &ft)
}

// renameAt renames from in fromDir to to in toDir, both relative to their folder handles
// (NtSetInformationFile FileRenameInformation with a root directory), never replacing what
// is there: a taken name fails with ERROR_ALREADY_EXISTS (fserr.Exists), and an entry that
// is open (being read) fails with ERROR_SHARING_VIOLATION.
func renameAt(fromDir *os.File, from string, toDir *os.File, to string) error {
	if err := checkName(to); err != nil {
		return err
	}
	h, err := ntOpen(handleOf(fromDir), from, windows.DELETE, windows.FILE_OPEN, 0, nil)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	name, err := windows.UTF16FromString(to)
	if err != nil {
		return err
	}
	name = name[:len(name)-1]
	// FILE_RENAME_INFORMATION: BOOLEAN ReplaceIfExists (padded), HANDLE RootDirectory,
	// ULONG FileNameLength, WCHAR FileName[].
	type renameInfo struct {
		ReplaceIfExists uint32
		_               uint32
		RootDirectory   windows.Handle
		FileNameLength  uint32
	}
	head := unsafe.Offsetof(renameInfo{}.FileNameLength) + 4 // FileName follows, unpadded
	buf := make([]byte, head+uintptr(len(name))*2+2)
	ri := (*renameInfo)(unsafe.Pointer(&buf[0]))
	ri.RootDirectory = handleOf(toDir)
	ri.FileNameLength = uint32(len(name) * 2)
	copy(unsafe.Slice((*uint16)(unsafe.Pointer(&buf[head])), len(name)), name)
	var iosb windows.IO_STATUS_BLOCK
	if err := windows.NtSetInformationFile(h, &iosb, &buf[0], uint32(len(buf)), windows.FileRenameInformation); err != nil {
		return ntError(err)
	}
	return nil
}

// setDirPerm does nothing on Windows: mkdirTempAt gave the entry its ACL.
func setDirPerm(*os.File, uint32) error { return nil }

// syncDir does nothing on Windows: a folder cannot be flushed (FlushFileBuffers needs write
// access to it), and NTFS journals the rename that adds an entry; the files were flushed.
func syncDir(*os.File) error { return nil }

// reopenDir opens the folder d again (an empty name relative to it), with an enumeration of
// its own.
func reopenDir(d *os.File) (*os.File, error) {
	f, _, err := openDirAt(d, "")
	return f, err
}

// removeTreeAt removes name in parent: a file or reparse point (the link itself) by marking
// it for deletion, a folder with what is in it (depth bounds what a planted tree could make
// it do).
func removeTreeAt(parent *os.File, name string, depth int) error {
	st, err := statAt(parent, name)
	if err != nil {
		if isMissing(err) {
			return nil
		}
		return err
	}
	if st.dir() && !st.reparse() {
		if depth == 0 {
			return windows.ERROR_DIR_NOT_EMPTY
		}
		d, _, err := openDirAt(parent, name)
		if err != nil {
			return err
		}
		names, err := listNames(d)
		if err == nil {
			for _, n := range names {
				if err = removeTreeAt(d, n, depth-1); err != nil {
					break
				}
			}
		}
		d.Close()
		if err != nil {
			return err
		}
	}
	h, err := ntOpen(handleOf(parent), name, windows.DELETE, windows.FILE_OPEN, 0, nil)
	if err != nil {
		if isMissing(err) {
			return nil
		}
		return err
	}
	defer windows.CloseHandle(h)
	del := uint32(1) // FILE_DISPOSITION_INFO.DeleteFile
	return windows.SetFileInformationByHandle(h, windows.FileDispositionInfo, (*byte)(unsafe.Pointer(&del)), uint32(unsafe.Sizeof(del)))
}

func isMissing(err error) bool {
	return err == windows.ERROR_FILE_NOT_FOUND || err == windows.ERROR_PATH_NOT_FOUND
}
