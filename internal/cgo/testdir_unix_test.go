//go:build !windows

package cgo

import "testing"

// noSuchFileText is the system's text of a missing file (strerror(ENOENT)), as the builders
// quote it.
const noSuchFileText = "No such file or directory"

// testDir is t.TempDir (see testdir_windows_test.go for why it has a name of its own).
func testDir(t testing.TB) string { return t.TempDir() }
