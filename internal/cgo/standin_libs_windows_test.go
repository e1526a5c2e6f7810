package cgo

import "testing"

// TestStandInLibrariesBuild: see standinLibrariesBuild (under Wine, with the stand-in DLLs
// compiled beforehand by mkdll).
func TestStandInLibrariesBuild(t *testing.T) { standinLibrariesBuild(t) }
