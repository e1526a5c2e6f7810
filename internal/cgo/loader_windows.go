package cgo

/*
#include <stdlib.h>
#include "trtb_loader.h"
*/
import "C"

import (
	"fmt"
	"path/filepath"
	"unsafe"

	"github.com/trtbuild/trtbuild/internal/trt"
)

// pathSeparators are the characters that make a DLL name a path (C:\x\nvinfer_10.dll,
// C:nvinfer_10.dll, \\server\share\...), not a bare name that LoadLibraryExW looks up.
const pathSeparators = `\/:`

// addLibraryDirs adds loc's folders (trt.Location.LibraryDirs: the TensorRT folder, the lean
// runtime's, the CUDA runtime's) to this process's DLL search, made absolute, before anything
// of TensorRT is loaded: TensorRT loads its builder resources (nvinfer_builder_resource_*.dll)
// and the lean runtime by bare name, and Windows, unlike Linux, has no library path a parent
// could hand over that is also safe. The first call also switches the process to the default
// DLL folders (SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)): from then on a DLL
// loaded by bare name, by TensorRT too, comes from trtbuild.exe's folder, the folders added
// here or System32, and never from the working folder or a folder on PATH, which another user
// may be able to write.
func addLibraryDirs(loc trt.Location) error {
	for _, dir := range loc.LibraryDirs() {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("TensorRT folder %s: %w", dir, err)
		}
		if err := AddLibraryDir(abs); err != nil {
			return err
		}
	}
	return nil
}

// AddLibraryDir adds the absolute folder dir to this process's DLL search (trtb_library_add_dir:
// AddDllDirectory, after SetDefaultDllDirectories on the first call). The error is an *Error
// with CodeUnavailable and Windows' text.
func AddLibraryDir(dir string) error {
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	var st C.trtb_status
	if C.trtb_library_add_dir(cdir, &st) != C.TRTB_OK {
		return statusError(&st)
	}
	return nil
}
