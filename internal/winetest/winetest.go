// Package winetest holds what Windows tests need to run under Wine as well as on Windows:
// telling Wine apart (to skip, with the gap named, what Wine does not implement) and a
// temporary folder that Wine 8 can remove.
package winetest

import (
	"os"
	"path/filepath"
	"testing"
)

// TempDir is t.TempDir with a cleanup that removes the tree file by file with os.Remove:
// under Wine 8, os.RemoveAll (which t.TempDir's cleanup uses) fails with "Invalid function",
// because Wine does not implement the FILE_DISPOSITION_INFORMATION_EX deletion it asks for.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "trtbuild-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RemoveTree(dir) })
	return dir
}

// RemoveTree removes dir and everything in it with os.Remove, children before their folders:
// os.RemoveAll under Wine 8 (see TempDir). It goes on past a name it cannot remove and returns
// the first error.
func RemoveTree(dir string) error {
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		paths = append(paths, p)
		return nil
	})
	var first error
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Remove(paths[i]); err != nil && first == nil {
			first = err
		}
	}
	return first
}
