//go:build !windows

package cgo

import "testing"

// TestStandInLibrariesBuild: see standinLibrariesBuild.
func TestStandInLibrariesBuild(t *testing.T) { standinLibrariesBuild(t) }
