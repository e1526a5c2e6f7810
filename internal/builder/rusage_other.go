//go:build !unix && !windows

package builder

import (
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/worker"
)

func peakMemory(*worker.Process) int64 { return 0 }

func describeExit(st *os.ProcessState) string { return fmt.Sprintf("exit status %d", st.ExitCode()) }
