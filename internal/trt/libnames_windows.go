package trt

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
)

// CUDADriverFile is the CUDA driver's DLL, which the NVIDIA driver installs in System32.
const CUDADriverFile = "nvcuda.dll"

// WorkerLibrarySearch names how the worker and the probe are given the folders of the TensorRT
// chosen (Location.LibraryDirs), for messages: they add them to their DLL search themselves.
const WorkerLibrarySearch = "the worker's DLL search path, added with AddDllDirectory"

// The messages of CheckVersions (see version.go).
const (
	majorMismatchFormat = "%w: trtbuild was compiled against TensorRT %s but loaded nvinfer %s; " +
		"point --tensorrt-lib at the folder of the TensorRT %d DLLs or rebuild trtbuild with the TensorRT %d headers"
	olderLibraryFormat = "%w: loaded nvinfer %s is older than the TensorRT %s headers trtbuild was compiled against; " +
		"install TensorRT %d.%d or newer, or rebuild trtbuild with the TensorRT %d.%d headers"
	belowOldestFormat = "%w: loaded nvinfer %s is older than TensorRT %d.%d, the oldest the TensorRT %s headers trtbuild was " +
		"compiled against can drive (%s); install TensorRT %d.%d or newer"
)

// osNames is how Windows names TensorRT's DLLs and where they are kept: the zip's lib\ (up to
// TensorRT 10.7) or bin\ (10.8 and later, and 11.x), pip's tensorrt_libs\ in a Python's
// Lib\site-packages, or a folder on PATH.
var osNames = libraryNames{
	base:     [...]string{"nvinfer", "nvonnxparser", "nvinfer_plugin", "nvcuda"},
	file:     func(lib Library, major string) string { return fmt.Sprintf("%s_%s.dll", lib, major) },
	leanFile: func(major int) string { return fmt.Sprintf("nvinfer_lean_%d.dll", major) },
	// nvcuda.dll is found by its bare name in System32; there is no second place.
	driverFix: "install the NVIDIA driver (nvidia-smi must work)",
	rootDirs:  []string{"lib", "bin"},
	envSites:  []string{"Lib/site-packages"},
	userSites: []string{"Python3*/site-packages"},
	cudaRuntimes: []cudaRuntime{
		{major: 13, dir: "nvidia/cu13/bin", file: "cudart64_13.dll"},
		{major: 12, dir: "nvidia/cuda_runtime/bin", file: "cudart64_12.dll"},
	},
	fromEnv: func(s *Search, getenv func(string) string) {
		s.PathDirs = filepath.SplitList(getenv("PATH"))
		// pip's user site on Windows: %APPDATA%\Python\Python3NN\site-packages.
		if s.UserBase == "" && getenv("APPDATA") != "" {
			s.UserBase = filepath.Join(getenv("APPDATA"), "Python")
		}
	},
	hint: hintWords{
		added:      "added to its DLL search (AddDllDirectory)",
		inspect:    "check that the DLLs it imports are there and of this release (dumpbin /dependents %s)",
		orAdd:      "",
		release:    "pip install tensorrt, or the zip's bin\\ or lib\\",
		then:       "point --tensorrt-lib at the folder that holds %s",
		system:     "trtbuild.exe's folder and System32",
		separators: `\/:`,
	},
}

// systemWhere says where Windows looks for a bare DLL name: the worker loads with
// LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, never from the working folder or PATH (PATH's folders are
// looked in by Locate itself, by full path).
func (l Location) systemWhere() string {
	return "system (trtbuild.exe's folder, System32)"
}

// FitsLibraryPath is true on Windows: the folders are added one by one to the DLL search
// (AddDllDirectory), not joined into a list, so any folder name fits.
func FitsLibraryPath(string) bool { return true }

// Environ returns a copy of env: on Windows the worker and the probe add l's folders
// (LibraryDirs) to their own DLL search before they load TensorRT, so nothing is passed
// through the environment, and PATH stays the user's.
func (l Location) Environ(env []string) []string {
	return slices.Clone(env)
}

// AbsoluteLibraryPath returns a copy of env on Windows: the worker loads DLLs with
// LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, never from its working folder (the model's), whatever the
// environment says.
func AbsoluteLibraryPath(env []string, _ string) []string { return slices.Clone(env) }

// LibraryPath is "" on Windows: there is no library path to set (see Environ).
func (l Location) LibraryPath() string { return "" }

// InferFilePattern names nvinfer's DLL for any major, for messages.
const InferFilePattern = "nvinfer_N.dll"

// inferDLL matches nvinfer_<major>.dll, in any case, as Windows matches file names.
var inferDLL = regexp.MustCompile(`(?i)^nvinfer_[0-9]+\.dll$`)

// NamesInferLibrary reports whether path names nvinfer_<major>.dll itself: on Windows
// --tensorrt-lib takes the DLL as well as its folder (a user copies the DLL's path from
// Explorer as readily as the folder's), and stands for the folder it is in.
func NamesInferLibrary(path string) bool { return inferDLL.MatchString(filepath.Base(path)) }
