package trt

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Search says where the TensorRT libraries are looked for (SearchFromEnv); Locate turns it
// into the one folder chosen (a Location). The zero value, with Majors, searches only where
// the system's dynamic loader looks.
type Search struct {
	// Majors are the TensorRT majors trtbuild drives (a shim of each is compiled in), newest
	// first: they name the files (libnvinfer.so.11, libnvinfer.so.10) and only those majors
	// are accepted. In a folder that holds several, the newest is taken.
	Majors []int
	// CUDAMajor is the CUDA major of the headers (CUDART_VERSION/1000): which of pip's CUDA
	// runtime packages (nvidia/cu13, nvidia/cuda_runtime for 12) belongs to this TensorRT. 0
	// takes 13, then 12.
	CUDAMajor int
	// Dir is the folder named by --tensorrt-lib or TRTBUILD_TENSORRT_LIB. When set, the
	// TensorRT libraries are taken from there and nowhere else: an explicit choice must not
	// silently become another TensorRT.
	Dir string
	// DirFrom says where Dir came from, for messages: "--tensorrt-lib" or EnvLibDir.
	DirFrom string
	// Root is TENSORRT_ROOT: Root/lib and Root/lib64 are looked in after Dir.
	Root string
	// VirtualEnv ($VIRTUAL_ENV), CondaPrefix ($CONDA_PREFIX) and UserBase ($PYTHONUSERBASE, else
	// ~/.local) are Python prefixes whose lib/python3*/site-packages may hold a pip install of
	// TensorRT (tensorrt_libs/); SystemPrefixes are the system's (/usr/local, /usr), whose
	// python3*/site-packages and dist-packages are looked in last.
	VirtualEnv, CondaPrefix, UserBase string
	SystemPrefixes                    []string
	// LDLibraryPath is the user's LD_LIBRARY_PATH: the dynamic loader searches it when a bare
	// file name is opened, and the folders chosen go before it (Location.Environ). Linux only.
	LDLibraryPath string
	// PathDirs are the folders of the user's PATH, in order: on Windows they are looked in
	// after the pip installs (the Windows loader itself is never asked to search PATH). Empty
	// on Linux, where PATH holds programs.
	PathDirs []string
}

// SearchFromEnv builds a Search for the TensorRT majors (newest first) and CUDA major
// cudaMajor from the --tensorrt-lib value (flagDir, may be empty) and the environment.
func SearchFromEnv(majors []int, cudaMajor int, flagDir string, getenv func(string) string) Search {
	s := Search{
		Majors: majors, CUDAMajor: cudaMajor, Root: getenv(EnvRoot),
		VirtualEnv: getenv("VIRTUAL_ENV"), CondaPrefix: getenv("CONDA_PREFIX"), UserBase: getenv("PYTHONUSERBASE"),
	}
	osNames.fromEnv(&s, getenv)
	// libDir is the folder a --tensorrt-lib value stands for: itself, or on Windows the folder
	// of the nvinfer DLL it names (NamesInferLibrary).
	libDir := func(v string) string {
		if NamesInferLibrary(v) {
			return filepath.Dir(v)
		}
		return v
	}
	switch {
	case flagDir != "":
		s.Dir, s.DirFrom = libDir(flagDir), "--tensorrt-lib"
		// The parent hands the worker TRTBUILD_TENSORRT_LIB as the folder, made absolute:
		// messages still say where it came from.
		if env := getenv(EnvLibDir); env != "" && sameDir(libDir(env), s.Dir) {
			s.DirFrom = EnvLibDir
		}
	case getenv(EnvLibDir) != "":
		s.Dir, s.DirFrom = libDir(getenv(EnvLibDir)), EnvLibDir
	}
	return s
}

// Place is a folder looked in, for messages: where it comes from, the file looked for in it,
// and why it was not taken.
type Place struct {
	Where string `json:"where"`
	Path  string `json:"path"`
	Why   string `json:"why,omitempty"`
}

