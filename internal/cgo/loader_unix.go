//go:build !windows

package cgo

import "github.com/trtbuild/trtbuild/internal/trt"

// pathSeparators are the characters that make a library name a path, not a bare file name
// the dynamic loader looks up itself.
const pathSeparators = "/"

// addLibraryDirs does nothing on Linux: the parent started this process with loc's folders on
// LD_LIBRARY_PATH (trt.Location.Environ), which glibc reads only when a process starts, and
// TensorRT finds its builder resources through it.
func addLibraryDirs(trt.Location) error { return nil }
