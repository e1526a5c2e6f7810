package trt

// libraryNames is one operating system's table of how TensorRT's libraries are named and
// where they are kept (osNames, in libnames_unix.go and libnames_windows.go). The search order
// and its messages are the same everywhere (Search.Locate, SearchError); only these differ.
type libraryNames struct {
	base         [4]string                          // Library.String, by Library
	file         func(Library, string) string       // FileName of a TensorRT library for a major (or "N")
	leanFile     func(major int) string             // the lean runtime, which pip keeps in tensorrt_lean_libs
	driverDirs   []Place                            // folders the CUDA driver is looked in after its bare name
	driverFix    string                             // what to do when the driver is missing
	rootDirs     []string                           // TENSORRT_ROOT's folders that may hold the libraries, in order
	envSites     []string                           // site-packages patterns under VIRTUAL_ENV and CONDA_PREFIX
	userSites    []string                           // site-packages patterns under the user base
	cudaRuntimes []cudaRuntime                      // pip's CUDA runtime packages, newest CUDA first
	fromEnv      func(*Search, func(string) string) // the OS's part of SearchFromEnv
	hint         hintWords                          // the OS's words in LoadHint
}

// hintWords are the parts of LoadHint's advice that name the OS's loader and tools.
type hintWords struct {
	added      string // how trtbuild made the chosen folder searched
	inspect    string // how to see why a library there does not load (%s: its path)
	orAdd      string // what else makes another folder searched, after "point --tensorrt-lib at DIR"
	release    string // where a whole release comes from
	then       string // what to do once installed (%s: the file name)
	system     string // the folders searched when none was chosen
	separators string // the characters that make a file name a path
}

// cudaRuntime is one of pip's CUDA runtime packages: the folder under site-packages and the
// runtime library in it.
type cudaRuntime struct {
	major     int
	dir, file string
}
