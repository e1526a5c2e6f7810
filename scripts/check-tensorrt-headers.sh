#!/usr/bin/env bash
# check-tensorrt-headers.sh: compile-check trtbuild's TensorRT backend against a folder of
# TensorRT's public headers, without TensorRT's libraries or a GPU.
#
# Usage: scripts/check-tensorrt-headers.sh TENSORRT_INCLUDE_DIR [CUDA_INCLUDE_DIR]
#
#   TENSORRT_INCLUDE_DIR  holds NvInfer.h, NvOnnxParser.h, ... (a TensorRT install's include/,
#                         or include/ of the NVIDIA/TensorRT repository at a release tag, for
#                         example: git archive v11.1 include | tar -x -C /tmp/trt-11.1)
#   CUDA_INCLUDE_DIR      holds cuda_runtime_api.h and cuda.h (optional; also taken from
#                         $CUDA_HOME/include or /usr/local/cuda/include). Without one, the script
#                         writes stand-ins that declare only the CUDA runtime names TensorRT's
#                         headers use and the driver API names the backend calls, with cuda.h's
#                         types, values and versioned symbol names. They are good for compiling,
#                         never for linking.
#
# It runs, with warnings as errors:
#   1. $CXX -std=c++17 -fsyntax-only -Wall -Wextra -Werror on each internal/cgo/tensorrt_*.cpp
#      of the backend, with TensorRT's and CUDA's folders given as -isystem (their own warnings
#      are not trtbuild's); then the same for Windows (_WIN32) with MinGW-w64's
#      x86_64-w64-mingw32-g++-posix, and go vet -tags tensorrt ./internal/cgo/ cross-compiled
#      for GOOS=windows (scripts/wine.sh env), which compiles all of the package's C++ for
#      Windows at -O2 with warnings as errors; skipped, saying so, without MinGW-w64;
#   2. go vet -tags tensorrt ./internal/cgo/, which type-checks the cgo package with the tag and
#      compiles all of its C++ (the shim included) at -O2 with the same warnings as errors;
#      nothing is linked, so no library is needed; then go test -tags tensorrt -run '^TestShim'
#      ./internal/cgo/, which loads stand-in libraries of the compiled-for version and checks
#      that the shim refuses bad options exactly as the simulated builder does; go test
#      -tags tensorrt -run '^TestTargetCheckLoadsTensorRT$' ./internal/matrix/, in which a
#      matrix cell's target check runs the probe against stand-ins and the cell reaches the
#      builder; and go test -tags tensorrt -run '^(TestLoaderLayoutsReachTheBuilder|
#      TestCheckBuilderNamesTheMissingResource|TestOlderMinorsWithStandIns)$' ./cmd/trtbuild/,
#      in which `version --check-builder` and a build, with no LD_LIBRARY_PATH set, reach
#      createInferBuilder with the builder resource loaded by bare file name for --tensorrt-lib,
#      TENSORRT_ROOT and a pip virtual environment, a folder without the resource fails the
#      check with its hint, and stand-ins of older minors are driven or refused as internal/trt's
#      table of older minors says for these headers (options needing a newer minor included);
#   3. go build -tags tensorrt ./cmd/trtbuild, with the headers alone: TensorRT and CUDA are
#      loaded at run time, so the binary must link without their libraries and must not need
#      them (no libnvinfer, libnvonnxparser, libnvinfer_plugin, libcudart or libcuda among its
#      NEEDED entries); then that binary must run --help, version (exit 0, saying what it found or
#      where it searched), inspect, convert and a --backend sim build without TensorRT, and a
#      --backend tensorrt build pointed at an empty folder must fail with exit 2, the places
#      searched, and no engine file;
#   4. the same binary against stand-in libraries (small shared libraries compiled here that
#      export TensorRT's and the CUDA driver's entry points, with a builder factory that returns
#      null; no CUDA runtime): version must report them, and a build must load them and fail
#      with "could not create a builder" -- the whole path from the flag to
#      createInferBuilder_INTERNAL, without a GPU.
# Nothing is written to the repository. Exit status 0 means all passed.
set -euo pipefail

