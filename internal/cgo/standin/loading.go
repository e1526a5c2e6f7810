package standin

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Environment variables the stand-ins below read; a test sets them for the process that loads
// them (they are inherited through the worker's and the probe's environment).
const (
	// EnvLog names a file the stand-ins append one line to for each thing they did
	// ("builder resource libnvinfer_builder_resource_sm90.so.10.16.0 loaded", "builder
	// deleted", "stream created: non-blocking, context current"), so a test can see it.
	EnvLog = "TRTBUILD_STANDIN_LOG"
)

// BuilderResourceFile names TensorRT's builder resource for GPU architecture sm (86 for
// sm_86) of TensorRT version (NV_TENSORRT_VERSION style), as libnvinfer opens it at
// createInferBuilder: libnvinfer_builder_resource_sm86.so.10.16.0.
func BuilderResourceFile(version, sm int) string {
	return fmt.Sprintf("libnvinfer_builder_resource_sm%d.so.%d.%d.%d", sm, version/10000, version/100%100, version%100)
}

// loggerPrelude declares the logger the stand-ins call: nvinfer1::ILogger with TensorRT's
// headers, else a class of TensorRT 10's ILogger layout (log is its first virtual; the
// trtbench hook of internal/cgo hands over one of that layout).
const loggerPrelude = `#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#ifdef TRTBUILD_STANDIN_HEADERS
#include <NvInfer.h>
using StandinLogger = nvinfer1::ILogger;
static void standin_error(void* logger, const std::string& msg) {
    static_cast<StandinLogger*>(logger)->log(nvinfer1::ILogger::Severity::kERROR, msg.c_str());
}
#else
struct StandinLogger {
    virtual void log(int32_t severity, const char* msg) noexcept = 0;
    virtual ~StandinLogger() = default;
};
static void standin_error(void* logger, const std::string& msg) {
    static_cast<StandinLogger*>(logger)->log(1, msg.c_str());  // Severity::kERROR is 1
}
#endif
static void standin_note(const std::string& line) {
    const char* path = getenv("` + EnvLog + `");
    if (path == nullptr || path[0] == '\0') return;
    FILE* f = fopen(path, "ab");  // binary: one \n a line on Windows too
    if (f == nullptr) return;
    fprintf(f, "%s\n", line.c_str());
    fclose(f);
}
`

// BuilderResource is the stand-in of one builder resource library (it only has to load).
func BuilderResource(version, sm int) Lib {
	return Lib{File: BuilderResourceFile(version, sm), Src: "extern \"C\" int trtbuild_standin_builder_resource() { return 1; }\n"}
}

// ParserVersionSrc is a libnvonnxparser that also exports getNvOnnxParserVersion, answering
// version (major*10000+minor*100+patch; the real one answers NV_ONNX_PARSER_VERSION).
func ParserVersionSrc(version int) string {
	return ParserSrc + fmt.Sprintf("extern \"C\" int getNvOnnxParserVersion() noexcept { return %d; }\n", version)
}

// GPU is one GPU of a stand-in CUDA driver (Drivers): its name (CUDA names a MIG slice "NVIDIA
// A100-SXM4-40GB MIG 1g.5gb"), compute capability and multiprocessor count.
type GPU struct {
	Name             string
	CCMajor, CCMinor int
	SMs              int
}

// Driver is a CUDA driver, libcuda.so.1, with one GPU of that name, compute capability and
// multiprocessor count (Drivers).
func Driver(name string, ccMajor, ccMinor, sms int) Lib {
	return Drivers(GPU{Name: name, CCMajor: ccMajor, CCMinor: ccMinor, SMs: sms})
}