// Location is the TensorRT the parent chose (Search.Locate), handed to the worker and the
// probe, which load from it and nowhere else, and started with its folders on
// LD_LIBRARY_PATH (Environ).
type Location struct {
	// Major is the TensorRT major found (the one file libnvinfer.so.<Major> names), 0 when
	// none was: then the system's dynamic loader is asked for each of Majors, newest first,
	// and the major of the libnvinfer it loads decides the others'.
	Major int `json:"major"`
	// Majors are the majors this trtbuild drives, newest first.
	Majors []int `json:"majors,omitempty"`
	// Dir holds libnvinfer.so.<Major> (and the parser, plugins and builder resources); "" means
	// none of the folders did and the system's dynamic loader is asked (From is "system").
	Dir  string `json:"dir,omitempty"`
	From string `json:"from"`
	// LeanDir is pip's tensorrt_lean_libs beside Dir (libnvinfer_lean.so.<Major>, loaded by
	// TensorRT itself for --version-compatible), when there is one.
	LeanDir string `json:"lean_dir,omitempty"`
	// CUDARuntime is the CUDA runtime pip installed beside Dir (site-packages/nvidia/cu13/lib
	// or nvidia/cuda_runtime/lib): its folder goes on LD_LIBRARY_PATH for TensorRT's own
	// libraries that need it; trtbuild never loads it.
	CUDARuntime string `json:"cuda_runtime,omitempty"`
	// Looked lists the folders looked in before the one chosen, without libnvinfer.
	Looked []Place `json:"looked,omitempty"`
	// Others lists the TensorRT installs further down the search order, not used.
	Others []Place `json:"others,omitempty"`
	// UserLibraryPath is the user's own LD_LIBRARY_PATH.
	UserLibraryPath string `json:"user_library_path,omitempty"`
}

// folder is one place Locate looks for libnvinfer.
type folder struct {
	dir, where string
	pip        bool // a site-packages/tensorrt_libs folder
}

// folders lists the places of s in order, the explicit folder excepted; glob expands
// python3* patterns.
func (s Search) folders(glob func(string) []string) []folder {
	var out []folder
	if s.Root != "" {
		for _, sub := range osNames.rootDirs {
			out = append(out, folder{dir: filepath.Join(s.Root, sub), where: EnvRoot})
		}
	}
	sites := func(prefix, where string, patterns ...string) {
		if prefix == "" {
			return
		}
		for _, p := range patterns {
			for _, site := range newestFirst(glob(filepath.Join(globEscape(prefix), p))) {
				dir := filepath.Join(site, "tensorrt_libs")
				// python3*/dist-packages matches python3/dist-packages as well: each folder once.
				if !slices.ContainsFunc(out, func(f folder) bool { return f.dir == dir }) {
					out = append(out, folder{dir: dir, where: where, pip: true})
				}
			}
		}
	}
	sites(s.VirtualEnv, "pip (VIRTUAL_ENV)", osNames.envSites...)
	sites(s.CondaPrefix, "pip (CONDA_PREFIX)", osNames.envSites...)
	sites(s.UserBase, "pip (user site)", osNames.userSites...)
	for _, p := range s.SystemPrefixes {
		sites(p, "pip (system)", "lib/python3*/site-packages", "lib/python3*/dist-packages", "lib/python3/dist-packages")
	}
	for _, dir := range s.PathDirs {
		if dir != "" && filepath.IsAbs(dir) {
			out = append(out, folder{dir: filepath.Clean(dir), where: "PATH"})
		}
	}
	return out
}

// newestFirst sorts site-packages folders by their Python version, newest first
// (python3.12 before python3.9; Python312 before Python39 in a Windows user site), dropping
// duplicates.
func newestFirst(paths []string) []string {
	minor := func(p string) int {
		for _, part := range strings.Split(p, string(filepath.Separator)) {
			if rest, ok := strings.CutPrefix(part, "python3."); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					return n
				}
			}
			if rest, ok := strings.CutPrefix(part, "Python3"); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					return n
				}
			}
		}
		return -1
	}
	out := slices.Clone(paths)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(minor(b), minor(a)) })
	return slices.Compact(out)
}

// Locate chooses the folder of the TensorRT libraries, by looking for the files
// libnvinfer.so.<major> of Majors (nothing is loaded) in this order:
//  1. Dir (--tensorrt-lib or TRTBUILD_TENSORRT_LIB), which is taken whether the file is there
//     or not: an explicit choice is never replaced by another TensorRT;
//  2. TENSORRT_ROOT/lib, then TENSORRT_ROOT/lib64 (an unpacked tarball);
//  3. pip's tensorrt_libs/ in the site-packages of $VIRTUAL_ENV, $CONDA_PREFIX, the user site
//     and the system's python3* site-packages and dist-packages;
//  4. none: the system's dynamic loader (LD_LIBRARY_PATH, /etc/ld.so.cache, the default
//     folders) is asked for the bare file name.
//
// It is the one place that decides; the worker and the probe load from its answer. For a pip
// folder it also finds tensorrt_lean_libs/ and the CUDA runtime package beside it.
func (s Search) Locate() Location {
	return s.locate(globFiles, isFile)
}

