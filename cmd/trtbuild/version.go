package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/trt"
)

func newVersionCmd(s *streams) *cobra.Command {
	var device int
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show trtbuild's version, the TensorRT it was built with and loads, and the GPU",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(s.Out, "trtbuild %s%s\n", version, commitSuffix())
			fmt.Fprintf(s.Out, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if !cgo.Available(cgo.BackendTensorRT) {
				fmt.Fprintln(s.Out, "tensorrt  not compiled in (build with -tags tensorrt; --backend sim works without it)")
				return nil
			}
			v, err := cgo.Version(cgo.BackendTensorRT, device)
			if err != nil {
				fmt.Fprintf(s.Out, "tensorrt  compiled %s, loaded: %v\n", formatTRT(v.Compiled), err)
				return err
			}
			fmt.Fprintf(s.Out, "tensorrt  compiled %s, loaded %s (ONNX parser %d)\n", formatTRT(v.Compiled), formatTRT(v.Loaded), v.ONNXParser)
			if v.DeviceCount == 0 {
				fmt.Fprintln(s.Out, "gpu       none found")
			} else {
				fmt.Fprintf(s.Out, "gpu       %d: %s, compute capability %d.%d (%d device(s))\n", device, v.DeviceName, v.ComputeMajor, v.ComputeMinor, v.DeviceCount)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&device, "device", 0, "CUDA device to describe")
	return cmd
}

// formatTRT shows a TensorRT version number (major*10000+minor*100+patch) as text.
func formatTRT(v int) string {
	ver, err := trt.FromInt(v)
	if err != nil {
		return "unknown"
	}
	return ver.String()
}

func commitSuffix() string {
	c := commit
	if c == "" {
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	if len(c) > 12 {
		c = c[:12]
	}
	if c == "" {
		return ""
	}
	return " (" + c + ")"
}