die() {
	echo "check-tensorrt-headers: $*" >&2
	exit 2
}

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 TENSORRT_INCLUDE_DIR [CUDA_INCLUDE_DIR]"
trt_inc=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such folder"
[[ -f $trt_inc/NvInfer.h ]] || die "$trt_inc has no NvInfer.h; give the folder that holds TensorRT's headers"
[[ -f $trt_inc/NvOnnxParser.h ]] || die "$trt_inc has no NvOnnxParser.h; give the folder that holds TensorRT's headers"

repo=$(cd "$(dirname "$0")/.." && pwd)
shim_files=()
for f in "$repo"/internal/cgo/tensorrt_*.cpp; do
	[[ $(basename "$f") == tensorrt_absent.cpp ]] && continue
	shim_files+=("$f")
done
[[ ${#shim_files[@]} -gt 0 ]] || die "no internal/cgo/tensorrt_*.cpp; run from a trtbuild checkout"
cxx=${CXX:-g++}
command -v "$cxx" >/dev/null || die "no C++ compiler ($cxx); set CXX"
command -v go >/dev/null || die "no go on PATH"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cuda_inc=${2:-}
if [[ -z $cuda_inc ]]; then
	for dir in ${CUDA_HOME:+"$CUDA_HOME/include"} /usr/local/cuda/include /usr/include; do
		if [[ -f $dir/cuda_runtime_api.h && -f $dir/cuda.h ]]; then
			cuda_inc=$dir
			break
		fi
	done
fi
if [[ -z $cuda_inc ]]; then
	cuda_inc=$work/cuda-standin
	mkdir -p "$cuda_inc"
	cat >"$cuda_inc/cuda_runtime_api.h" <<'STANDIN'
/*
 * Compile-check stand-in for the CUDA runtime header, written by
 * scripts/check-tensorrt-headers.sh because no CUDA toolkit was found. It declares only the
 * names that TensorRT's public headers and internal/cgo/tensorrt_*.cpp use, with the types
 * and values of the real header. It is never used to build a binary.
 */
#ifndef TRTBUILD_CUDA_RUNTIME_API_STANDIN_H
#define TRTBUILD_CUDA_RUNTIME_API_STANDIN_H
#ifdef __cplusplus
extern "C" {
#endif
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101
};
typedef enum cudaError cudaError_t;
#define CUDART_VERSION 13000
typedef enum cudaDeviceAttr {
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76
} cudaDeviceAttr;
struct cudaDeviceProp {
    char name[256];
    int major;
    int minor;
    int multiProcessorCount;
};
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device);
cudaError_t cudaGetLastError(void);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaRuntimeGetVersion(int* runtimeVersion);
#ifdef __cplusplus
}
#endif
#endif
STANDIN
	cat >"$cuda_inc/cuda.h" <<'STANDIN'
/*
 * Compile-check stand-in for the CUDA driver API header, written by
 * scripts/check-tensorrt-headers.sh because no CUDA toolkit was found. It declares only the
 * driver API the TensorRT backend calls, with the types, values and versioned names of the
 * real cuda.h (CUDA 12 and 13 alike). It is never used to build a binary.
 */
#ifndef TRTBUILD_CUDA_H_STANDIN_H
#define TRTBUILD_CUDA_H_STANDIN_H
#define CUDA_VERSION 13000
#define CUDAAPI
#define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2
#define cuStreamDestroy cuStreamDestroy_v2
#ifdef __cplusplus
extern "C" {
#endif
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_NO_DEVICE = 100,
                              CUDA_ERROR_INVALID_DEVICE = 101 } CUresult;
typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
} CUdevice_attribute;
typedef enum CUstream_flags_enum { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 } CUstream_flags;
CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr);
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDriverGetVersion(int* driverVersion);
CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal);
CUresult CUDAAPI cuDeviceGetCount(int* count);
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev);
CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx);
CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags);
CUresult CUDAAPI cuStreamDestroy(CUstream hStream);
#ifdef __cplusplus
}
#endif
#endif
STANDIN
	cuda_note="stand-in cuda_runtime_api.h and cuda.h"
