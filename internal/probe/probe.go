// Package probe answers "which TensorRT and which GPU are here" for the build key, `trtbuild
// version` and a matrix's target check. Only a process that has loaded TensorRT can answer,
// and a build's parent never loads it (its worker does): Run starts this binary's hidden
// Subcommand, a short-lived child that loads TensorRT as a worker would, asks the driver about
// the device (Serve), and writes a Report as one JSON object.
package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// Subcommand is the hidden trtbuild command that runs Serve.
const Subcommand = "__target"

// EnvLocation carries the parent's choice of TensorRT (a trt.Location as JSON) to the probe
// child, which loads from it: the parent decides, the child does not search again.
const EnvLocation = "TRTBUILD_TENSORRT_LOCATION"

// Library is one TensorRT or CUDA library the probe loaded or found.
type Library struct {
	Path     string `json:"path"`
	Resolved string `json:"resolved,omitempty"` // the file Path links to
	// Version: libnvinfer's and libnvonnxparser's are major*10000+minor*100+patch; libcuda's
	// is the driver's CUDA version, major*1000+minor*10.
	Version int `json:"version,omitempty"`
	Build   int `json:"build,omitempty"` // libnvinfer's build number; -1 unknown
}

// Where names the file a library was loaded from.
func (l Library) Where() string {
	if l.Resolved != "" {
		return l.Resolved
	}
	return l.Path
}

// Report is what the probe found. Every problem is a field, so that `trtbuild version` can
// show what it found up to that point; Run fails only when the probe itself could not run.
type Report struct {
	// Compiled are the TensorRT (and CUDA) headers of the shims compiled in, newest first: the
	// vendored headers of TensorRT 11.1 and 10.16.
	Compiled []cgo.Compiled `json:"compiled"`
	// Shim is the major of the shim that builds with the library loaded (0 when none is).
	Shim int `json:"shim,omitempty"`
	// Location is where the parent chose TensorRT (the folder, and what else it saw).
	Location *trt.Location `json:"location,omitempty"`
	// LoadError says why TensorRT could not be loaded ("" when it was).
	LoadError string   `json:"load_error,omitempty"`
	Infer     *Library `json:"infer,omitempty"`
	// Parser is libnvonnxparser; its Version is getNvOnnxParserVersion() (0 where it lacks it).
	Parser *Library `json:"parser,omitempty"`
	// Plugins is the standard plugin library, looked for and not loaded (loading runs its
	// registration); PluginsError says why it was not found.
	Plugins      string `json:"plugins,omitempty"`
	PluginsError string `json:"plugins_error,omitempty"`
	// Driver is the CUDA driver (libcuda.so.1; nvcuda.dll on Windows), through which the GPU
	// is asked about.
	Driver *Library `json:"driver,omitempty"`
	// Device is the CUDA device asked about, of DeviceCount; DeviceName, the compute
	// capability and SMs describe it. GPUError says why the driver could not be asked.
	Device       int    `json:"device"`
	DeviceCount  int    `json:"device_count"`
	DeviceName   string `json:"device_name,omitempty"`
	ComputeMajor int    `json:"compute_major"`
	ComputeMinor int    `json:"compute_minor"`
	SMs          int    `json:"sms,omitempty"`
	GPUError     string `json:"gpu_error,omitempty"`
	// BuilderChecked says that a builder was asked for (--check-builder); BuilderError says why
	// TensorRT made none ("" when it made one, which was deleted again), and BuilderHint what
	// to do about it.
	BuilderChecked bool   `json:"builder_checked,omitempty"`
	BuilderError   string `json:"builder_error,omitempty"`
	BuilderHint    string `json:"builder_hint,omitempty"`
	// Target is the build target for a build key; TargetError says why there is none.
	Target      *buildkey.Target `json:"target,omitempty"`
	TargetError string           `json:"target_error,omitempty"`
}

// Locate is where the TensorRT of this binary is, for the --tensorrt-lib value libDir
// (absolute, or "" for TRTBUILD_TENSORRT_LIB and the search): cgo.LocateTensorRT, the one
// rule that the probe, the worker and `trtbuild version` share.
func Locate(libDir string) trt.Location {
	return cgo.LocateTensorRT(libDir, os.Getenv)
}

// Serve is the child's side: it loads TensorRT from where the parent chose (EnvLocation; if
// unset, located from libDir and getenv by the same rule), describes device, and writes the
// Report to w. When TensorRT cannot be loaded it writes the report and returns why (the child
// exits 1).
func Serve(w io.Writer, device int, libDir string, getenv func(string) string) error {
	return ServeCheck(w, device, libDir, getenv, false)
}

