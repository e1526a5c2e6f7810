package probe

import (
	"fmt"
	"io"
	"strings"

	"github.com/trtbuild/trtbuild/internal/cgo"

	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// WriteText writes what `trtbuild version` says of TensorRT and the GPU: the headers the
// backend was compiled for, the libraries found (or why not) and where, what else was seen,
// the device, and the builder check when one was asked for. runErr is Run's error, when the
// probe could not run at all. File names go through pathtext.Q and messages through
// pathtext.Line: each item is one line, whatever a folder's name holds.
func (r Report) WriteText(w io.Writer, runErr error) {
	compiled := CompiledText(r.Compiled)
	switch {
	case runErr != nil:
		fmt.Fprintf(w, "tensorrt  %s; not found: %s\n", compiled, pathtext.Line(runErr.Error()))
		return
	case r.LoadError != "" || r.Infer == nil:
		fmt.Fprintf(w, "tensorrt  %s; not found: %s\n", compiled, pathtext.Line(r.LoadError))
		r.writeSeen(w)
		return
	}
	from := ""
	if r.Location != nil {
		from = " (" + r.Location.From + ")"
	}
	fmt.Fprintf(w, "tensorrt  %s; found %s at %s%s\n", compiled, FormatTensorRT(r.Infer.Version, r.Infer.Build), pathtext.Q(r.Infer.Where()), from)
	if r.Shim != 0 {
		for _, c := range r.Compiled {
			if c.Major() == r.Shim {
				fmt.Fprintf(w, "shim      builds with the TensorRT %d shim (compiled for %s)\n", r.Shim, shortVersion(c.TensorRT))
			}
		}
	}
	if r.Parser != nil {
		if r.Parser.Version > 0 {
			fmt.Fprintf(w, "parser    %s (ONNX parser %d.%d.%d)\n", pathtext.Q(r.Parser.Where()), r.Parser.Version/10000, r.Parser.Version/100%100, r.Parser.Version%100)
		} else {
			fmt.Fprintf(w, "parser    %s\n", pathtext.Q(r.Parser.Where()))
		}
	}
	if r.PluginsError != "" {
		fmt.Fprintf(w, "plugins   not found (builds need --no-builtin-plugins): %s\n", pathtext.Line(r.PluginsError))
	} else {
		fmt.Fprintf(w, "plugins   %s\n", pathtext.Q(r.Plugins))
	}
	if r.Driver != nil {
		fmt.Fprintf(w, "cuda      driver %s at %s (TensorRT links the CUDA runtime in)\n", FormatCUDA(r.Driver.Version), pathtext.Q(r.Driver.Where()))
	}
	r.writeSeen(w)
	switch {
	case r.GPUError != "":
		fmt.Fprintf(w, "gpu       unknown: %s\n", pathtext.Line(r.GPUError))
	case r.DeviceCount == 0:
		fmt.Fprintln(w, "gpu       none found")
	default:
		fmt.Fprintf(w, "gpu       %d: %s, compute capability %d.%d, %d SMs (%d device(s))\n", r.Device, pathtext.Line(r.DeviceName), r.ComputeMajor, r.ComputeMinor, r.SMs, r.DeviceCount)
	}
	if r.BuilderChecked {
		if r.BuilderError == "" {
			fmt.Fprintf(w, "builder   created and deleted on GPU %d\n", r.Device)
		} else {
			fmt.Fprintf(w, "builder   failed: %s\n", pathtext.Line(r.BuilderError))
			if r.BuilderHint != "" {
				fmt.Fprintf(w, "hint      %s\n", pathtext.Line(r.BuilderHint))
			}
		}
	}
}

// writeSeen says what else the search saw: pip's CUDA runtime and lean runtime beside the
// TensorRT chosen (put on the worker's LD_LIBRARY_PATH, in its DLL search on Windows; never
// loaded by trtbuild) and other
// TensorRT installs further down the search order.
func (r Report) writeSeen(w io.Writer) {
	if r.Location == nil {
		return
	}
	if r.Location.CUDARuntime != "" {
		fmt.Fprintf(w, "seen      CUDA runtime %s (on %s, not loaded by trtbuild)\n", pathtext.Q(r.Location.CUDARuntime), trt.WorkerLibrarySearch)
	}
	if r.Location.LeanDir != "" {
		fmt.Fprintf(w, "seen      lean runtime in %s (on %s)\n", pathtext.Q(r.Location.LeanDir), trt.WorkerLibrarySearch)
	}
	for _, o := range r.Location.Others {
		fmt.Fprintf(w, "seen      %s %s (not used: an earlier place in the search order won)\n", o.Where, pathtext.Q(o.Path))
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

// CompiledVersions are the TensorRT versions of the shims cs, oldest first: "10.16", "11.1".
func CompiledVersions(cs []cgo.Compiled) []string {
	var vs []string
	for i := len(cs) - 1; i >= 0; i-- {
		vs = append(vs, shortVersion(cs[i].TensorRT))
	}
	return vs
}

// SimulatedText says what --backend sim plays: the stand-in TensorRT linked into the binary,
// of each major compiled in (the newest by default), with no GPU or library to find.
func SimulatedText(cs []cgo.Compiled) string {
	var newest cgo.Compiled
	for _, c := range cs {
		if c.Major() > newest.Major() {
			newest = c
		}
	}
	if newest.Major() == 0 {
		return ""
	}
	text := fmt.Sprintf("--backend sim plays TensorRT %s with the stand-in linked into this binary", shortVersion(newest.TensorRT))
	for _, c := range cs {
		if c.Major() != newest.Major() {
			text += fmt.Sprintf(" (%s with --sim-tensorrt %d)", shortVersion(c.TensorRT), c.Major())
		}
	}
	return text + "; it needs no GPU"
}

// CompiledText says which TensorRT versions the shims compiled in drive and the CUDA they
// declare: "compiled for TensorRT 10.16 and 11.1 (CUDA 13.0)".
func CompiledText(cs []cgo.Compiled) string {
	cuda := 0
	for _, c := range cs {
		cuda = max(cuda, c.CUDA)
	}
	return fmt.Sprintf("compiled for TensorRT %s (CUDA %s)", strings.Join(CompiledVersions(cs), " and "), FormatCUDA(cuda))
}

// shortVersion is major.minor of an NV_TENSORRT_VERSION integer.
func shortVersion(v int) string {
	ver, err := trt.FromInt(v)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", ver.Major, ver.Minor)
}

// FormatCUDA shows a CUDART_VERSION-style number (major*1000+minor*10) as major.minor.
func FormatCUDA(v int) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// CompiledFor is CompiledVersions of the shims compiled in.
func (r Report) CompiledFor() []string { return CompiledVersions(r.Compiled) }

// Simulated is SimulatedText of the shims compiled in.
func (r Report) Simulated() string { return SimulatedText(r.Compiled) }

// TensorRTVersion is the version of the libnvinfer found (FormatTensorRT), "" when none was.
func (r Report) TensorRTVersion() string {
	if r.Infer == nil {
		return ""
	}
	return FormatTensorRT(r.Infer.Version, r.Infer.Build)
}
