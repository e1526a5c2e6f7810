package trt

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
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
// CUDADriverFile. Major 0, for messages, is the name without a version (libnvinfer.so.N).
func FileName(lib Library, major int) string {
	if lib == LibCUDADriver {
		return CUDADriverFile
	}
	if major == 0 {
		return osNames.file(lib, "N")
	}
	return osNames.file(lib, strconv.Itoa(major))
}

// FileMajor is the TensorRT major a library's file name carries (libnvinfer.so.11,
// nvinfer_11.dll: 11), or 0 when it carries none.
func FileMajor(path string) int {
	base := filepath.Base(path)
	i := strings.LastIndexAny(base, "._")
	rest := base[i+1:]
	if strings.EqualFold(rest, "dll") { // nvinfer_11.dll
		stem := base[:i]
		rest = stem[strings.LastIndexByte(stem, '_')+1:]
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// fileNameOf names lib's files for majors: the one file of one major, or for several a pattern
// in braces (libnvinfer.so.{11,10}), for messages.
func fileNameOf(lib Library, majors []int) string {
	switch len(majors) {
	case 0:
		return FileName(lib, 0)
	case 1:
		return FileName(lib, majors[0])
	}
	var ms []string
	for _, m := range majors {
		ms = append(ms, strconv.Itoa(m))
	}
	return osNames.file(lib, "{"+strings.Join(ms, ",")+"}")
}

// majors are the majors whose files l's candidates name: the one found, or every one driven.
func (l Location) majors() []int {
	if l.Major != 0 || len(l.Majors) == 0 {
		return []int{l.Major}
	}
	return l.Majors
}

// fileNames names lib's files for l's majors: "libnvinfer.so.11 or libnvinfer.so.10".
func (l Location) fileNames(lib Library) string {
	var names []string
	for _, m := range l.majors() {
		names = append(names, FileName(lib, m))
	}
	return strings.Join(names, " or ")
}

// majorsText is "11 or 10": the majors of l's candidates.
func (l Location) majorsText() string {
	var names []string
	for _, m := range l.majors() {
		names = append(names, fmt.Sprint(m))
	}
	return strings.Join(names, " or ")
}

// Candidates returns where lib is looked for once the parent has chosen l (Locate):
//   - a TensorRT library: in l.Dir and nowhere else, or, when no folder was chosen, by bare
//     file name, which the dynamic loader looks up in LD_LIBRARY_PATH, the RUNPATH,
//     /etc/ld.so.cache (a deb or rpm install) and the default folders;
//   - the CUDA driver: by bare file name (the driver's installer registers it in the loader's
//     cache), then in WSL's driver folder.
func (l Location) Candidates(lib Library) []Candidate {
	if lib == LibCUDADriver {
		name := FileName(lib, 0)
		out := []Candidate{{Path: name, Where: "system"}}
		for _, dir := range osNames.driverDirs {
			out = append(out, Candidate{Path: filepath.Join(dir.Path, name), Where: dir.Where})
		}
		return out
	}
	// Before libnvinfer is loaded, without a major found: each major driven, newest first.
	var out []Candidate
	for _, m := range l.majors() {
		name := FileName(lib, m)
		if l.Dir != "" {
			out = append(out, Candidate{Path: filepath.Join(l.Dir, name), Where: l.From})
		} else {
			out = append(out, Candidate{Path: name, Where: "system"})
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
	name := e.Location.fileNames(e.Lib)
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
		fmt.Fprintf(&b, "; install TensorRT %s, or point --tensorrt-lib (or %s) at the folder holding %s", e.Location.majorsText(), EnvLibDir, name)
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