else
	cuda_note="$cuda_inc/cuda_runtime_api.h and cuda.h"
fi

version=$(awk '/#define (TRT|NV_TENSORRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? +[0-9]/ {v[$2]=$3}
	END {
		if ("TRT_MAJOR_ENTERPRISE" in v) print v["TRT_MAJOR_ENTERPRISE"] "." v["TRT_MINOR_ENTERPRISE"] "." v["TRT_PATCH_ENTERPRISE"];
		else print v["NV_TENSORRT_MAJOR"] "." v["NV_TENSORRT_MINOR"] "." v["NV_TENSORRT_PATCH"]
	}' "$trt_inc/NvInferVersion.h")
echo "TensorRT headers: $trt_inc (TensorRT $version)"
echo "CUDA headers:     $cuda_note"
echo "C++ compiler:     $("$cxx" --version | head -n1)"
echo "Go:               $(go version)"

# -isystem: NVIDIA's headers are checked as system headers, so their own deprecation warnings
# (for example IPluginV2 in 11.x) do not count; warnings in trtbuild's code do.
flags=(-isystem "$trt_inc" -isystem "$cuda_inc")

for f in "${shim_files[@]}"; do
	echo "--- $cxx -std=c++17 -fsyntax-only -Wall -Wextra -Werror internal/cgo/$(basename "$f")"
	"$cxx" -std=c++17 -fsyntax-only -Wall -Wextra -Werror "${flags[@]}" -I"$repo/internal/cgo" "$f"
done

mingw=x86_64-w64-mingw32-g++-posix
if command -v "$mingw" >/dev/null; then
	for f in "${shim_files[@]}"; do
		echo "--- $mingw -std=c++17 -fsyntax-only -Wall -Wextra -Werror internal/cgo/$(basename "$f") (Windows)"
		"$mingw" -std=c++17 -fsyntax-only -Wall -Wextra -Werror "${flags[@]}" -I"$repo/internal/cgo" "$f"
	done
	echo "--- GOOS=windows go vet -tags tensorrt ./internal/cgo/ (MinGW-w64)"
	(
		cd "$repo"
		eval "$("$repo/scripts/wine.sh" env)"
		CGO_CPPFLAGS="${flags[*]}" CGO_CXXFLAGS="-O2 -g -Wall -Wextra -Werror" go vet -tags tensorrt ./internal/cgo/
	)
else
	echo "--- skipped the Windows checks: no $mingw (apt-get install g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix)"
fi

echo "--- go vet -tags tensorrt ./internal/cgo/"
(
	cd "$repo"
	# vet compiles the package's C++ to type-check it: at -O2, where GCC finds more (string
	# truncation, for one). CGO_CXXFLAGS reaches only C++, so -Werror does not touch the C of
	# runtime/cgo; CGO_CFLAGS keeps Go's default for that reason.
	CGO_ENABLED=1 CGO_CPPFLAGS="${flags[*]}" CGO_CXXFLAGS="-O2 -g -Wall -Wextra -Werror" \
		go vet -tags tensorrt ./internal/cgo/
)

echo "--- go test -tags tensorrt -run '^TestShim' ./internal/cgo/ (the shim's option checks, against stand-ins)"
(
	cd "$repo"
	CGO_ENABLED=1 CGO_CPPFLAGS="${flags[*]}" go test -tags tensorrt -count=1 -run '^TestShim' ./internal/cgo/
)

echo "--- go test -tags tensorrt -run '^TestTargetCheckLoadsTensorRT' ./internal/matrix/ (a matrix cell's target check through the probe, against stand-ins)"
(
	cd "$repo"
	CGO_ENABLED=1 CGO_CPPFLAGS="${flags[*]}" go test -tags tensorrt -count=1 -v -run '^TestTargetCheckLoadsTensorRT$' ./internal/matrix/ | grep -E '^(---|ok|FAIL)|stand-in'
)

echo "--- go test -tags tensorrt -run '^(TestLoaderLayoutsReachTheBuilder|TestCheckBuilderNamesTheMissingResource|TestOlderMinorsWithStandIns)$' ./cmd/trtbuild/ (the builder resource by bare name, for each install layout, and older minors, against stand-ins)"
(
	cd "$repo"
	CGO_ENABLED=1 CGO_CPPFLAGS="${flags[*]}" go test -tags tensorrt -count=1 -v \
		-run '^(TestLoaderLayoutsReachTheBuilder|TestCheckBuilderNamesTheMissingResource|TestOlderMinorsWithStandIns)$' ./cmd/trtbuild/ | grep -E '^\s*(---|ok|FAIL)|_test\.go'
)

echo "--- go build -tags tensorrt ./cmd/trtbuild (headers only, nothing of TensorRT or CUDA linked)"
bin=$work/trtbuild
(
	cd "$repo"
	CGO_ENABLED=1 CGO_CPPFLAGS="${flags[*]}" go build -tags tensorrt -o "$bin" ./cmd/trtbuild
)
needed=$(readelf -d "$bin" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | tr '\n' ' ')
echo "NEEDED: $needed"
if grep -Eq 'libnvinfer|libnvonnxparser|libcudart|libcuda' <<<"$needed"; then
	die "the -tags tensorrt binary links TensorRT or CUDA ($needed); they must be loaded at run time"
fi

model=$repo/testdata/models/convnet.onnx
[[ -f $model ]] || die "$model is missing"
empty=$work/empty-lib
mkdir -p "$empty"
expect() { # expect CODE PATTERN -- command...: run it, check the exit code and that the output matches
	local want=$1 pattern=$2
	shift 3
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	if [[ $rc -ne $want ]]; then
		printf '%s\n' "$out" >&2
		die "$* exited $rc, want $want"
	fi
	if ! grep -Eq -- "$pattern" <<<"$out"; then
		printf '%s\n' "$out" >&2
		die "$* printed no line matching: $pattern"
	fi
	echo "ok ($rc): $(basename "$1") ${*:2}"
}
expect 0 'Usage:' -- "$bin" --help
expect 0 '^tensorrt +compiled for [0-9]+\.[0-9]+\.[0-9]+' -- "$bin" version
expect 0 'not found: .*searched: --tensorrt-lib '"$empty"'/libnvinfer\.so\.' -- "$bin" version --tensorrt-lib "$empty"
expect 0 'IR version' -- "$bin" inspect "$model"
expect 0 'float16' -- "$bin" convert --fp16 -o "$work/convnet-fp16.onnx" "$model"
expect 0 'Built' -- "$bin" --backend sim --sim-speed 50 --no-timing-cache --progress plain -o "$work/sim.engine" "$model"
expect 2 'cannot use TensorRT: .*searched: --tensorrt-lib '"$empty"'/libnvinfer\.so\.[0-9]+: .*--backend sim' -- \
	"$bin" --backend tensorrt --tensorrt-lib "$empty" --no-timing-cache --progress plain -o "$work/trt.engine" "$model"
expect 2 'cannot use TensorRT' -- env TRTBUILD_TENSORRT_LIB="$empty" "$bin" --backend auto --no-timing-cache --progress plain -o "$work/trt.engine" "$model"
[[ ! -e $work/trt.engine ]] || die "a failed TensorRT build left $work/trt.engine behind"

echo "--- stand-in libraries: the loader and the backend up to createInferBuilder_INTERNAL"
major=${version%%.*}
standin=$work/standin
mkdir -p "$standin"
# The stand-in libnvinfer logs an error through the logger it is given and returns no builder;
# the stand-in libnvinfer_plugin logs a line through its logger: both must reach the build's
# log through trtbuild's one process logger, and the error must be quoted in the failure.
cat >"$standin/infer.cpp" <<STANDIN
#include <NvInfer.h>
extern "C" int32_t getInferLibVersion() noexcept { return ${major}0000 + 9900; }
extern "C" int32_t getInferLibBuildVersion() noexcept { return 7; }
extern "C" void* createInferBuilder_INTERNAL(void* logger, int32_t) noexcept {
    static_cast<nvinfer1::ILogger*>(logger)->log(nvinfer1::ILogger::Severity::kERROR, "stand-in libnvinfer: no builder here");
    return nullptr;
}
STANDIN
echo 'extern "C" void* createNvOnnxParser_INTERNAL(void*, void*, int) noexcept { return nullptr; }' >"$standin/parser.cpp"
cat >"$standin/plugin.cpp" <<'STANDIN'
#include <NvInfer.h>
extern "C" bool initLibNvInferPlugins(void* logger, const char*) {
    static_cast<nvinfer1::ILogger*>(logger)->log(nvinfer1::ILogger::Severity::kWARNING, "stand-in libnvinfer_plugin: registered nothing");
    return true;
}
STANDIN
cat >"$standin/driver.cpp" <<'STANDIN'
#include <stdio.h>
extern "C" {
static bool inited = false;
int cuInit(unsigned int) { inited = true; return 0; }
int cuDriverGetVersion(int* v) { *v = 13000; return 0; }
int cuDeviceGetCount(int* n) { if (!inited) return 3; *n = 1; return 0; }
int cuDeviceGet(int* d, int ordinal) { if (!inited) return 3; if (ordinal != 0) return 101; *d = 0; return 0; }
int cuDeviceGetName(char* out, int len, int) { if (!inited) return 3; snprintf(out, (size_t)len, "Stand-in GPU"); return 0; }
int cuDeviceGetAttribute(int* v, int attr, int) { if (!inited) return 3; *v = attr == 75 ? 9 : attr == 16 ? 132 : 0; return 0; }
static char primary;
int cuDevicePrimaryCtxRetain(void** ctx, int) { *ctx = &primary; return 0; }
int cuDevicePrimaryCtxRelease_v2(int) { return 0; }
int cuCtxSetCurrent(void*) { return 0; }
int cuGetErrorString(int, const char** text) { *text = "stand-in error"; return 0; }
int cuStreamCreate(void** s, unsigned int) { static char stream; *s = &stream; return 0; }
int cuStreamDestroy_v2(void*) { return 0; }
}
STANDIN
for pair in infer:libnvinfer.so.$major parser:libnvonnxparser.so.$major plugin:libnvinfer_plugin.so.$major driver:libcuda.so.1; do
	"$cxx" -std=c++17 -shared -fPIC "${flags[@]}" -o "$standin/${pair#*:}" "$standin/${pair%%:*}.cpp"
done
expect 0 "found $major\.99\.0\.7 at $standin/libnvinfer\.so\.$major" -- "$bin" version --tensorrt-lib "$standin"
expect 0 'gpu +0: Stand-in GPU, compute capability 9\.0, 132 SMs' -- "$bin" version --tensorrt-lib "$standin"
expect 0 "cuda +driver 13\.0 at $standin/libcuda\.so\.1" -- "$bin" version --tensorrt-lib "$standin"
expect 1 'TensorRT could not create a builder: stand-in libnvinfer: no builder here' -- \
	"$bin" --backend tensorrt --tensorrt-lib "$standin" --no-timing-cache --progress plain -o "$work/trt.engine" "$model"
expect 1 'WARNING: stand-in libnvinfer_plugin: registered nothing' -- \
	"$bin" --backend tensorrt --tensorrt-lib "$standin" --no-timing-cache --progress plain -o "$work/trt.engine" "$model"
expect 1 'INFO: loaded libnvinfer_plugin from '"$standin"'/libnvinfer_plugin\.so\.' -- \
	"$bin" --backend tensorrt --tensorrt-lib "$standin" -v --no-timing-cache --progress plain -o "$work/trt.engine" "$model"
out=$("$bin" --backend tensorrt --tensorrt-lib "$standin" -v --no-builtin-plugins --no-timing-cache --progress plain -o "$work/trt.engine" "$model" 2>&1) || true
if ! grep -q 'INFO: loaded libnvonnxparser' <<<"$out" || grep -q 'libnvinfer_plugin' <<<"$out"; then
	printf '%s\n' "$out" >&2
	die "--no-builtin-plugins still loaded libnvinfer_plugin"
fi
echo "ok: --no-builtin-plugins loads no libnvinfer_plugin"
[[ ! -e $work/trt.engine ]] || die "a failed TensorRT build left $work/trt.engine behind"

echo "ok: TensorRT $version headers"
