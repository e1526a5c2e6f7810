package cgo

/*
#cgo !windows LDFLAGS: -ldl
#cgo windows LDFLAGS: -lntdll
#include <stdlib.h>
#include "trtb_loader.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// LibraryInfo describes one shared library the TensorRT backend loaded (trtb_library_info).
type LibraryInfo struct {
	Lib trt.Library
	// Version is getInferLibVersion() for libnvinfer and getNvOnnxParserVersion() for
	// libnvonnxparser (major*10000+minor*100+patch; 0 where the parser lacks it), and
	// cuDriverGetVersion() for libcuda (major*1000+minor*10: the newest CUDA the driver runs);
	// 0 for the others.
	Version int
	// Build is libnvinfer's getInferLibBuildVersion(), or -1 where the library lacks it.
	Build int
	// Path is what was opened; Resolved the file the dynamic loader mapped for it.
	Path, Resolved string
}

// Library is one opened library, not yet in use: Install it, or Close it.
type Library struct {
	h    *C.trtb_library
	Info LibraryInfo
}

// OpenLibrary opens path as lib and resolves lib's entry points; it checks no version. The
// error is an *Error with CodeUnavailable and the dynamic loader's text when the file does not
// load or lacks an entry point.
//
// A path (not a bare file name) must name a regular file, symbolic links followed: a FIFO
// planted where a library is looked for would block dlopen's open(2) for good, and a folder
// or a device is no library either. Those are refused before dlopen, without blocking.
//
// On Windows path is loaded with LoadLibraryExW (as UTF-16): a path's own folder is searched
// first for the DLLs it imports, then the default folders (trtbuild.exe's, those AddLibraryDirs
// added, System32); a bare name is looked up in the default folders only, never in the working
// folder or PATH. Windows' text of a failure ends with its error number: "nvinfer_10.dll: The
// specified module could not be found (error 126)".
func OpenLibrary(lib trt.Library, path string) (*Library, error) {
	if strings.ContainsAny(path, pathSeparators) {
		var nr *regfile.NotRegularError
		if err := regfile.Check(path); errors.As(err, &nr) {
			return nil, &Error{Code: CodeUnavailable, Message: fmt.Sprintf("%s is %s, not a shared library", path, nr.Kind)}
		}
		// Any other problem (no such file, no permission) is dlopen's to say, in its words.
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var h *C.trtb_library
	var info C.trtb_library_info
	var st C.trtb_status
	if C.trtb_library_open(C.int32_t(lib), cpath, &h, &info, &st) != C.TRTB_OK {
		return nil, statusError(&st)
	}
	return &Library{h: h, Info: libraryInfo(&info)}, nil
}

func libraryInfo(info *C.trtb_library_info) LibraryInfo {
	return LibraryInfo{
		Lib:      trt.Library(info.role),
		Version:  int(info.version),
		Build:    int(info.build),
		Path:     C.GoString(&info.path[0]),
		Resolved: C.GoString(&info.resolved[0]),
	}
}

// Close unloads a library that was not installed. It may be called more than once.
func (l *Library) Close() {
	if l != nil && l.h != nil {
		C.trtb_library_close(l.h)
		l.h = nil
	}
}

func (l *Library) install() error {
	var st C.trtb_status
	if C.trtb_library_install(l.h, &st) != C.TRTB_OK {
		return statusError(&st)
	}
	l.h = nil // the process owns it now
	return nil
}

// InstalledLibrary describes the library installed for lib, if one is.
func InstalledLibrary(lib trt.Library) (LibraryInfo, bool) {
	var info C.trtb_library_info
	if C.trtb_library_installed(C.int32_t(lib), &info) == 0 {
		return LibraryInfo{}, false
	}
	return libraryInfo(&info), true
}

// Compiled describes the headers one TensorRT shim of this binary was compiled against (the
// vendored headers of third_party/tensorrt).
type Compiled struct {
	TensorRT int // NV_TENSORRT_VERSION
	Build    int // NV_TENSORRT_BUILD
	CUDA     int // CUDART_VERSION (major*1000+minor*10) of the CUDA declarations
}

// Major is the TensorRT major the shim drives.
func (c Compiled) Major() int {
	v, err := trt.FromInt(c.TensorRT)
	if err != nil {
		return 0
	}
	return v.Major
}

// CompiledShims describes every TensorRT shim of this binary, newest major first: TensorRT 11
// and 10.
func CompiledShims() []Compiled {
	var info [4]C.trtb_compiled_info
	n := int(C.trtb_tensorrt_compiled(&info[0], C.int32_t(len(info))))
	out := make([]Compiled, 0, n)
	for i := 0; i < n && i < len(info); i++ {
		out = append(out, Compiled{TensorRT: int(info[i].tensorrt_version), Build: int(info[i].tensorrt_build), CUDA: int(info[i].cuda_version)})
	}
	return out
}

// CompiledFor is the shim of TensorRT major, and whether there is one.
func CompiledFor(major int) (Compiled, bool) {
	for _, c := range CompiledShims() {
		if c.Major() == major {
			return c, true
		}
	}
	return Compiled{}, false
}

// CompiledMajors are the TensorRT majors this binary drives, newest first.
func CompiledMajors() []int {
	var out []int
	for _, c := range CompiledShims() {
		out = append(out, c.Major())
	}
	return out
}

// TensorRTLibraries are the libraries of one TensorRT, found and opened, in use once
// installed.
type TensorRTLibraries struct {
	Infer, ONNXParser *Library
	Plugin            *Library // nil when the standard plugins are not wanted
}

func (t *TensorRTLibraries) all() []*Library { return []*Library{t.Infer, t.ONNXParser, t.Plugin} }

// Close unloads every library of t that is not installed.
func (t *TensorRTLibraries) Close() {
	for _, l := range t.all() {
		l.Close()
	}
}

// openFound finds lib at loc and opens it, accepting it only when check (if any) passes.
func openFound(loc trt.Location, lib trt.Library, check func(LibraryInfo) error) (*Library, error) {
	var found *Library
	_, err := loc.Find(lib, func(c trt.Candidate) error {
		l, err := OpenLibrary(lib, c.Path)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(l.Info); err != nil {
				l.Close()
				return err
			}
		}
		found = l
		return nil
	})
	return found, err
}

// LocateTensorRT chooses where a TensorRT of a major this binary drives is (trt.Search.Locate,
// the one place that decides) from the --tensorrt-lib value (flagDir, "" for none) and the
// environment; it only looks at files and loads nothing, so the parent may call it.
func LocateTensorRT(flagDir string, getenv func(string) string) trt.Location {
	shims := CompiledShims()
	return trt.SearchFromEnv(CompiledMajors(), shims[0].CUDA/1000, flagDir, getenv).Locate()
}

// FindTensorRT opens the TensorRT libraries where loc says, the folder the parent chose
// (trt.Search.Locate): libnvinfer first, of loc's major or, when the parent found none, of each
// major this binary drives in turn, accepted only when trt.CheckVersions passes for the shim of
// its major; then libnvonnxparser and the standard plugins (when plugins is true) of that
// major. Nothing is installed: the caller installs them (Install) or closes them. The error
// names every place searched (a *trt.SearchError).
func FindTensorRT(loc trt.Location, plugins bool) (*TensorRTLibraries, error) {
	found := &TensorRTLibraries{}
	steps := []struct {
		lib   trt.Library
		dst   **Library
		check func(LibraryInfo) error
	}{
		{trt.LibInfer, &found.Infer, func(info LibraryInfo) error {
			// The shim of the major the file is named for (libnvinfer.so.10), which must be
			// the one the library reports.
			c, ok := CompiledFor(trt.FileMajor(info.Path))
			if !ok {
				c = CompiledShims()[0]
			}
			return trt.CheckVersions(c.TensorRT, info.Version)
		}},
		{trt.LibONNXParser, &found.ONNXParser, nil},
		{trt.LibPlugin, &found.Plugin, nil},
	}
	for _, st := range steps {
		if st.lib == trt.LibPlugin && !plugins {
			continue
		}
		if st.lib != trt.LibInfer && loc.Major == 0 {
			// The parser and the plugins are of the major of the libnvinfer loaded.
			if v, err := trt.FromInt(found.Infer.Info.Version); err == nil {
				loc.Major = v.Major
			}
		}
		l, err := openFound(loc, st.lib, st.check)
		if err != nil {
			found.Close()
			if st.lib == trt.LibPlugin {
				return nil, fmt.Errorf("%w (or pass --no-builtin-plugins to build without TensorRT's standard plugins)", err)
			}
			return nil, err
		}
		*st.dst = l
	}
	return found, nil
}

// Install makes t the process's TensorRT: the TensorRT backend uses these libraries from now
// on. It may be done once per process (the worker does it before its one build); what is
// installed is never unloaded.
func (t *TensorRTLibraries) Install() error {
	for _, l := range t.all() {
		if l == nil {
			continue
		}
		if err := l.install(); err != nil {
			return err
		}
	}
	return nil
}

// FindCUDADriver opens the CUDA driver, libcuda.so.1, where the dynamic loader finds it (the
// driver's installer registers it), then in WSL's driver folder. The error is a
// *trt.SearchError that says how to install the driver.
func FindCUDADriver(loc trt.Location) (*Library, error) {
	return openFound(loc, trt.LibCUDADriver, nil)
}

// loadOnce is the outcome of a load done once per process.
type loadOnce struct {
	sync.Mutex
	done bool
	err  error
}

func (o *loadOnce) do(load func() error) error {
	o.Lock()
	defer o.Unlock()
	if !o.done {
		o.done, o.err = true, load()
	}
	return o.err
}

var loadedTensorRT, loadedDriver loadOnce

// LoadTensorRT finds and installs the TensorRT libraries at loc, of a major this binary drives,
// once per process; later calls return the first call's outcome. Only the worker and the
// probe call it: the parent process never loads TensorRT.
func LoadTensorRT(loc trt.Location, plugins bool) error {
	return loadedTensorRT.do(func() error {
		if len(loc.Majors) == 0 {
			loc.Majors = CompiledMajors()
		}
		if err := addLibraryDirs(loc); err != nil {
			return err
		}
		found, err := FindTensorRT(loc, plugins)
		if err != nil {
			return err
		}
		if err := found.Install(); err != nil {
			found.Close()
			return err
		}
		return nil
	})
}

// LoadCUDADriver finds and installs the CUDA driver, once per process (later calls return the
// first call's outcome). The TensorRT backend lists, names and selects GPUs through it.
func LoadCUDADriver(loc trt.Location) error {
	return loadedDriver.do(func() error {
		l, err := FindCUDADriver(loc)
		if err != nil {
			return err
		}
		if err := l.install(); err != nil {
			l.Close()
			return err
		}
		return nil
	})
}

// CheckBuilder creates a TensorRT builder on CUDA device device and deletes it again, as a
// build would (trtb_check_builder): TensorRT loads its builder resource library then, by file
// name, so a library path that lacks it fails here, with TensorRT's error. The libraries and
// the driver must be loaded (LoadTensorRT, LoadCUDADriver). It locks the calling goroutine to
// its OS thread for the call: the device's context is made current on that thread.
func CheckBuilder(device int) error {
	dev, err := toInt32("device", device)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st C.trtb_status
	if C.trtb_check_builder(dev, &st) != C.TRTB_OK {
		return statusError(&st)
	}
	return nil
}
