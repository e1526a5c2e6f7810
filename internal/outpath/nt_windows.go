//go:build windows

package outpath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no *at calls, but the native API has their equivalent: NtCreateFile names a file
// relative to an open folder handle (OBJECT_ATTRIBUTES.RootDirectory), and a rename by handle
// (FILE_RENAME_INFORMATION) names its destination relative to one too. Every file trtbuild
// creates, renames, checks or removes beside an output goes through these, on the folder handle
// Create opened, so a folder renamed or swapped for a junction after the check cannot redirect
// them. Names relative to a handle have no MAX_PATH limit.

// ntOpenAt opens or creates name, one path component, in the open folder dir. disposition is
// windows.FILE_OPEN, FILE_CREATE or FILE_OPEN_IF; options adds to FILE_SYNCHRONOUS_IO_NONALERT
// and FILE_OPEN_REPARSE_POINT, which every call gets: a link or junction at name is opened
// itself, never followed. Errors are syscall.Errno values (ERROR_FILE_EXISTS, ...).
func ntOpenAt(dir windows.Handle, name string, access, attrs, share, disposition, options uint32) (windows.Handle, error) {
	uname, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return 0, err
	}
	oa := windows.OBJECT_ATTRIBUTES{
		Length:        uint32(unsafe.Sizeof(windows.OBJECT_ATTRIBUTES{})),
		RootDirectory: dir,
		ObjectName:    uname,
		Attributes:    windows.OBJ_CASE_INSENSITIVE,
	}
	var iosb windows.IO_STATUS_BLOCK
	var h windows.Handle
	err = windows.NtCreateFile(&h, access|windows.SYNCHRONIZE, &oa, &iosb, nil, attrs, share, disposition,
		options|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_REPARSE_POINT, 0, 0)
	if err != nil {
		var st windows.NTStatus
		if errors.As(err, &st) {
			return 0, st.Errno()
		}
		return 0, err
	}
	return h, nil
}

// fileRenameInformation is FILE_RENAME_INFORMATION(_EX) with room for the name: ReplaceIfExists
// (Flags in the _EX form) at 0, RootDirectory at 8, FileNameLength at 16, FileName at 20 (amd64
// and arm64).
type fileRenameInformation struct {
	flags          uint32
	_              uint32
	rootDirectory  windows.Handle
	fileNameLength uint32
	fileName       [windows.MAX_LONG_PATH]uint16
}

// The FILE_RENAME_INFORMATION_EX class and flags (Windows 10 1709 and newer).
const (
	fileRenameInformationEx   = 65
	fileRenameReplaceIfExists = 0x1
	fileRenamePosixSemantics  = 0x2
	// renameInfoMinSize is sizeof(FILE_RENAME_INFORMATION): a shorter buffer (a one-letter
	// name) is refused with STATUS_INVALID_PARAMETER.
	renameInfoMinSize = 24
)

// renameAt renames the open file h to name in the open folder dir, replacing what has that name
// (a file, or a link itself, never what it points to). h must have been opened with DELETE
// access; it stays open, and no other process can open the file between the write and the
// rename. The rename asks for POSIX semantics first (a target another program holds open with
// FILE_SHARE_DELETE is replaced, as on Linux) and falls back to the classic rename where the
// system or file system lacks them. NtSetInformationFile is called directly: kernel32's
// SetFileInformationByHandle turns a relative name into a full path first, which would drop the
// folder handle.
func renameAt(h, dir windows.Handle, name string) error {
	err := renameAtClass(h, dir, name, fileRenameInformationEx, fileRenameReplaceIfExists|fileRenamePosixSemantics)
	if err == nil {
		return nil
	}
	return renameAtClass(h, dir, name, windows.FileRenameInformation, 1)
}

func renameAtClass(h, dir windows.Handle, name string, class, flags uint32) error {
	u, err := windows.UTF16FromString(name)
	if err != nil {
		return err
	}
	u = u[:len(u)-1]
	info := new(fileRenameInformation)
	if len(u) > len(info.fileName) {
		return windows.ERROR_FILENAME_EXCED_RANGE
	}
	info.flags = flags
	info.rootDirectory = dir
	info.fileNameLength = uint32(2 * len(u))
	copy(info.fileName[:], u)
	size := max(uint32(unsafe.Offsetof(info.fileName))+info.fileNameLength, renameInfoMinSize)
	var iosb windows.IO_STATUS_BLOCK
	if err := windows.NtSetInformationFile(h, &iosb, (*byte)(unsafe.Pointer(info)), size, class); err != nil {
		var st windows.NTStatus
		if errors.As(err, &st) {
			return st.Errno()
		}
		return err
	}
	return nil
}

// deleteByHandle marks the open file h (opened with DELETE access) for deletion when its last
// handle closes.
func deleteByHandle(h windows.Handle) error {
	del := uint32(1)
	return windows.SetFileInformationByHandle(h, windows.FileDispositionInfo, (*byte)(unsafe.Pointer(&del)), uint32(unsafe.Sizeof(del)))
}

// fileBasicInfo is FILE_BASIC_INFO: zero times are left as they are.
type fileBasicInfo struct {
	creationTime, lastAccessTime, lastWriteTime, changeTime int64
	fileAttributes                                          uint32
	_                                                       uint32
}

// setAttributes replaces the attributes of the open file h (hidden, temporary, read-only, ...)
// with attrs.
func setAttributes(h windows.Handle, attrs uint32) error {
	info := fileBasicInfo{fileAttributes: attrs}
	return windows.SetFileInformationByHandle(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
}

// handleInfo is what the file system says of the open file h: its attributes and its identity
// (volume serial and file index), which no rename changes.
func handleInfo(h windows.Handle) (windows.ByHandleFileInformation, error) {
	var d windows.ByHandleFileInformation
	err := windows.GetFileInformationByHandle(h, &d)
	return d, err
}

// sameFileInfo reports whether two handles' information is one file.
func sameFileInfo(a, b windows.ByHandleFileInformation) bool {
	return a.VolumeSerialNumber == b.VolumeSerialNumber && a.FileIndexHigh == b.FileIndexHigh && a.FileIndexLow == b.FileIndexLow
}

// isReparse reports whether attrs are a reparse point's: a symbolic link, a junction, or
// another file system's surrogate.
func isReparse(attrs uint32) bool { return attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 }

// LongPath returns path in the form the Windows API takes without the MAX_PATH (260) limit:
// absolute, cleaned, with the \\?\ prefix (\\?\UNC\ for a \\server\share path). Paths already in
// the device namespace (\\?\, \\.\) are returned as they are. The os package does this itself;
// calls made directly through x/sys/windows need it.
func LongPath(path string) string {
	p := strings.ReplaceAll(path, "/", `\`)
	if strings.HasPrefix(p, `\\?\`) || strings.HasPrefix(p, `\\.\`) || strings.HasPrefix(p, `\??\`) {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if strings.HasPrefix(abs, `\\`) {
		return `\\?\UNC\` + abs[2:]
	}
	return `\\?\` + abs
}

// createFile is windows.CreateFile of path in its long form.
func createFile(path string, access, share, disposition, flags uint32) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(LongPath(path))
	if err != nil {
		return 0, err
	}
	return windows.CreateFile(p, access, share, nil, disposition, flags, 0)
}

// newFile wraps the handle h as an *os.File named name, for messages.
func newFile(h windows.Handle, name string) *os.File { return os.NewFile(uintptr(h), name) }
