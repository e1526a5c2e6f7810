package cgo

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "trtb_loader.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/trtbuild/trtbuild/internal/trt"
)

// LibraryInfo describes one shared library the TensorRT backend loaded (trtb_library_info).
type LibraryInfo struct {
	Lib trt.Library
	// Version is getInferLibVersion() for libnvinfer (major*10000+minor*100+patch) and
	// cudaRuntimeGetVersion() for libcudart (major*1000+minor*10); 0 for the others.
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
func OpenLibrary(lib trt.Library, path string) (*Library, error) {
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

// Compiled describes the headers the TensorRT backend was compiled against; all zero in a
// binary built without the "tensorrt" tag.
type Compiled struct {
	TensorRT int // NV_TENSORRT_VERSION
	Build    int // NV_TENSORRT_BUILD
	CUDA     int // CUDART_VERSION (major*1000+minor*10)
}

// CompiledFor returns the headers the TensorRT backend was compiled against.
func CompiledFor() Compiled {
	var info C.trtb_compiled_info
	C.trtb_tensorrt_compiled(&info)
	return Compiled{TensorRT: int(info.tensorrt_version), Build: int(info.tensorrt_build), CUDA: int(info.cuda_version)}
}

// TensorRTLibraries are the libraries of one TensorRT, found and opened, in use once
// installed.
type TensorRTLibraries struct {
	Infer, ONNXParser, CUDARuntime *Library
	Plugin                         *Library // nil when the standard plugins are not wanted
}

// Close unloads every library of t that is not installed.
func (t *TensorRTLibraries) Close() {
	for _, l := range []*Library{t.Infer, t.ONNXParser, t.Plugin, t.CUDARuntime} {
		l.Close()
	}
}

// FindTensorRT looks for the libraries of the TensorRT version compiled (an
// NV_TENSORRT_VERSION integer) where s says, and opens them: libnvinfer first, accepted only
// when trt.CheckVersions(compiled, its version) passes, then libnvonnxparser, the standard
// plugins (when plugins is true) and the CUDA runtime. Nothing is installed: the caller
// installs them (Install) or closes them. The error names every place searched (a
// *trt.SearchError).
func FindTensorRT(s trt.Search, compiled int, plugins bool) (*TensorRTLibraries, error) {
	found := &TensorRTLibraries{}
	open := func(lib trt.Library, dst **Library, check func(LibraryInfo) error) error {
		_, err := s.Find(lib, func(c trt.Candidate) error {
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
			*dst = l
			return nil
		})
		return err
	}
	steps := []struct {
		lib   trt.Library
		dst   **Library
		check func(LibraryInfo) error
	}{
		{trt.LibInfer, &found.Infer, func(info LibraryInfo) error { return trt.CheckVersions(compiled, info.Version) }},
		{trt.LibONNXParser, &found.ONNXParser, nil},
		{trt.LibPlugin, &found.Plugin, nil},
		{trt.LibCUDARuntime, &found.CUDARuntime, nil},
	}
	for _, st := range steps {
		if st.lib == trt.LibPlugin && !plugins {
			continue
		}
		if err := open(st.lib, st.dst, st.check); err != nil {
			found.Close()
			if st.lib == trt.LibPlugin {
				return nil, fmt.Errorf("%w (or pass --no-builtin-plugins to build without TensorRT's standard plugins)", err)
			}
			return nil, err
		}
	}
	return found, nil
}

// Install makes t the process's TensorRT: the TensorRT backend uses these libraries from now
// on. It may be done once per process (the worker does it before its one build); what is
// installed is never unloaded.
func (t *TensorRTLibraries) Install() error {
	for _, l := range []*Library{t.Infer, t.ONNXParser, t.Plugin, t.CUDARuntime} {
		if l == nil {
			continue
		}
		if err := l.install(); err != nil {
			return err
		}
	}
	return nil
}

var loadOnce struct {
	sync.Mutex
	done bool
	err  error
}

// ErrNotCompiled is returned by LoadTensorRT in a binary built without the "tensorrt" tag.
// It is the one explanation of a binary without TensorRT that trtbuild gives in Go.
var ErrNotCompiled = errors.New("this trtbuild was built without TensorRT; build it with `go build -tags tensorrt ./cmd/trtbuild` (see README, \"Building with TensorRT\", or Dockerfile.cuda), or preview the build without a GPU with --backend sim")

// LoadTensorRT finds and installs the TensorRT libraries this binary was compiled for, once
// per process; later calls return the first call's outcome. Only the worker calls it, before
// its TensorRT build: the parent process never loads TensorRT.
func LoadTensorRT(s trt.Search, plugins bool) error {
	loadOnce.Lock()
	defer loadOnce.Unlock()
	if loadOnce.done {
		return loadOnce.err
	}
	loadOnce.done = true
	loadOnce.err = loadTensorRT(s, plugins)
	return loadOnce.err
}

func loadTensorRT(s trt.Search, plugins bool) error {
	c := CompiledFor()
	if c.TensorRT == 0 {
		return ErrNotCompiled
	}
	v, err := trt.FromInt(c.TensorRT)
	if err != nil {
		return err
	}
	s.Major = v.Major
	found, err := FindTensorRT(s, c.TensorRT, plugins)
	if err != nil {
		return err
	}
	if err := found.Install(); err != nil {
		found.Close()
		return err
	}
	return nil
}