// Drivers is a CUDA driver, libcuda.so.1, with gpus as devices 0, 1, ... (a server whose GPUs
// are not all of one type), driver version 13.0. It exports the driver API functions the
// backend resolves, under the names cuda.h maps them to (cuDevicePrimaryCtxRelease_v2,
// cuStreamDestroy_v2), refuses device calls before cuInit, for a device it does not have and
// for a stream without a current context, as the real driver does, and notes streams and
// contexts in EnvLog.
func Drivers(gpus ...GPU) Lib {
	var table strings.Builder
	for _, g := range gpus {
		fmt.Fprintf(&table, "    {%s, %d, %d, %d},\n", strconv.Quote(g.Name), g.CCMajor, g.CCMinor, g.SMs)
	}
	src := loggerPrelude + fmt.Sprintf(`
struct standin_gpu { const char* name; int cc_major, cc_minor, sms; };
static const standin_gpu gpus[] = {
%s};
static const int ngpus = %d;
static bool inited = false;
static thread_local void* current = nullptr;
static int retained = 0;
static char primary[%[2]d];  // each device's primary context
extern "C" {
int cuInit(unsigned int) { inited = true; return 0; }
int cuDriverGetVersion(int* v) { *v = 13000; return 0; }
int cuDeviceGetCount(int* n) { if (!inited) return 3; *n = ngpus; return 0; }
int cuDeviceGet(int* d, int ordinal) { if (!inited) return 3; if (ordinal < 0 || ordinal >= ngpus) return 101; *d = ordinal; return 0; }
int cuDeviceGetName(char* out, int len, int d) {
    if (!inited) return 3;
    if (d < 0 || d >= ngpus) return 101;
    snprintf(out, (size_t)len, "%%s", gpus[d].name);
    return 0;
}
int cuDeviceGetAttribute(int* v, int attr, int d) {
    if (!inited) return 3;
    if (d < 0 || d >= ngpus) return 101;
    switch (attr) {
        case 75: *v = gpus[d].cc_major; return 0;
        case 76: *v = gpus[d].cc_minor; return 0;
        case 16: *v = gpus[d].sms; return 0;
    }
    return 1;
}
int cuDevicePrimaryCtxRetain(void** ctx, int d) {
    if (!inited) return 3;
    if (d < 0 || d >= ngpus) return 101;
    ++retained;
    *ctx = &primary[d];
    return 0;
}
int cuDevicePrimaryCtxRelease_v2(int d) {
    if (d < 0 || d >= ngpus || retained == 0) return 101;
    --retained;
    standin_note("primary context released");
    return 0;
}
int cuCtxSetCurrent(void* ctx) { current = ctx; return 0; }
int cuGetErrorString(int err, const char** text) {
    switch (err) {
        case 3: *text = "initialization error"; return 0;
        case 101: *text = "invalid device ordinal"; return 0;
        case 201: *text = "invalid device context"; return 0;
    }
    *text = "stand-in CUDA error";
    return 0;
}
int cuStreamCreate(void** stream, unsigned int flags) {
    if (current == nullptr) return 201;
    static char s;
    *stream = &s;
    standin_note(std::string("stream created: ") + ((flags & 1) ? "non-blocking" : "blocking"));
    return 0;
}
int cuStreamDestroy_v2(void*) { standin_note("stream destroyed"); return 0; }
}
`, table.String(), len(gpus))
	return Lib{File: "libcuda.so.1", Src: src}
}

// VirtualEnv lays out a pip install of TensorRT as `pip install tensorrt` in a virtual
// environment does: root/lib/python3.12/site-packages/tensorrt_libs/ holds libs, and
// nvidia/cu13/lib/ (the CUDA runtime's package) is there but holds no libcudart. It returns
// the tensorrt_libs folder; root is what VIRTUAL_ENV names.
func VirtualEnv(t *testing.T, root string, libs ...Lib) string {
	t.Helper()
	site := filepath.Join(root, "lib", "python3.12", "site-packages")
	if err := os.MkdirAll(filepath.Join(site, "nvidia", "cu13", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Build(t, filepath.Join(site, "tensorrt_libs"), libs...)
}

// Loading is a stand-in TensorRT of version and build (FakeTensorRT) whose libnvinfer loads
// its builder resource for sm by bare file name at createInferBuilder, as the real one does
// (the dynamic loader looks in LD_LIBRARY_PATH and its cache, never next to libnvinfer, which
// has no RUNPATH; when that fails it logs "createInferBuilder: Error Code 6: API Usage Error
// (Unable to load library: NAME: <dlerror>)" and returns null), with that resource, a parser,
// the plugins and a driver describing gpu: what a pip install, a tarball's lib/ or a
// --tensorrt-lib folder holds (the driver, in a real install, comes with the NVIDIA driver;
// here it is found through the same LD_LIBRARY_PATH as the resource). A build over it goes
// through the shim of its major to a plan.
func Loading(version, build, sm int, gpu string) []Lib {
	major := strconv.Itoa(version / 10000)
	libs := FakeTensorRT(version, build, BuilderResourceFile(version, sm), "libnvinfer.so."+major,
		"libnvonnxparser.so."+major, "libnvinfer_plugin.so."+major)
	return append(libs, BuilderResource(version, sm), Driver(gpu, sm/10, sm%10, 108))
}

// ReadLog returns the lines the stand-ins noted in the EnvLog file path ("" when none).
func ReadLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
