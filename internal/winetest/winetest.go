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
	t.Cleanup(func() {
		var paths []string
		_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
			paths = append(paths, p)
			return nil
		})
		for i := len(paths) - 1; i >= 0; i-- {
			_ = os.Remove(paths[i])
		}
	})
	return dir
}
