package cgo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Stand-in shared libraries for the run-time loader's tests: each exports the C entry points
// of one TensorRT or CUDA library (or deliberately lacks one), compiled with the C++ compiler
// cgo uses. They need no TensorRT, CUDA or GPU; nothing in them builds anything.

// standIn describes one stand-in library.
type standIn struct {
	File string // file name, e.g. libnvinfer.so.10
	Src  string // C++ source
}

// inferSrc is a libnvinfer exporting version (getInferLibVersion) and build
// (getInferLibBuildVersion, left out when build < 0), whose builder factory returns null.
func inferSrc(version, build int) string {
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
	// inferNoFactorySrc is a libnvinfer without createInferBuilder_INTERNAL.
	inferNoFactorySrc = `#include <stdint.h>
extern "C" int32_t getInferLibVersion() noexcept { return 101600; }
`
	parserSrc = `extern "C" void* createNvOnnxParser_INTERNAL(void*, void*, int) noexcept { return nullptr; }
`
	pluginSrc = `extern "C" bool initLibNvInferPlugins(void*, const char*) { return true; }
`
	// cudartSrc reports one GPU named "Stand-in GPU" of compute capability 9.0.
	cudartSrc = `#include <string.h>
extern "C" {
int cudaGetDeviceCount(int* n) { *n = 1; return 0; }
int cudaSetDevice(int d) { return d == 0 ? 0 : 101; }
int cudaGetLastError() { return 0; }
const char* cudaGetErrorString(int) { return "stand-in error"; }
int cudaDeviceGetAttribute(int* v, int attr, int) { *v = attr == 75 ? 9 : 0; return 0; }
int cudaRuntimeGetVersion(int* v) { *v = %d; return 0; }
int cudaGetDeviceProperties_v2(void* p, int) { strcpy((char*)p, "Stand-in GPU"); return 0; }
}
`
	// unresolvedSrc needs a symbol nothing defines: dlopen with RTLD_NOW refuses it.
	unresolvedSrc = `extern "C" int trtbuild_standin_nowhere();
extern "C" int getInferLibVersion() { return trtbuild_standin_nowhere(); }
extern "C" void* createInferBuilder_INTERNAL(void*, int) { return nullptr; }
`
)

func cudartStandIn(major int) standIn {
	return standIn{File: fmt.Sprintf("libcudart.so.%d", major), Src: fmt.Sprintf(cudartSrc, major*1000)}
}

// goodSet is a whole TensorRT 10.16.0 (build 72) with CUDA runtime 12.
func goodSet() []standIn {
	return []standIn{
		{File: "libnvinfer.so.10", Src: inferSrc(101600, 72)},
		{File: "libnvonnxparser.so.10", Src: parserSrc},
		{File: "libnvinfer_plugin.so.10", Src: pluginSrc},
		cudartStandIn(12),
	}
}

// buildStandIns compiles libs into dir (created if need be) and returns dir. It skips the test
// when no C++ compiler is found (cgo needs one, so a machine that builds trtbuild has one).
func buildStandIns(t *testing.T, dir string, libs ...standIn) string {
	t.Helper()
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		t.Skipf("no C++ compiler (%s) to build stand-in libraries: %v", cxx, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		src := filepath.Join(dir, l.File+".cpp")
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src, []byte(l.Src), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, l.File)
		cmd := exec.Command(cxx, "-shared", "-fPIC", "-o", out, "-Wl,-soname,"+filepath.Base(l.File), src)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compiling stand-in %s: %v\n%s", l.File, err, strings.TrimSpace(string(b)))
		}
		os.Remove(src)
	}
	return dir
}
