package probe

import (
	"fmt"
	"io"

	"github.com/trtbuild/trtbuild/internal/trt"
)

// WriteText writes what `trtbuild version` says of TensorRT and the GPU: the headers the
// backend was compiled for, the libraries found (or why not), and the device. runErr is Run's
// error, when the probe could not run at all.
func (r Report) WriteText(w io.Writer, runErr error) {
	compiled := fmt.Sprintf("compiled for %s (CUDA %s)", FormatTensorRT(r.Compiled.TensorRT, r.Compiled.Build), FormatCUDA(r.Compiled.CUDA))
	switch {
	case runErr != nil:
		fmt.Fprintf(w, "tensorrt  %s; not found: %v\n", compiled, runErr)
		return
	case r.LoadError != "" || r.Infer == nil:
		fmt.Fprintf(w, "tensorrt  %s; not found: %s\n", compiled, r.LoadError)
		return
	}
	fmt.Fprintf(w, "tensorrt  %s; found %s at %s\n", compiled, FormatTensorRT(r.Infer.Version, r.Infer.Build), r.Infer.Where())
	if r.Parser != nil {
		fmt.Fprintf(w, "parser    %s\n", r.Parser.Where())
	}
	if r.PluginsError != "" {
		fmt.Fprintf(w, "plugins   not found (builds need --no-builtin-plugins): %s\n", r.PluginsError)
	} else {
		fmt.Fprintf(w, "plugins   %s\n", r.Plugins)
	}
	if r.CUDARuntime != nil {
		fmt.Fprintf(w, "cuda      runtime %s at %s\n", FormatCUDA(r.CUDARuntime.Version), r.CUDARuntime.Where())
	}
	switch {
	case r.GPUError != "":
		fmt.Fprintf(w, "gpu       unknown: %s\n", r.GPUError)
	case r.DeviceCount == 0:
		fmt.Fprintln(w, "gpu       none found")
	default:
		fmt.Fprintf(w, "gpu       %d: %s, compute capability %d.%d (%d device(s))\n", r.Device, r.DeviceName, r.ComputeMajor, r.ComputeMinor, r.DeviceCount)
	}
}

// FormatTensorRT shows a TensorRT version number (major*10000+minor*100+patch) with its build
// number: 10.16.0.72, or 10.16.0 when the build is unknown (build < 0); "unknown" for 0.
func FormatTensorRT(v, build int) string {
	ver, err := trt.FromInt(v)
	if err != nil {
		return "unknown"
	}
	s := ver.String()
	if build >= 0 {
		s += fmt.Sprintf(".%d", build)
	}
	return s
}

// FormatCUDA shows a CUDART_VERSION-style number (major*1000+minor*10) as major.minor.
func FormatCUDA(v int) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
