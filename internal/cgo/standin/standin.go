// Package standin compiles stand-in shared libraries for tests: each exports the C entry
// points of one TensorRT or CUDA library (or deliberately lacks one), built with the C++
// compiler cgo uses. They need no TensorRT, CUDA or GPU. Most are a few lines that answer the
// loader; the libnvinfer of a whole stand-in TensorRT (FakeTensorRT: Loading, ShimLibs) is the
// stand-in TensorRT of internal/cgo/trtfake, over which the shim builds a plan. The tests of the
// run-time loader, the probe, a matrix's target check and the shim over a loaded TensorRT load
// them where the real libraries would be.
package standin

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/trtbuild/trtbuild/internal/trt"
)

// fileMajor finds the TensorRT major in a library's file name: libnvinfer.so.11, nvinfer_11.dll.
var fileMajor = regexp.MustCompile(`(?:\.so\.|_)(\d+)(?:\.dll)?$`)

// HeaderFlags are the compiler flags of a stand-in compiled with TensorRT's headers (Headers):
// the vendored headers of the major file names, and trtbuild's CUDA declarations, found from
// the module's root above the working folder (a test's package folder).
func HeaderFlags(file string) ([]string, error) {
	m := fileMajor.FindStringSubmatch(file)
	if m == nil {
		return nil, fmt.Errorf("stand-in %s names no TensorRT major", file)
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("no go.mod above the working folder: run the test in the module")
		}
		dir = parent
	}
	include := filepath.Join(dir, "third_party", "tensorrt", "v"+m[1], "include")
	if _, err := os.Stat(include); err != nil {
		return nil, fmt.Errorf("no vendored headers of TensorRT %s: %w", m[1], err)
	}
	return []string{"-DTRTBUILD_STANDIN_HEADERS", "-I" + include, "-I" + filepath.Join(dir, "internal", "cgo", "cudadecl")}, nil
}

// Lib is one stand-in library.
type Lib struct {
	File string // file name, e.g. libnvinfer.so.10
	Src  string // C++ source
	// Headers compiles Src with the vendored TensorRT headers of the major its File names
	// (third_party/tensorrt/vN/include, HeaderFlags) and TRTBUILD_STANDIN_HEADERS defined: a
	// stand-in that calls the logger the backend hands it must see nvinfer1::ILogger as the
	// shim of that major was compiled (TensorRT 11's ILogger has IVersionedInterface's
	// virtuals first).
	Headers bool
	// LinkMissing (Windows DLLs only) links the library against MissingImport, which is not put
	// next to it, so that it does not load.
	LinkMissing bool
	// Fake, when 10 or 11, links Src with the stand-in TensorRT of that major
	// (internal/cgo/trtfake/library.cpp, compiled once per major): a libnvinfer made by
	// FakeTensorRT.
	Fake int
}

// InferSrc is a libnvinfer exporting version (getInferLibVersion) and build
// (getInferLibBuildVersion, left out when build < 0), whose builder factory returns null.
func InferSrc(version, build int) string {
	s := fmt.Sprintf(`#include <stdint.h>
extern "C" int32_t getInferLibVersion() noexcept { return %d; }
extern "C" void* createInferBuilder_INTERNAL(void*, int32_t) noexcept { return nullptr; }
`, version)
	if build >= 0 {
		s += fmt.Sprintf("extern \"C\" int32_t getInferLibBuildVersion() noexcept { return %d; }\n", build)
	}
	return s
}

const (
	// InferNoFactorySrc is a libnvinfer without createInferBuilder_INTERNAL.
	InferNoFactorySrc = `#include <stdint.h>
extern "C" int32_t getInferLibVersion() noexcept { return 101600; }
`
	ParserSrc = `extern "C" void* createNvOnnxParser_INTERNAL(void*, void*, int) noexcept { return nullptr; }
`
	PluginSrc = `extern "C" bool initLibNvInferPlugins(void*, const char*) { return true; }
`
	// UnresolvedSrc needs a symbol nothing defines: dlopen with RTLD_NOW refuses it.
	UnresolvedSrc = `extern "C" int trtbuild_standin_nowhere();
extern "C" int getInferLibVersion() { return trtbuild_standin_nowhere(); }
extern "C" void* createInferBuilder_INTERNAL(void*, int) { return nullptr; }
`
)

// ShimVersions are the TensorRT versions (NV_TENSORRT_VERSION style) and builds of the
// vendored headers the shims are compiled against: 11.1.0.106 and 10.16.0.72. internal/cgo's
// tests check them against cgo.CompiledShims; the Windows DLLs of ShimLibs are compiled
// beforehand for these.
var ShimVersions = [][2]int{{110100, 106}, {101600, 72}}

// MinorVersions are the older minors the shims meet in the tests: the oldest each drives
// (internal/trt's table of older minors: 11.0 and 10.14) and, where there is one, the minor
// before it, which is refused (10.13.3). internal/cgo's tests check them against the table;
// the Windows DLLs of ShimLibs are compiled beforehand for these too.
var MinorVersions = [][2]int{{110000, 5}, {101400, 5}, {101303, 5}}

// ShimLibs is a whole stand-in TensorRT of version and build as this OS names its files
// (libnvinfer.so.N or nvinfer_N.dll, and the parser and plugins; FakeTensorRT, with no builder
// resource to load), and a CUDA driver with one "Stand-in GPU" of compute capability 9.0 and
// 132 SMs, in one folder.
func ShimLibs(version, build int) []Lib {
	major := version / 10000
	libs := FakeTensorRT(version, build, "", trt.FileName(trt.LibInfer, major), trt.FileName(trt.LibONNXParser, major),
		trt.FileName(trt.LibPlugin, major))
	return append(libs, Lib{File: trt.FileName(trt.LibCUDADriver, 0), Src: Driver("Stand-in GPU", 9, 0, 132).Src})
}

// Good is a whole TensorRT 10.16.0 (build 72) and a CUDA driver with one GPU.
func Good() []Lib {
	return []Lib{
		{File: "libnvinfer.so.10", Src: InferSrc(101600, 72)},
		{File: "libnvonnxparser.so.10", Src: ParserSrc},
		{File: "libnvinfer_plugin.so.10", Src: PluginSrc},
		Driver("Stand-in GPU", 9, 0, 132),
	}
}

// Set is a whole TensorRT of version trt (NV_TENSORRT_VERSION style) and build, whose builder
// factory returns null, with a CUDA driver describing one "Stand-in GPU" of compute capability
// 9.0: what a binary compiled for that TensorRT loads. No CUDA runtime: none is loaded.
func Set(trt, build int) []Lib {
	major := strconv.Itoa(trt / 10000)
	return []Lib{
		{File: "libnvinfer.so." + major, Src: InferSrc(trt, build)},
		{File: "libnvonnxparser.so." + major, Src: ParserSrc},
		{File: "libnvinfer_plugin.so." + major, Src: PluginSrc},
		Driver("Stand-in GPU", 9, 0, 132),
	}
}
