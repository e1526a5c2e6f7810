package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/probe"
)

func newVersionCmd(s *streams) *cobra.Command {
	var device int
	var libDir string
	var checkBuilder bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show trtbuild's version, the TensorRT it was built for and the one it finds, and the GPU",
		Long: `Show trtbuild's version, the TensorRT and CUDA headers it was compiled against, and the
TensorRT libraries it finds where a build would look (--tensorrt-lib, TRTBUILD_TENSORRT_LIB,
TENSORRT_ROOT, pip's tensorrt_libs in VIRTUAL_ENV, CONDA_PREFIX, the user's and the system's
site-packages, then the system's library search), what else it saw, the CUDA driver and the
GPU. It exits 0 also when TensorRT is not found, and then says where it looked.

--check-builder also creates (and deletes) a TensorRT builder on --device, as a build would:
TensorRT loads its builder resource library then, by file name, so a library path that lacks
it is found here, before a build. A failed check prints what TensorRT said and a hint naming
the missing library and the folder to add, and exits 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(s.Out, "trtbuild %s%s\n", builder.Version, commitSuffix())
			fmt.Fprintf(s.Out, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if !probe.Compiled() {
				fmt.Fprintln(s.Out, "tensorrt  not compiled in (build with -tags tensorrt; --backend sim works without it)")
				if checkBuilder {
					// No builder can be made: a check that gates a GPU job must not pass.
					return exitcode.Wrap(exitcode.Failed, fmt.Errorf("--check-builder: %w", probe.ErrNotCompiled))
				}
				return nil
			}
			dir, err := builder.ResolveTensorRTLib(libDir)
			if err != nil {
				return err
			}
			// A short-lived child loads TensorRT to describe it, as a build's worker would.
			r, err := probe.RunCheck(device, dir, checkBuilder)
			r.WriteText(s.Out, err)
			if !checkBuilder {
				return nil
			}
			switch {
			case err != nil:
				return exitcode.Wrap(exitcode.Failed, fmt.Errorf("--check-builder: %w", err))
			case r.LoadError != "":
				return exitcode.Wrap(exitcode.Failed, fmt.Errorf("--check-builder: cannot use TensorRT: %s", r.LoadError))
			case r.BuilderError != "":
				msg := r.BuilderError
				if r.BuilderHint != "" {
					msg += "; " + r.BuilderHint
				}
				return exitcode.Wrap(exitcode.Failed, fmt.Errorf("--check-builder: %s", msg))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&device, "device", 0, "CUDA device to describe")
	cmd.Flags().BoolVar(&checkBuilder, "check-builder", false, "also create and delete a TensorRT builder on --device, as a build would (exit 1 if TensorRT makes none)")
	buildflags.AddTensorRTLib(cmd.Flags(), &libDir)
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
