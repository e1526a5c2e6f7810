package cgo

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// noSuchFileText is Windows' text of ERROR_FILE_NOT_FOUND as the builders quote it
// (FormatMessageW, then the number).
var noSuchFileText = syscall.ERROR_FILE_NOT_FOUND.Error() + " (error 2)"

// testDir is a fresh folder removed when the test ends, as t.TempDir, but removed file by file
// with os.Remove: under Wine 8, os.RemoveAll of Go 1.26 (which t.TempDir's cleanup calls)
// fails on every file with "Invalid function" (its POSIX-semantics delete through
// NtSetInformationFile is not implemented there), while DeleteFileW works.
func testDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "trtbuild-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var paths []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			if err == nil {
				paths = append(paths, p)
			}
			return nil
		})
		slices.Reverse(paths) // children before their folders
		for _, p := range paths {
			if err := os.Remove(p); err != nil {
				t.Errorf("removing the test folder: %v", err)
			}
		}
	})
	return dir
}
