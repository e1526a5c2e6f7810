package worker

import (
	"fmt"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// loadTensorRT loads the TensorRT libraries into this worker process before a TensorRT build:
// only the worker ever loads them, so a missing or broken TensorRT cannot take the parent (and
// the terminal it drives) down. It returns one line per library loaded, for the log, or an
// error that is the user's to fix: it names every place searched and how to point trtbuild at
// TensorRT.
func loadTensorRT(req Request, getenv func(string) string) ([]string, error) {
	loc := tensorRTLocation(req, getenv)
	if err := cgo.LoadTensorRT(loc, !req.NoBuiltinPlugins); err != nil {
		return nil, fmt.Errorf("cannot use TensorRT: %w (or preview the build without a GPU with --backend sim)", err)
	}
	if err := cgo.LoadCUDADriver(loc); err != nil {
		return nil, fmt.Errorf("cannot use the GPU: %w", err)
	}
	lines := []string{"TensorRT from " + loc.Describe()}
	for _, lib := range []trt.Library{trt.LibInfer, trt.LibONNXParser, trt.LibPlugin, trt.LibCUDADriver} {
		if info, ok := cgo.InstalledLibrary(lib); ok {
			lines = append(lines, "loaded "+describeLibrary(info))
		}
	}
	return lines, nil
}

// tensorRTLocation is where the parent chose TensorRT (Request.TensorRT), which the worker
// loads from and nowhere else; a request without one (a worker started by hand) is located
// here by the same rule (cgo.LocateTensorRT).
func tensorRTLocation(req Request, getenv func(string) string) trt.Location {
	if req.TensorRT != nil {
		return *req.TensorRT
	}
	return cgo.LocateTensorRT(req.TensorRTLib, getenv)
}

// describeLibrary says which library was loaded from where, with its version where it has one.
func describeLibrary(info cgo.LibraryInfo) string {
	where := info.Resolved
	if where == "" {
		where = info.Path
	}
	switch info.Lib {
	case trt.LibInfer:
		v := "unknown version"
		if ver, err := trt.FromInt(info.Version); err == nil {
			v = "TensorRT " + ver.String()
			if info.Build >= 0 {
				v += fmt.Sprintf(" (build %d)", info.Build)
			}
		}
		return fmt.Sprintf("%s %s from %s", info.Lib, v, where)
	case trt.LibONNXParser:
		if info.Version > 0 {
			return fmt.Sprintf("%s (ONNX parser %d.%d.%d) from %s", info.Lib, info.Version/10000, info.Version/100%100, info.Version%100, where)
		}
	case trt.LibCUDADriver:
		return fmt.Sprintf("%s (CUDA driver %d.%d) from %s", info.Lib, info.Version/1000, info.Version%1000/10, where)
	}
	return fmt.Sprintf("%s from %s", info.Lib, where)
}

// describeTarget names the loaded TensorRT (with its build number) and the CUDA device for the
// build's result, so that reports say what built the engine. Either is "" when not known.
func describeTarget(device int) (tensorRT, gpu string) {
	if info, ok := cgo.InstalledLibrary(trt.LibInfer); ok {
		if ver, err := trt.FromInt(info.Version); err == nil {
			tensorRT = ver.String()
			if info.Build > 0 {
				tensorRT += fmt.Sprintf(".%d", info.Build)
			}
		}
	}
	if v, err := cgo.Version(cgo.BackendTensorRT, device); err == nil && v.DeviceName != "" {
		gpu = fmt.Sprintf("%s, compute capability %d.%d", v.DeviceName, v.ComputeMajor, v.ComputeMinor)
	}
	return tensorRT, gpu
}

// flagInUse tells, for each build option that internal/trt's table of older minors says needs
// a newer minor than the oldest the backend drives (trt.FlagsNeedingMinors), whether a request
// uses it.
var flagInUse = map[string]func(Request) bool{
	"--set-build-route": func(r Request) bool { return r.BuildRoute != "" },
}

// checkLoadedMinor refuses, in one line, a request whose options need a newer TensorRT minor
// than the library loaded (trt.CheckFlags): the backend compiled against newer headers would
// call what that library lacks. An option the table names that flagInUse does not know counts
// as used.
func checkLoadedMinor(req Request) error {
	info, ok := cgo.InstalledLibrary(trt.LibInfer)
	if !ok {
		return nil
	}
	shim, ok := cgo.CompiledFor(info.Version / 10000)
	if !ok {
		return nil // the loader refused it already
	}
	return trt.CheckFlags(shim.TensorRT, info.Version, func(flag string) bool {
		used, known := flagInUse[flag]
		return !known || used(req)
	})
}
