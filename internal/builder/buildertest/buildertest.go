// Package buildertest lets a package's test binary be the processes a build starts, as the
// trtbuild binary is: the build worker (builder.WorkerSubcommand) and the TensorRT probe
// (probe.Subcommand). A package whose tests run real builds calls Main from its TestMain.
package buildertest

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/probe"
)

// Main runs the worker or the probe when the test binary was started as one of them, and
// the tests otherwise; it does not return.
func Main(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case builder.WorkerSubcommand:
			if err := builder.ServeWorker(); err != nil {
				fmt.Fprintln(os.Stderr, "trtbuild: build worker:", err)
				os.Exit(1)
			}
			os.Exit(0)
		case probe.Subcommand:
			fs := flag.NewFlagSet(probe.Subcommand, flag.ExitOnError)
			device := fs.Int("device", 0, "")
			lib := fs.String("tensorrt-lib", "", "")
			_ = fs.Parse(os.Args[2:])
			if err := probe.Serve(os.Stdout, *device, *lib, os.Getenv); err != nil {
				fmt.Fprintln(os.Stderr, "trtbuild:", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}
