//go:build !unix

package builder

import (
	"fmt"
	"os"
)

func peakRSS(*os.ProcessState) int64 { return 0 }

func describeExit(st *os.ProcessState) string { return fmt.Sprintf("exit status %d", st.ExitCode()) }
