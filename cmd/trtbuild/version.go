package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/probe"
)

func newVersionCmd(s *streams) *cobra.Command {
	var device int
	var libDir string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show trtbuild's version, the TensorRT it was built for and the one it finds, and the GPU",
		Long: `Show trtbuild's version, the TensorRT and CUDA headers it was compiled against, and the
TensorRT libraries it finds where a build would look (--tensorrt-lib, TRTBUILD_TENSORRT_LIB,
TENSORRT_ROOT, then the system's library search). It exits 0 also when TensorRT is not found,
and then says where it looked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(s.Out, "trtbuild %s%s\n", builder.Version, commitSuffix())
			fmt.Fprintf(s.Out, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if !probe.Compiled() {
				fmt.Fprintln(s.Out, "tensorrt  not compiled in (build with -tags tensorrt; --backend sim works without it)")
				return nil
			}
			dir, err := builder.ResolveTensorRTLib(libDir)
			if err != nil {
				return err
			}
			// A short-lived child loads TensorRT to describe it, as a build's worker would.
			r, err := probe.Run(device, dir)
			r.WriteText(s.Out, err)
			return nil
		},
	}
	cmd.Flags().IntVar(&device, "device", 0, "CUDA device to describe")
	addTensorRTLibFlag(cmd.Flags(), &libDir)
	return cmd
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
