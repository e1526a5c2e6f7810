package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// addTensorRTLibFlag adds --tensorrt-lib, the folder the TensorRT libraries are loaded from.
func addTensorRTLibFlag(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "tensorrt-lib", "", "`DIR` holding libnvinfer.so.N, libnvonnxparser.so.N and libnvinfer_plugin.so.N (env "+
		trt.EnvLibDir+"; default: $"+trt.EnvRoot+"/lib, then the system's library search)")
}

// resolveTensorRTLib checks --tensorrt-lib (or, when it is empty, TRTBUILD_TENSORRT_LIB: the
// worker reads the variable itself, but a bad value is the user's to fix before anything
// starts) and makes it absolute. "" stays "".
func resolveTensorRTLib(dir string) (string, error) {
	from := "--tensorrt-lib"
	if dir == "" {
		if dir = os.Getenv(trt.EnvLibDir); dir == "" {
			return "", nil
		}
		from = trt.EnvLibDir
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", exitcode.Usagef("%s %s does not exist; give the folder that holds libnvinfer.so.N", from, dir)
	case err != nil:
		return "", exitcode.Usagef("%s %s cannot be read: %v", from, dir, unwrapPathError(err))
	case !st.IsDir():
		return "", exitcode.Usagef("%s %s is not a folder; give the folder that holds libnvinfer.so.N, not the file", from, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", exitcode.Usagef("%s %s: %v", from, dir, err)
	}
	return abs, nil
}
