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
			fmt.Fprintf(s.Out, "trtbuild %s%s\n", version, commitSuffix())
			fmt.Fprintf(s.Out, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if !cgo.Available(cgo.BackendTensorRT) {
				fmt.Fprintln(s.Out, "tensorrt  not compiled in (build with -tags tensorrt; --backend sim works without it)")
				return nil
			}
			dir, err := resolveTensorRTLib(libDir)
			if err != nil {
				return err
			}
			c := cgo.CompiledFor()
			compiled := fmt.Sprintf("compiled for %s (CUDA %s)", formatTRTBuild(c.TensorRT, c.Build), formatCUDA(c.CUDA))
			// This short-lived process loads TensorRT to describe it, as a build's worker would.
			search := trt.SearchFromEnv(0, dir, s.Getenv)
			if err := cgo.LoadTensorRT(search, false); err != nil {
				fmt.Fprintf(s.Out, "tensorrt  %s; not found: %v\n", compiled, err)
				return nil
			}
			infer, _ := cgo.InstalledLibrary(trt.LibInfer)
			fmt.Fprintf(s.Out, "tensorrt  %s; found %s at %s\n", compiled, formatTRTBuild(infer.Version, infer.Build), where(infer))
			if parser, ok := cgo.InstalledLibrary(trt.LibONNXParser); ok {
				fmt.Fprintf(s.Out, "parser    %s\n", where(parser))
			}
			// The standard plugins are looked for, not loaded: loading runs their registration.
			search.Major = infer.Version / 10000
			if c, err := search.Find(trt.LibPlugin, func(c trt.Candidate) error {
				l, err := cgo.OpenLibrary(trt.LibPlugin, c.Path)
				if err == nil {
					l.Close()
				}
				return err
			}); err != nil {
				fmt.Fprintf(s.Out, "plugins   not found (builds need --no-builtin-plugins): %v\n", err)
			} else {
				fmt.Fprintf(s.Out, "plugins   %s\n", c.Path)
			}
			if rt, ok := cgo.InstalledLibrary(trt.LibCUDARuntime); ok {
				fmt.Fprintf(s.Out, "cuda      runtime %s at %s\n", formatCUDA(rt.Version), where(rt))
			}
			v, err := cgo.Version(cgo.BackendTensorRT, device)
			switch {
			case err != nil:
				fmt.Fprintf(s.Out, "gpu       unknown: %v\n", err)
			case v.DeviceCount == 0:
				fmt.Fprintln(s.Out, "gpu       none found")
			default:
				fmt.Fprintf(s.Out, "gpu       %d: %s, compute capability %d.%d (%d device(s))\n", device, v.DeviceName, v.ComputeMajor, v.ComputeMinor, v.DeviceCount)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&device, "device", 0, "CUDA device to describe")
	addTensorRTLibFlag(cmd.Flags(), &libDir)
	return cmd
}

// where names the file a library was loaded from.
func where(info cgo.LibraryInfo) string {
	if info.Resolved != "" {
		return info.Resolved
	}
	return info.Path
}

// formatTRTBuild shows a TensorRT version with its build number: 10.16.0.72, or 10.16.0 when
// the build number is unknown (build < 0).
func formatTRTBuild(v, build int) string {
	s := formatTRT(v)
	if build >= 0 && s != "unknown" {
		s += fmt.Sprintf(".%d", build)
	}
	return s
}

// formatCUDA shows a CUDART_VERSION-style number (major*1000+minor*10) as major.minor.
func formatCUDA(v int) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
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
