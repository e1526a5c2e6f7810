package builder

import (
	"os"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// peakMemory returns the most memory the worker committed at one time, once it has exited (its
// job's peak: Windows keeps no peak resident set of an exited process), or 0 when unknown.
func peakMemory(p *worker.Process) int64 { return p.PeakCommit() }

// describeExit says how the worker ended, naming the NTSTATUS of a crash
// (exitcode.DescribeWindowsExit): "exit status 0xC0000005, access violation
// (STATUS_ACCESS_VIOLATION)".
func describeExit(st *os.ProcessState) string {
	return exitcode.DescribeWindowsExit(uint32(st.ExitCode()))
}
