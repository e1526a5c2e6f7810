//go:build windows

package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// discardDevice is the device that discards what is written to it, for messages.
const discardDevice = "NUL"

// nulPath is the null device as trtbuild opens it.
const nulPath = `\\.\NUL`

// inspectSpecial is Inspect's first look at path for the names Windows gives a meaning of its
// own, before the file system is asked:
//
//   - NUL (any case) or \\.\NUL is the null device, Kind CharDevice: -o NUL builds and keeps
//     nothing, as -o /dev/null does on Linux. NUL in a folder ("out\nul") or with an extension
//     ("nul.engine") is a reserved name, refused below.
//   - \\.\pipe\NAME is a named pipe, Kind FIFO, without connecting to it: a stream may be
//     written through it, any other output refuses it.
//   - Any other device-namespace path (\\.\COM1, \\?\GLOBALROOT\...) is refused; \\?\C:\... and
//     \\?\UNC\... are long forms of file paths and are looked up as files.
//   - A path with a component Windows cannot hold as a file (CON, aux.onnx, "name.", a ':' of an
//     alternate data stream, see WindowsNameProblem) is refused.
func inspectSpecial(path string) (Target, bool, error) {
	switch {
	case IsDiscard(path):
		t := Target{Path: path, Final: nulPath, Kind: CharDevice}
		f, err := os.OpenFile(nulPath, os.O_WRONLY, 0)
		if err != nil {
			return t, true, fmt.Errorf("opening the null device NUL: %w", unwrapPath(err))
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return t, true, fmt.Errorf("examining the null device NUL: %w", unwrapPath(err))
		}
		t.Info = st
		return t, true, nil
	case IsPipePath(path):
		return Target{Path: path, Final: strings.ReplaceAll(path, "/", `\`), Kind: FIFO}, true, nil
	case isDevicePath(path):
		return Target{Path: path}, true, fmt.Errorf("%s names a device, not a file; give a file path, or NUL to discard the output", pathtext.Q(path))
	}
	if err := checkNames(path); err != nil {
		return Target{Path: path}, true, err
	}
	return Target{}, false, nil
}

// isDevicePath reports whether path is in the device namespace (\\.\X, \\?\X, \??\X) and not the
// long form of a drive or UNC path.
func isDevicePath(path string) bool {
	p := strings.ReplaceAll(path, "/", `\`)
	var rest string
	switch {
	case strings.HasPrefix(p, `\\.\`), strings.HasPrefix(p, `\\?\`), strings.HasPrefix(p, `\??\`):
		rest = p[4:]
	default:
		return false
	}
	if len(rest) >= 2 && rest[1] == ':' && (rest[0]|0x20) >= 'a' && (rest[0]|0x20) <= 'z' {
		return false
	}
	return !(len(rest) >= 4 && strings.EqualFold(rest[:4], `UNC\`))
}

// checkNames refuses a path with a component Windows cannot hold as a file of its own
// (WindowsNameProblem): a reserved device name such as CON or aux.onnx, a trailing dot or
// space, a ':' (an alternate data stream) or another forbidden character. The volume (C:,
// \\server\share, \\?\C:) is not a component.
func checkNames(path string) error {
	rest := path[len(filepath.VolumeName(path)):]
	for _, part := range strings.FieldsFunc(rest, func(r rune) bool { return r == '\\' || r == '/' }) {
		if why := WindowsNameProblem(part); why != "" {
			if part == rest {
				return fmt.Errorf("%s %s; choose another name", pathtext.Q(part), why)
			}
			return fmt.Errorf("%s in %s %s; choose another name", pathtext.Q(part), pathtext.Q(path), why)
		}
	}
	return nil
}

// statFolder says what the folder dir is, through an open handle, so that the identity it
// holds (volume serial and file index) is the folder's now, not read later by os.SameFile.
func statFolder(dir string) (fs.FileInfo, error) {
	h, err := createFile(dir, windows.FILE_READ_ATTRIBUTES, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	f := newFile(h, dir)
	defer f.Close()
	return f.Stat()
}

// platformRefusal is the refusal of Windows's own rules. The sticky bit has no Windows
// meaning (a folder's ACL says who may replace what, and the rename reports it); what Windows
// adds is the read-only attribute: a rename cannot replace a read-only file, so the build
// would fail only at its end.
func (t Target) platformRefusal() string {
	if t.Kind == Regular && t.Info != nil && t.Info.Mode().Perm()&0o200 == 0 {
		return "is read-only; trtbuild replaces a file only when it may write it: clear its read-only attribute (attrib -r) or choose another path"
	}
	return ""
}

// MkdirOwn makes the folders of rel below base, which must exist: base is the user's and its
// links are followed; the folders of rel are trtbuild's own (a matrix's target and model
// folders). On Windows each is made or opened relative to the one above it, opened as
// itself, not followed (FILE_OPEN_REPARSE_POINT), and a reparse point there (a symbolic link
// or a junction another user planted) or a file is refused instead of leading elsewhere.
func MkdirOwn(base, rel string) error {
	dir, err := openFolder(base, nil)
	if err != nil {
		return err
	}
	h := windows.Handle(dir.Fd())
	at := base
	for _, part := range strings.FieldsFunc(filepath.Clean(rel), func(r rune) bool { return r == '\\' || r == '/' }) {
		if part == "." {
			continue
		}
		if part == ".." {
			dir.Close()
			return fmt.Errorf("%s leaves %s", pathtext.Q(rel), pathtext.Q(base))
		}
		at = filepath.Join(at, part)
		if why := WindowsNameProblem(part); why != "" {
			dir.Close()
			return fmt.Errorf("%s %s; choose another name", pathtext.Q(at), why)
		}
		next, err := ntOpenAt(h, part, windows.FILE_LIST_DIRECTORY|windows.FILE_TRAVERSE|windows.FILE_READ_ATTRIBUTES, windows.FILE_ATTRIBUTE_NORMAL,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, windows.FILE_OPEN_IF, windows.FILE_DIRECTORY_FILE)
		dir.Close()
		if errors.Is(err, windows.ERROR_DIRECTORY) || errors.Is(err, windows.ERROR_FILE_EXISTS) || errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			return fmt.Errorf("%s is not a folder (a file is there); trtbuild makes its own folders only where none or a folder is: remove it", pathtext.Q(at))
		}
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: at, Err: err}
		}
		dir = newFile(next, at)
		h = next
		info, err := handleInfo(h)
		if err != nil {
			dir.Close()
			return &fs.PathError{Op: "mkdir", Path: at, Err: err}
		}
		if isReparse(info.FileAttributes) || info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
			dir.Close()
			return fmt.Errorf("%s is not a folder (a link or junction is there); trtbuild does not follow links in folders it makes itself: remove it", pathtext.Q(at))
		}
	}
	dir.Close()
	return nil
}
