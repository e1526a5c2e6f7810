//go:build gcov

package cgo

/*
void __gcov_dump(void);
*/
import "C"

// FlushCoverage writes the line counts of C++ compiled with --coverage (scripts/shim-coverage.sh
// builds the tests and trtbuild so, with the gcov tag): a Go program leaves through os.Exit,
// which runs no atexit handler, so the counts are written here.
func FlushCoverage() { C.__gcov_dump() }
