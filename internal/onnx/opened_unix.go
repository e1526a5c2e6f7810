//go:build !windows

package onnx

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// openedPath is the path of the file f, opened as path, with every link resolved: what the
// kernel says f is (/proc/self/fd), or where /proc is not mounted, path's links resolved by
// name (OpenSource then checks that the name is the file opened).
func openedPath(f *os.File, path string) (string, error) {
	if real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil && filepath.IsAbs(real) && !strings.HasSuffix(real, " (deleted)") {
		return real, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}
