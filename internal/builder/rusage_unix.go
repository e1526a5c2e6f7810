//go:build unix

package builder

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/trtbuild/trtbuild/internal/worker"
)

// peakMemory returns the worker's peak resident set size in bytes, once it has exited, or 0
// when unknown.
func peakMemory(p *worker.Process) int64 {
	st := p.State()
	if st == nil {
		return 0
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes on macOS
	}
	return int64(ru.Maxrss) * 1024 // KiB on Linux and the BSDs
}

// describeExit says how the worker ended, naming the signal that killed it.
func describeExit(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d, %s", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}
