package onnx

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/windows"
)

// The flags of GetFinalPathNameByHandle (fileapi.h): the normalized name, with a drive letter.
const (
	fileNameNormalized = 0x0
	volumeNameDOS      = 0x0
)

// openedPath is the path of the file f, opened as path, with every link and junction
// resolved, as Windows names the open handle (GetFinalPathNameByHandle).
func openedPath(f *os.File, path string) (string, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(f.Fd()), &buf[0], uint32(len(buf)), fileNameNormalized|volumeNameDOS)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", path, err)
	}
	if int(n) > len(buf) {
		return "", fmt.Errorf("resolving %s: its path is longer than %d characters", path, len(buf))
	}
	real := windows.UTF16ToString(buf[:n])
	// \\?\C:\x is C:\x; \\?\UNC\server\share\x is \\server\share\x.
	if rest, ok := strings.CutPrefix(real, `\\?\UNC\`); ok {
		return `\\` + rest, nil
	}
	return strings.TrimPrefix(real, `\\?\`), nil
}
