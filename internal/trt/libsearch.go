package trt

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Library is one of the shared libraries the TensorRT backend loads at run time. How each is
// named and where it is looked for differ between Linux and Windows; the OS's table is
// libnames_unix.go or libnames_windows.go (osNames), the search order is one, here and in
// libsearch_locate.go.
type Library int

// The libraries, in the order the worker loads them. Their values are trtb_loader.h's
// TRTB_LIB_* numbers.
const (
	// LibInfer is libnvinfer.so.<major>: the builder, and the version guard.
	LibInfer Library = 0
	// LibONNXParser is libnvonnxparser.so.<major>.
	LibONNXParser Library = 1
	// LibPlugin is libnvinfer_plugin.so.<major>, TensorRT's standard plugins.
	LibPlugin Library = 2
	// LibCUDADriver is the CUDA driver, libcuda.so.1, installed with the NVIDIA driver: it
	// lists, names and selects the GPU. TensorRT links the CUDA runtime statically, so no
	// libcudart is loaded.
	LibCUDADriver Library = 3
)

// String names the library as its file names begin: libnvinfer on Linux, nvinfer on
// Windows.
func (l Library) String() string {
	if l >= 0 && int(l) < len(osNames.base) {
		return osNames.base[l]
	}
	return fmt.Sprintf("library(%d)", int(l))
}

// Environment variables of the search.
const (
	// EnvLibDir is the folder that holds the TensorRT libraries; the --tensorrt-lib flag wins
	// over it.
	EnvLibDir = "TRTBUILD_TENSORRT_LIB"
	// EnvRoot is a TensorRT install (the tar package unpacked): its lib/ holds the libraries.
	EnvRoot = "TENSORRT_ROOT"
)

// Candidate is one file name to hand to dlopen: a path, or a bare file name that the dynamic
// loader looks up itself (LD_LIBRARY_PATH, the binary's RUNPATH, /etc/ld.so.cache, /lib,
// /usr/lib; on Windows, LoadLibraryExW's default folders: trtbuild.exe's folder, the folders
// added for TensorRT, System32).
type Candidate struct {
	Path  string
	Where string // where it comes from, for messages: "--tensorrt-lib", "TENSORRT_ROOT", "pip (VIRTUAL_ENV)", "system"
}

// FileName returns the file name of lib for TensorRT major: on Linux the SONAME, which carries
// the major version (TensorRT's CMakeLists sets SOVERSION to the major): libnvinfer.so.10; on
// Windows the DLL name, which carries it too: nvinfer_10.dll. The CUDA driver's is
// CUDADriverFile.
func FileName(lib Library, major int) string {
	if lib == LibCUDADriver {
		return CUDADriverFile
	}
	return osNames.file(lib, major)
}

// Candidates returns where lib is looked for once the parent has chosen l (Locate):
//   - a TensorRT library: in l.Dir and nowhere else, or, when no folder was chosen, by bare
//     file name, which the dynamic loader looks up in LD_LIBRARY_PATH, the RUNPATH,
//     /etc/ld.so.cache (a deb or rpm install) and the default folders;
//   - the CUDA driver: by bare file name (the driver's installer registers it in the loader's
//     cache), then in WSL's driver folder.
func (l Location) Candidates(lib Library) []Candidate {
	name := FileName(lib, l.Major)
	if lib == LibCUDADriver {
		out := []Candidate{{Path: name, Where: "system"}}
		for _, dir := range osNames.driverDirs {
			out = append(out, Candidate{Path: filepath.Join(dir.Path, name), Where: dir.Where})
		}
		return out
	}
	if l.Dir != "" {
		return []Candidate{{Path: filepath.Join(l.Dir, name), Where: l.From}}
	}
	return []Candidate{{Path: name, Where: "system"}}
}

// Attempt is one candidate tried and why it was not taken.
type Attempt struct {
	Candidate
	Err error
}

// ErrNotFound is wrapped by a SearchError.
var ErrNotFound = errors.New("TensorRT library not found")

// SearchError says that no candidate of a library could be used, and lists what was tried:
// the folders the parent looked in without finding libnvinfer (Looked), then the candidates.
type SearchError struct {
	Lib      Library
	Location Location
	Attempts []Attempt
}

func (e *SearchError) Unwrap() error { return ErrNotFound }

// Error is one line: what is missing, every place searched with why it failed, and the fix.
func (e *SearchError) Error() string {
	var b strings.Builder
	name := FileName(e.Lib, e.Location.Major)
	what := ErrNotFound.Error()
	if e.Lib == LibCUDADriver {
		what = "CUDA driver not found"
	}
	fmt.Fprintf(&b, "%s: cannot load %s; searched: ", what, name)
	var all []Attempt
	if e.Lib != LibCUDADriver {
		for _, p := range e.Location.Looked {
			all = append(all, Attempt{Candidate: Candidate{Path: p.Path, Where: p.Where}, Err: errors.New(p.Why)})
		}
	}
	all = append(all, e.Attempts...)
	for i, a := range all {
		if i > 0 {
			b.WriteString("; ")
		}
		where := a.Where
		if where == "system" {
			where = e.Location.systemWhere()
		}
		// The dynamic loader starts its messages with the file name; it is said once.
		fmt.Fprintf(&b, "%s %s: %s", where, a.Path, strings.TrimPrefix(oneLine(a.Err), a.Path+": "))
	}
	if e.Lib == LibCUDADriver {
		b.WriteString("; " + osNames.driverFix)
	} else {
		fmt.Fprintf(&b, "; install TensorRT %d, or point --tensorrt-lib (or %s) at the folder holding %s", e.Location.Major, EnvLibDir, name)
	}
	return b.String()
}

func oneLine(err error) string {
	if err == nil {
		return "rejected"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Find tries the candidates of lib in order with open, which loads one and returns an error
// when it cannot be used (it does not load, lacks an entry point, or is of another version).
// It returns the first candidate open accepted, or a *SearchError listing every attempt.
func (l Location) Find(lib Library, open func(c Candidate) error) (Candidate, error) {
	var tried []Attempt
	for _, c := range l.Candidates(lib) {
		err := open(c)
		if err == nil {
			return c, nil
		}
		tried = append(tried, Attempt{Candidate: c, Err: err})
	}
	return Candidate{}, &SearchError{Lib: lib, Location: l, Attempts: tried}
}
