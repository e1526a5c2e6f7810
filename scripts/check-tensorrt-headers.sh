#!/usr/bin/env bash
# check-tensorrt-headers.sh: compile-check trtbuild's TensorRT backend against a folder of
# TensorRT's public headers, without TensorRT's libraries or a GPU.
#
# Usage: scripts/check-tensorrt-headers.sh TENSORRT_INCLUDE_DIR [CUDA_INCLUDE_DIR]
#
#   TENSORRT_INCLUDE_DIR  holds NvInfer.h, NvOnnxParser.h, ... (a TensorRT install's include/,
#                         or include/ of the NVIDIA/TensorRT repository at a release tag, for
#                         example: git archive v11.1 include | tar -x -C /tmp/trt-11.1)
#   CUDA_INCLUDE_DIR      holds cuda_runtime_api.h (optional; also taken from $CUDA_HOME/include
#                         or /usr/local/cuda/include). Without one, the script writes a stand-in
#                         that declares only the CUDA runtime names TensorRT's headers and the
#                         shim use. The stand-in is good for compiling, never for linking.
#
# It runs, with warnings as errors:
#   1. $CXX -std=c++17 -fsyntax-only -Wall -Wextra -Werror on each internal/cgo/tensorrt_*.cpp
#      of the backend, with TensorRT's and CUDA's folders given as -isystem (their own warnings
#      are not trtbuild's);
#   2. go vet -tags tensorrt ./internal/cgo/, which type-checks the cgo package with the tag and
#      compiles all of its C++ (the shim included) at -O2 with the same warnings as errors;
#      nothing is linked, so no library is needed.
# Nothing is written to the repository. Exit status 0 means both passed.
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
		if [[ -f $dir/cuda_runtime_api.h ]]; then
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
#ifdef __cplusplus
}
#endif
#endif
STANDIN
	cuda_note="stand-in cuda_runtime_api.h"
else
	cuda_note="$cuda_inc/cuda_runtime_api.h"
fi

version=$(awk '/#define (TRT|NV_TENSORRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? +[0-9]/ {v[$2]=$3}
	END {
		if ("TRT_MAJOR_ENTERPRISE" in v) print v["TRT_MAJOR_ENTERPRISE"] "." v["TRT_MINOR_ENTERPRISE"] "." v["TRT_PATCH_ENTERPRISE"];
		else print v["NV_TENSORRT_MAJOR"] "." v["NV_TENSORRT_MINOR"] "." v["NV_TENSORRT_PATCH"]
	}' "$trt_inc/NvInferVersion.h")
echo "TensorRT headers: $trt_inc (TensorRT $version)"
echo "CUDA runtime:     $cuda_note"
echo "C++ compiler:     $("$cxx" --version | head -n1)"
echo "Go:               $(go version)"

# -isystem: NVIDIA's headers are checked as system headers, so their own deprecation warnings
# (for example IPluginV2 in 11.x) do not count; warnings in trtbuild's code do.
flags=(-isystem "$trt_inc" -isystem "$cuda_inc")

for f in "${shim_files[@]}"; do
	echo "--- $cxx -std=c++17 -fsyntax-only -Wall -Wextra -Werror internal/cgo/$(basename "$f")"
	"$cxx" -std=c++17 -fsyntax-only -Wall -Wextra -Werror "${flags[@]}" -I"$repo/internal/cgo" "$f"
done

echo "--- go vet -tags tensorrt ./internal/cgo/"
(
	cd "$repo"
	# vet compiles the package's C++ to type-check it: at -O2, where GCC finds more (string
	# truncation, for one). CGO_CXXFLAGS reaches only C++, so -Werror does not touch the C of
	# runtime/cgo; CGO_CFLAGS keeps Go's default for that reason.
	CGO_ENABLED=1 CGO_CPPFLAGS="${flags[*]}" CGO_CXXFLAGS="-O2 -g -Wall -Wextra -Werror" \
		go vet -tags tensorrt ./internal/cgo/
)
echo "ok: TensorRT $version headers"
