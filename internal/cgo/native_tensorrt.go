//go:build tensorrt

package cgo

// Link flags of the TensorRT backend (tensorrt_*.cpp), used only with the build tag
// "tensorrt". Where the headers and libraries live comes from the environment, never from
// this file: CGO_CPPFLAGS holds the include folders of TensorRT and CUDA (as -isystem, so
// their own deprecation warnings stay quiet) and CGO_LDFLAGS their library folders; see
// docs/tensorrt.md. libnvinfer and libnvonnxparser must be of the same TensorRT major version
// as the headers; the shim refuses to build with any other and says so.

/*
#cgo LDFLAGS: -lnvinfer -lnvonnxparser -lcudart -ldl
*/
import "C"