func (s Search) locate(glob func(string) []string, exists func(string) bool) Location {
	loc := Location{Majors: s.Majors, From: "system", UserLibraryPath: s.LDLibraryPath}
	// found is the newest major whose libnvinfer is in dir, and its path (0, "" for none).
	found := func(dir string) (int, string) {
		for _, m := range s.Majors {
			if p := filepath.Join(dir, FileName(LibInfer, m)); exists(p) {
				return m, p
			}
		}
		return 0, filepath.Join(dir, fileNameOf(LibInfer, s.Majors))
	}
	chosen := false
	if s.Dir != "" {
		loc.Dir, loc.From, chosen = filepath.Clean(s.Dir), s.DirFrom, true
		loc.Major, _ = found(loc.Dir)
		if filepath.Base(loc.Dir) == "tensorrt_libs" {
			s.pipExtras(&loc, exists)
		}
	}
	pathFolders := 0 // PATH's folders looked in without libnvinfer, said as one place
	for _, f := range s.folders(glob) {
		major, path := found(f.dir)
		switch {
		case major == 0 && !chosen && f.where == "PATH":
			pathFolders++
		case major == 0 && !chosen:
			loc.Looked = append(loc.Looked, Place{Where: f.where, Path: path, Why: "no such file"})
		case major == 0 || f.dir == loc.Dir:
		case chosen:
			loc.Others = append(loc.Others, Place{Where: f.where, Path: path})
		case !FitsLibraryPath(f.dir):
			loc.Looked = append(loc.Looked, Place{Where: f.where, Path: path, Why: "its folder holds ':' or ';', which LD_LIBRARY_PATH cannot hold"}) // Linux only
		default:
			loc.Dir, loc.From, loc.Major, chosen = f.dir, f.where, major, true
			if f.pip {
				s.pipExtras(&loc, exists)
			}
		}
	}
	if pathFolders > 0 && !chosen {
		loc.Looked = append(loc.Looked, Place{Where: "PATH", Path: fileNameOf(LibInfer, s.Majors), Why: fmt.Sprintf("in none of its %d folders", pathFolders)})
	}
	return loc
}

// pipExtras finds what pip installs beside tensorrt_libs/ in the same site-packages: the lean
// runtime (tensorrt_lean_libs/) and the CUDA runtime of TensorRT's CUDA major.
func (s Search) pipExtras(loc *Location, exists func(string) bool) {
	site := filepath.Dir(loc.Dir)
	if lean := filepath.Join(site, "tensorrt_lean_libs"); exists(filepath.Join(lean, osNames.leanFile(loc.Major))) {
		loc.LeanDir = lean
	}
	for _, rt := range osNames.cudaRuntimes {
		if s.CUDAMajor != 0 && rt.major != s.CUDAMajor {
			continue
		}
		file := filepath.Join(site, filepath.FromSlash(rt.dir), rt.file)
		if exists(file) {
			loc.CUDARuntime = file
			return
		}
	}
}

// LibraryDirs are the folders TensorRT loads its own libraries from by bare file name (its
// builder resources, the lean runtime): the chosen folder, the lean runtime's and the CUDA
// runtime's, each once. The worker and the probe get them on LD_LIBRARY_PATH on Linux
// (LibraryPath) and add them to their DLL search on Windows (AddDllDirectory).
func (l Location) LibraryDirs() []string {
	var dirs []string
	for _, d := range []string{l.Dir, l.LeanDir, dirOf(l.CUDARuntime)} {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func dirOf(file string) string {
	if file == "" {
		return ""
	}
	return filepath.Dir(file)
}

// Describe says where l found TensorRT, for `trtbuild version`: "pip (VIRTUAL_ENV)
// /venv/.../tensorrt_libs", or "system (LD_LIBRARY_PATH=..., ld.so.cache)" (on Windows
// "system (trtbuild.exe's folder, System32)").
func (l Location) Describe() string {
	if l.Dir == "" {
		return l.systemWhere()
	}
	return l.From + " " + l.Dir
}

func sameDir(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// globEscape makes path match only itself in a glob pattern: a prefix is a folder, and "[",
// "*", "?" or "\" in its name are characters, not a pattern.
func globEscape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func globFiles(pattern string) []string {
	m, _ := filepath.Glob(pattern) // the only error is a malformed pattern, and prefixes are escaped
	return m
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