// ServeCheck is Serve that, when checkBuilder is true, also creates and deletes a TensorRT
// builder on device (cgo.CheckBuilder), as a build would: a builder resource library that the
// dynamic loader cannot find fails here. A failed check is a field of the report, not an
// error.
func ServeCheck(w io.Writer, device int, libDir string, getenv func(string) string, checkBuilder bool) error {
	defer cgo.FlushCoverage() // the C++'s line counts under the gcov tag, as the worker's
	r := Report{Compiled: cgo.CompiledShims(), Device: device}
	loc, err := childLocation(libDir, getenv)
	if err != nil {
		return err
	}
	r.Location = &loc
	if err := cgo.LoadTensorRT(loc, false); err != nil {
		// The report says what is known, and the exit status that TensorRT is not here.
		r.LoadError = err.Error()
		if jerr := json.NewEncoder(w).Encode(r); jerr != nil {
			return jerr
		}
		return err
	}
	infer, _ := cgo.InstalledLibrary(trt.LibInfer)
	r.Infer = library(infer)
	if parser, ok := cgo.InstalledLibrary(trt.LibONNXParser); ok {
		r.Parser = library(parser)
	}
	loc.Major = infer.Version / 10000
	r.Shim = loc.Major
	if c, err := loc.Find(trt.LibPlugin, func(c trt.Candidate) error {
		l, err := cgo.OpenLibrary(trt.LibPlugin, c.Path)
		if err == nil {
			l.Close()
		}
		return err
	}); err != nil {
		r.PluginsError = err.Error()
	} else {
		r.Plugins = c.Path
	}
	if err := cgo.LoadCUDADriver(loc); err != nil {
		r.GPUError = err.Error()
	} else {
		driver, _ := cgo.InstalledLibrary(trt.LibCUDADriver)
		r.Driver = library(driver)
		if v, err := cgo.Version(cgo.BackendTensorRT, device); err != nil {
			r.GPUError = err.Error()
		} else {
			r.DeviceCount, r.DeviceName, r.ComputeMajor, r.ComputeMinor, r.SMs = v.DeviceCount, v.DeviceName, v.ComputeMajor, v.ComputeMinor, v.SMs
		}
	}
	if checkBuilder {
		r.BuilderChecked = true
		if r.Driver == nil {
			r.BuilderError = "no GPU to create a builder on: " + r.GPUError
		} else if err := cgo.CheckBuilder(device); err != nil {
			r.BuilderError = err.Error()
			r.BuilderHint = trt.LoadHint(r.BuilderError, loc)
		}
	}
	if t, err := target(device, r.Parser); err != nil {
		r.TargetError = err.Error()
	} else {
		r.Target = &t
	}
	return json.NewEncoder(w).Encode(r)
}

// childLocation reads the parent's choice from EnvLocation, or locates TensorRT by the same
// rule when the variable is unset (the probe started by hand).
func childLocation(libDir string, getenv func(string) string) (trt.Location, error) {
	v := getenv(EnvLocation)
	if v == "" {
		return cgo.LocateTensorRT(libDir, getenv), nil
	}
	var loc trt.Location
	if err := json.Unmarshal([]byte(v), &loc); err != nil {
		return trt.Location{}, fmt.Errorf("reading %s from the parent: %w", EnvLocation, err)
	}
	return loc, nil
}

func library(info cgo.LibraryInfo) *Library {
	return &Library{Path: info.Path, Resolved: info.Resolved, Version: info.Version, Build: info.Build}
}

// Run starts the probe in a child process of this binary and returns its report.
func Run(device int, libDir string) (Report, error) {
	return RunCheck(device, libDir, false)
}

// RunCheck is Run that, with checkBuilder, has the child create and delete a builder too
// (ServeCheck). The child starts with the folders of the TensorRT chosen (Locate) first on its
// LD_LIBRARY_PATH, as a build's worker does (on Windows it adds them to its DLL search itself,
// in cgo.LoadTensorRT), and loads from that choice.
func RunCheck(device int, libDir string, checkBuilder bool) (Report, error) {
	failed := Report{Compiled: cgo.CompiledShims(), Device: device} // what the parent knows itself
	exe, err := os.Executable()
	if err != nil {
		return failed, fmt.Errorf("finding trtbuild's own executable to ask TensorRT for its version: %w", err)
	}
	loc := Locate(libDir)
	failed.Location = &loc
	choice, err := json.Marshal(loc)
	if err != nil {
		return failed, err
	}
	args := []string{Subcommand, "--device", strconv.Itoa(device)}
	if libDir != "" {
		args = append(args, "--tensorrt-lib", libDir)
	}
	if checkBuilder {
		args = append(args, "--check-builder")
	}
	var out, errOut bytes.Buffer
	c := exec.Command(exe, args...)
	c.Env = append(loc.Environ(os.Environ()), EnvLocation+"="+string(choice))
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		var r Report
		if json.Unmarshal(out.Bytes(), &r) == nil && r.LoadError != "" {
			return r, nil // the probe ran: TensorRT is not here
		}
		msg := childMessage(errOut.String(), err)
		return failed, fmt.Errorf("asking TensorRT for its version and the GPU: %s", msg)
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return failed, fmt.Errorf("reading the TensorRT version and GPU from %s: %w", Subcommand, err)
	}
	return r, nil
}

