//go:build gcov

package cgo

/*
void __gcov_dump(void);
*/
import "C"

// FlushCoverage writes the line counts of C++ compiled with --coverage (scripts/check/shim-coverage.sh
// builds the tests and trtbuild so, with the gcov tag): a Go program leaves through os.Exit,
// which runs no atexit handler, so the counts are written here: by the processes that run the
// C++ (the worker, worker.ServeFiles; the probe, probe.ServeCheck; this package's tests).
func FlushCoverage() { C.__gcov_dump() }
