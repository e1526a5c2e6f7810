package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/outpath"
)

// errLink is the open's error for a link or junction refused by OpenNoFollow.
var errLink = errors.New("it is a symbolic link or a junction, which trtbuild does not follow here")

// open opens path for reading, sharing it with writers and deleters as a Linux open does,
// with FILE_FLAG_BACKUP_SEMANTICS so that a folder opens and is refused as one, and with
// FILE_FLAG_OPEN_REPARSE_POINT when noFollow is set. It keeps the file only when it is a
// regular file on disk.
func open(path string, noFollow bool) (*os.File, fs.FileInfo, error) {
	if dev := reservedDevice(path); dev != "" {
		return nil, nil, &NotRegularError{Path: path, Kind: outpath.CharDevice}
	}
	flags := uint32(windows.FILE_FLAG_BACKUP_SEMANTICS)
	if noFollow {
		flags |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	name, err := windows.UTF16PtrFromString(outpath.LongPath(path))
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, flags, 0)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	switch ft, _ := windows.GetFileType(h); ft {
	case windows.FILE_TYPE_PIPE:
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Kind: outpath.FIFO}
	case windows.FILE_TYPE_CHAR:
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Kind: outpath.CharDevice}
	case windows.FILE_TYPE_DISK:
	default:
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Kind: outpath.Irregular}
	}
	if noFollow {
		var d windows.ByHandleFileInformation
		if err := windows.GetFileInformationByHandle(h, &d); err != nil {
			f.Close()
			return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		if d.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
			f.Close()
			return nil, nil, &fs.PathError{Op: "open", Path: path, Err: errLink}
		}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Kind: outpath.KindOf(st.Mode())}
	}
	return f, st, nil
}

// reservedDevice returns the device Windows maps path's last component to (CON, aux.onnx), or
// "" (outpath.ReservedDevice is the rule).
func reservedDevice(path string) string {
	p := strings.ReplaceAll(path, "/", `\`)
	if outpath.IsDiscard(p) {
		return "NUL"
	}
	if strings.HasPrefix(p, `\\.\`) || strings.HasPrefix(p, `\\?\`) {
		return ""
	}
	return outpath.ReservedDevice(filepath.Base(p))
}
