//go:build !windows

package trt

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// CUDADriverFile is the CUDA driver's SONAME; it has been 1 since CUDA's first release.
const CUDADriverFile = "libcuda.so.1"

// WSLDriverDir is where WSL 2 mounts the Windows driver's libcuda.so.1.
const WSLDriverDir = "/usr/lib/wsl/lib"

// WorkerLibrarySearch names how the worker and the probe are given the folders of the TensorRT
// chosen (Location.LibraryDirs), for messages.
const WorkerLibrarySearch = "the worker's LD_LIBRARY_PATH"

// The messages of CheckVersions (see version.go).
const (
	majorMismatchFormat = "%w: trtbuild was compiled against TensorRT %s but loaded libnvinfer %s; " +
		"put the TensorRT %d libraries first on LD_LIBRARY_PATH or rebuild trtbuild with the TensorRT %d headers"
	olderLibraryFormat = "%w: loaded libnvinfer %s is older than the TensorRT %s headers trtbuild was compiled against; " +
		"install TensorRT %d.%d or newer, or rebuild trtbuild with the TensorRT %d.%d headers"
	belowOldestFormat = "%w: loaded libnvinfer %s is older than TensorRT %d.%d, the oldest the TensorRT %s headers trtbuild was " +
		"compiled against can drive (%s); install TensorRT %d.%d or newer"
)

// osNames is how Linux names TensorRT's libraries and where it keeps them.
var osNames = libraryNames{
	base:       [...]string{"libnvinfer", "libnvonnxparser", "libnvinfer_plugin", "libcuda"},
	file:       func(lib Library, major string) string { return fmt.Sprintf("%s.so.%s", lib, major) },
	leanFile:   func(major int) string { return fmt.Sprintf("libnvinfer_lean.so.%d", major) },
	driverDirs: []Place{{Where: "WSL", Path: WSLDriverDir}},
	driverFix:  "install the NVIDIA driver (nvidia-smi must work), or run the container with --gpus all",
	rootDirs:   []string{"lib", "lib64"},
	envSites:   []string{"lib/python3*/site-packages"},
	userSites:  []string{"lib/python3*/site-packages"},
	cudaRuntimes: []cudaRuntime{
		{major: 13, dir: "nvidia/cu13/lib", file: "libcudart.so.13"},
		{major: 12, dir: "nvidia/cuda_runtime/lib", file: "libcudart.so.12"},
	},
	hint: hintWords{
		added:      "put first on LD_LIBRARY_PATH",
		inspect:    "run ldd on %s to see what it lacks",
		orAdd:      ", or add it to LD_LIBRARY_PATH",
		release:    "pip install tensorrt, or the tarball's lib/",
		then:       "add the folder that holds %s to LD_LIBRARY_PATH or point --tensorrt-lib at it",
		system:     "the system's library folders",
		separators: "/",
	},
	fromEnv: func(s *Search, getenv func(string) string) {
		s.LDLibraryPath = getenv("LD_LIBRARY_PATH")
		s.SystemPrefixes = []string{"/usr/local", "/usr"}
		if s.UserBase == "" && getenv("HOME") != "" {
			s.UserBase = filepath.Join(getenv("HOME"), ".local")
		}
	},
}

// systemWhere says where the dynamic loader looks for a bare file name.
func (l Location) systemWhere() string {
	ld := l.UserLibraryPath
	if ld == "" {
		ld = "unset"
	}
	return "system (LD_LIBRARY_PATH=" + ld + ", ld.so.cache)"
}

// LibraryPath is the LD_LIBRARY_PATH a worker or probe of l must start with: the chosen
// folder, the lean runtime's and the CUDA runtime's, then the user's own. TensorRT loads its
// builder resources (libnvinfer_builder_resource_smNN.so.<version>) and the lean runtime by
// bare file name, not next to itself, and glibc reads LD_LIBRARY_PATH only when a process
// starts: so the parent sets it for the child. "" when nothing is to be added and the user set
// none.
func (l Location) LibraryPath() string {
	dirs := l.LibraryDirs()
	if l.UserLibraryPath != "" {
		dirs = append(dirs, l.UserLibraryPath)
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}

// FitsLibraryPath reports whether dir can be one entry of LD_LIBRARY_PATH: glibc splits it at
// ':' and ';' and has no escape, so a folder holding either would become two entries (one of
// them perhaps relative to the working folder) and TensorRT's builder resources would not be
// found in it.
func FitsLibraryPath(dir string) bool {
	return !strings.ContainsAny(dir, ":;")
}

// Environ returns env (KEY=value entries) with LD_LIBRARY_PATH set to l.LibraryPath(), for
// starting the worker or the probe. env is not modified.
func (l Location) Environ(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") {
			out = append(out, kv)
		}
	}
	if p := l.LibraryPath(); p != "" {
		out = append(out, "LD_LIBRARY_PATH="+p)
	}
	return out
}

// AbsoluteLibraryPath returns env (KEY=value entries) with every relative entry of its
// LD_LIBRARY_PATH made absolute against dir, the working folder of the process that starts a
// child, and every empty one (glibc reads it as the working folder) made dir: a child that
// then works in another folder (the worker, in the model's) looks for libraries where the
// user meant, never in that folder, where anyone who may write next to the model could plant
// a libcuda.so.1. env is not modified.
func AbsoluteLibraryPath(env []string, dir string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		value, ok := strings.CutPrefix(kv, "LD_LIBRARY_PATH=")
		if !ok || value == "" { // glibc ignores an empty LD_LIBRARY_PATH as a whole
			continue
		}
		var b strings.Builder
		b.WriteString("LD_LIBRARY_PATH=")
		start := 0
		for j := 0; j <= len(value); j++ {
			if j < len(value) && value[j] != ':' && value[j] != ';' { // glibc splits at both
				continue
			}
			entry := value[start:j]
			if !filepath.IsAbs(entry) {
				entry = filepath.Join(dir, entry)
			}
			b.WriteString(entry)
			if j < len(value) {
				b.WriteByte(value[j])
			}
			start = j + 1
		}
		out[i] = b.String()
	}
	return out
}

// InferFilePattern names libnvinfer's file for any major, for messages.
const InferFilePattern = "libnvinfer.so.N"

// NamesInferLibrary reports whether path names libnvinfer itself rather than its folder, which
// --tensorrt-lib then stands for: never on Linux, where the flag takes the folder only.
func NamesInferLibrary(string) bool { return false }
