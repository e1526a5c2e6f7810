package main

import (
	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/builder"
)

// newProbeCmd returns the hidden command of the probe (internal/probe): it loads TensorRT as a
// worker would, asks the driver about the device, and prints what it found as one JSON
// object. It runs in a short-lived child, so that a build's parent never loads TensorRT or the
// CUDA driver.
func newProbeCmd() *cobra.Command {
	var device int
	var libDir string
	var checkBuilder bool
	cmd := &cobra.Command{
		Use:    builder.ProbeSubcommand,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return builder.ServeProbe(cmd.OutOrStdout(), device, libDir, checkBuilder)
		},
	}
	cmd.Flags().IntVar(&device, "device", 0, "CUDA device")
	cmd.Flags().StringVar(&libDir, "tensorrt-lib", "", "folder of the TensorRT libraries")
	cmd.Flags().BoolVar(&checkBuilder, "check-builder", false, "also create and delete a builder")
	return cmd
}
