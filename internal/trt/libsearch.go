package trt

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Library is one of the shared libraries the TensorRT backend loads at run time.
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
	// LibCUDARuntime is the CUDA runtime, libcudart.so.<13|12>, for choosing the GPU.
	LibCUDARuntime Library = 3
)

// String names the library as its file names begin.
func (l Library) String() string {
	switch l {
	case LibInfer:
		return "libnvinfer"
	case LibONNXParser:
		return "libnvonnxparser"
	case LibPlugin:
		return "libnvinfer_plugin"
	case LibCUDARuntime:
		return "libcudart"
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

// CUDARuntimeMajors are the CUDA runtime majors the backend can load, newest first. The
// backend calls only CUDA runtime functions whose signatures are the same in both
// (cudaGetDeviceCount, cudaSetDevice, cudaDeviceGetAttribute, ...), so either will do; the one
// TensorRT was built for is the one its package installs next to it.
var CUDARuntimeMajors = []int{13, 12}

// Search says where the TensorRT libraries are looked for. The zero value searches only where
// the system's dynamic loader looks.
type Search struct {
	// Major is the TensorRT major version trtbuild was compiled against: it names the files
	// (libnvinfer.so.10) and only that major is accepted.
	Major int
	// Dir is the folder named by --tensorrt-lib or TRTBUILD_TENSORRT_LIB. When set, the
	// TensorRT libraries are taken from there and nowhere else: an explicit choice must not
	// silently become another TensorRT. The CUDA runtime is looked for there first.
	Dir string
	// DirFrom says where Dir came from, for messages: "--tensorrt-lib" or EnvLibDir.
	DirFrom string
	// Root is TENSORRT_ROOT: Root/lib is searched before the system's places.
	Root string
	// LDLibraryPath is LD_LIBRARY_PATH, only to be named in messages: the dynamic loader
	// itself searches it when a bare file name is opened.
	LDLibraryPath string
}

// SearchFromEnv builds a Search for major from the --tensorrt-lib value (flagDir, may be
// empty) and the environment.
func SearchFromEnv(major int, flagDir string, getenv func(string) string) Search {
	s := Search{Major: major, Root: getenv(EnvRoot), LDLibraryPath: getenv("LD_LIBRARY_PATH")}
	switch {
	case flagDir != "":
		s.Dir, s.DirFrom = flagDir, "--tensorrt-lib"
	case getenv(EnvLibDir) != "":
		s.Dir, s.DirFrom = getenv(EnvLibDir), EnvLibDir
	}
	return s
}

// Candidate is one file name to hand to dlopen: a path, or a bare file name that the dynamic
// loader looks up itself (LD_LIBRARY_PATH, the binary's RUNPATH, /etc/ld.so.cache, /lib,
// /usr/lib).
type Candidate struct {
	Path  string
	Where string // where it comes from, for messages: "--tensorrt-lib", "TENSORRT_ROOT", "system"
}

// FileNames returns the file names of lib, in the order they are tried: the SONAMEs, which
// carry the major version (TensorRT's CMakeLists sets SOVERSION to the major).
func (s Search) FileNames(lib Library) []string {
	switch lib {
	case LibCUDARuntime:
		var names []string
		for _, m := range CUDARuntimeMajors {
			names = append(names, fmt.Sprintf("libcudart.so.%d", m))
		}
		return names
	default:
		return []string{fmt.Sprintf("%s.so.%d", lib, s.Major)}
	}
}

// Candidates returns where lib is looked for, in order:
//  1. Dir (--tensorrt-lib or TRTBUILD_TENSORRT_LIB); for a TensorRT library nothing else;
//  2. Root/lib and Root/lib64 (TENSORRT_ROOT);
//  3. the bare file name, which the dynamic loader looks up in LD_LIBRARY_PATH, the RUNPATH,
//     /etc/ld.so.cache (a deb or rpm install) and the default folders.
//
// For the CUDA runtime, the CUDA toolkit's usual folder, /usr/local/cuda/lib64, comes last.
func (s Search) Candidates(lib Library) []Candidate {
	var out []Candidate
	names := s.FileNames(lib)
	if s.Dir != "" {
		for _, n := range names {
			out = append(out, Candidate{Path: filepath.Join(s.Dir, n), Where: s.DirFrom})
		}
		if lib != LibCUDARuntime {
			return out
		}
	}
	if s.Root != "" {
		for _, sub := range []string{"lib", "lib64"} {
			for _, n := range names {
				out = append(out, Candidate{Path: filepath.Join(s.Root, sub, n), Where: EnvRoot})
			}
		}
	}
	for _, n := range names {
		out = append(out, Candidate{Path: n, Where: "system"})
	}
	if lib == LibCUDARuntime {
		for _, n := range names {
			out = append(out, Candidate{Path: filepath.Join("/usr/local/cuda/lib64", n), Where: "system"})
		}
	}
	return out
}

// Attempt is one candidate tried and why it was not taken.
type Attempt struct {
	Candidate
	Err error
}

// ErrNotFound is wrapped by a SearchError.
var ErrNotFound = errors.New("TensorRT library not found")

// SearchError says that no candidate of a library could be used, and lists what was tried.
type SearchError struct {
	Lib      Library
	Search   Search
	Attempts []Attempt
}

func (e *SearchError) Unwrap() error { return ErrNotFound }

// Error is one line: what is missing, every place searched with why it failed, and the fix.
func (e *SearchError) Error() string {
	var b strings.Builder
	names := strings.Join(e.Search.FileNames(e.Lib), " or ")
	fmt.Fprintf(&b, "%s: cannot load %s; searched: ", ErrNotFound, names)
	for i, a := range e.Attempts {
		if i > 0 {
			b.WriteString("; ")
		}
		where := a.Where
		if where == "system" {
			ld := e.Search.LDLibraryPath
			if ld == "" {
				ld = "unset"
			}
			where = "system (LD_LIBRARY_PATH=" + ld + ", ld.so.cache)"
		}
		// The dynamic loader starts its messages with the file name; it is said once.
		fmt.Fprintf(&b, "%s %s: %s", where, a.Path, strings.TrimPrefix(oneLine(a.Err), a.Path+": "))
	}
	if e.Lib == LibCUDARuntime {
		b.WriteString("; install the CUDA runtime TensorRT was built for, or put its lib folder on LD_LIBRARY_PATH")
	} else {
		fmt.Fprintf(&b, "; install TensorRT %d, or point --tensorrt-lib (or %s) at the folder holding %s", e.Search.Major, EnvLibDir, names)
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
func (s Search) Find(lib Library, open func(c Candidate) error) (Candidate, error) {
	var tried []Attempt
	for _, c := range s.Candidates(lib) {
		err := open(c)
		if err == nil {
			return c, nil
		}
		tried = append(tried, Attempt{Candidate: c, Err: err})
	}
	return Candidate{}, &SearchError{Lib: lib, Search: s, Attempts: tried}
}
