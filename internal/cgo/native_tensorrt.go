//go:build tensorrt

package cgo

// The TensorRT backend (tensorrt_*.cpp) is compiled only with the build tag "tensorrt", against
// TensorRT's and CUDA's public headers, whose folders come from the environment: CGO_CPPFLAGS
// holds them as -isystem (so their own deprecation warnings stay quiet); see docs/tensorrt.md.
//
// Nothing is linked: no -lnvinfer, -lnvonnxparser, -lnvinfer_plugin or -lcudart. The worker
// loads those libraries at run time (loader.go, trtb_loader.h) and the backend calls TensorRT
// and CUDA only through the entry points it resolved (tensorrt_entry.cpp). So the binary starts
// and runs --help, version, inspect, convert and --backend sim without TensorRT, and a missing
// TensorRT, or one of another major version, is a one-line error of the build that names where
// it was searched, not a loader failure before main.