// Target describes the backend and device a build runs on, for its build key. The simulated
// builder needs no asking; for TensorRT the probe runs (Run).
func Target(backend string, device int, libDir string) (buildkey.Target, error) {
	if backend != "tensorrt" {
		return buildkey.Target{Backend: "sim"}, nil
	}
	r, err := Run(device, libDir)
	if err != nil {
		return buildkey.Target{}, err
	}
	switch {
	case r.LoadError != "":
		return buildkey.Target{}, fmt.Errorf("asking TensorRT for its version and the GPU: %s", r.LoadError)
	case r.Target == nil:
		return buildkey.Target{}, fmt.Errorf("asking TensorRT for its version and the GPU: %s", r.TargetError)
	}
	return *r.Target, nil
}

// LoadedTarget is the target of a build on device in this process, which has loaded TensorRT
// and the CUDA driver (a build's worker): what the probe child would report, asked of the same
// libraries, so that the worker can say it in its first event and no probe runs beside it.
func LoadedTarget(device int) (buildkey.Target, error) {
	var parser *Library
	if info, ok := cgo.InstalledLibrary(trt.LibONNXParser); ok {
		parser = library(info)
	}
	return target(device, parser)
}

// target describes TensorRT, its ONNX parser (the loaded parser library, found by the caller)
// and the CUDA device of this machine, a MIG slice's profile apart from its GPU's name. It
// asks the loaded library and the driver (cgo.Version), so it must run in a process that has
// loaded TensorRT: the probe.
func target(device int, parser *Library) (buildkey.Target, error) {
	v, err := cgo.Version(cgo.BackendTensorRT, device)
	if err != nil {
		return buildkey.Target{}, fmt.Errorf("asking TensorRT for its version and the GPU: %w", err)
	}
	loaded := v.Loaded
	if loaded == 0 {
		loaded = v.Compiled
	}
	ver, err := trt.FromInt(loaded)
	if err != nil {
		return buildkey.Target{}, err
	}
	build := "unknown"
	switch {
	case v.LoadedBuild > 0:
		build = fmt.Sprint(v.LoadedBuild) // what the loaded library says
	case v.Loaded == 0 || v.Loaded == v.Compiled:
		if c, ok := cgo.CompiledFor(ver.Major); ok && c.Build > 0 {
			// The library has no getInferLibBuildVersion: the headers' build, for the same version.
			build = fmt.Sprint(c.Build)
		}
	}
	if v.DeviceCount == 0 || v.DeviceName == "" {
		return buildkey.Target{}, fmt.Errorf("no CUDA device %d: an engine is built for one GPU; check nvidia-smi and --device", device)
	}
	if parser == nil {
		return buildkey.Target{}, fmt.Errorf("the build key must name the ONNX parser, but the %s that TensorRT loaded was not found; reinstall TensorRT with its ONNX parser", trt.LibONNXParser)
	}
	// getNvOnnxParserVersion is 0.1.0 in every release (NvOnnxParser.h), so the library's
	// content tells one parser from another beside the same libnvinfer.
	sum, err := buildkey.HashFile(parser.Where())
	if err != nil {
		return buildkey.Target{}, fmt.Errorf("reading the ONNX parser library for the build key: %w", err)
	}
	gpu, mig := buildkey.SplitMIG(v.DeviceName)
	return buildkey.Target{
		Backend:           "tensorrt",
		TensorRT:          fmt.Sprintf("%d.%d.%d.%s", ver.Major, ver.Minor, ver.Patch, build),
		TRTMajor:          ver.Major,
		ONNXParser:        fmt.Sprintf("version %d, %s", parser.Version, sum),
		GPU:               gpu,
		ComputeCapability: fmt.Sprintf("%d.%d", v.ComputeMajor, v.ComputeMinor),
		SMs:               v.SMs,
		MIG:               mig,
	}, nil
}

// childMessage is what a failed probe child said, on one line: its "trtbuild: " line (the last
// one), or its first line and how it ended (a crash's traceback is left out).
func childMessage(stderr string, exit error) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "trtbuild: "); ok && msg != "" {
			return msg
		}
	}
	if first := strings.TrimSpace(lines[0]); first != "" {
		return first + " (" + exit.Error() + ")"
	}
	return exit.Error()
}
