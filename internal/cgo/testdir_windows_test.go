package cgo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/winetest"
	"golang.org/x/sys/windows"
)

// noSuchFileText is Windows' text of ERROR_FILE_NOT_FOUND as the builders quote it
// (FormatMessageW, then the number).
var noSuchFileText = syscall.ERROR_FILE_NOT_FOUND.Error() + " (error 2)"

// loadedHere reports whether path is a DLL this process has loaded: libnvinfer_plugin's is
// pinned for the life of the process by design (trtb_library_open).
func loadedHere(path string) bool {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false
	}
	var h windows.Handle
	return windows.GetModuleHandleEx(windows.GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, name, &h) == nil
}

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
		left := map[string]bool{}
		for _, p := range paths {
			err := os.Remove(p)
			switch {
			case err == nil:
			case loadedHere(p):
				t.Logf("left %s: a DLL this process still has loaded (Windows deletes no mapped file)", p)
				left[filepath.Dir(p)] = true
			case left[p]:
				left[filepath.Dir(p)] = true // a folder that holds what is left
			case errors.Is(err, fs.ErrPermission) && winetest.Wine():
				// Wine 8 keeps a DLL whose load failed (an import missing) open until the
				// process ends; Windows closes it.
				t.Logf("left %s: under Wine a DLL that failed to load stays open (%v)", p, err)
				left[filepath.Dir(p)] = true
			default:
				t.Errorf("removing the test folder: %v", err)
			}
		}
	})
	return dir
}
