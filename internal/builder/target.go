package builder

import (
	"io"
	"os"

	"github.com/trtbuild/trtbuild/internal/probe"
)

// TargetReport is what the probe process saw where a build would look: the TensorRT libraries
// found (or why none were), the shims compiled in, the CUDA driver, the GPU and, when asked,
// whether TensorRT made a builder (internal/probe). Front ends read it through this package.
type TargetReport = probe.Report

// DescribeTarget runs the probe in a short-lived child process, as a build's worker would load
// TensorRT, for device and the TensorRT folder libDir ("" for the search); checkBuilder also
// creates and deletes a builder. The error says why the child could not report.
func DescribeTarget(device int, libDir string, checkBuilder bool) (TargetReport, error) {
	return probe.RunCheck(device, libDir, checkBuilder)
}

// ProbeSubcommand is the hidden trtbuild command the probe's child process runs.
const ProbeSubcommand = probe.Subcommand

// ServeProbe is the probe process's side: it loads TensorRT as a worker would, asks the driver
// about device (and makes a builder with checkBuilder), and writes what it found to w as one
// JSON object.
func ServeProbe(w io.Writer, device int, libDir string, checkBuilder bool) error {
	return probe.ServeCheck(w, device, libDir, os.Getenv, checkBuilder)
}
