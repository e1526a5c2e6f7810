#!/usr/bin/env bash
# check/tensorrt-headers.sh: compile-check trtbuild's TensorRT shim against TensorRT headers other
# than the ones it is built with, without TensorRT's libraries or a GPU.
#
# Every trtbuild is built with the shim compiled against the vendored headers of TensorRT 10.16
# and 11.1 (third_party/tensorrt); `go build` needs nothing else. This script checks that the
# shim also compiles, with warnings as errors, against the headers of another release of either
# major: the older minors (whose conditionals, TRTB_HAS_* in internal/cgo/shim/tensorrt_shim.hpp,
# must hold) or a release newer than the vendored one (before it is vendored).
#
# Usage:
#   scripts/check/tensorrt-headers.sh INCLUDE_DIR [CUDA_INCLUDE_DIR]
#   scripts/check/tensorrt-headers.sh --tags REPO [TAG...]
#
#   INCLUDE_DIR       holds NvInfer.h, NvOnnxParser.h, ... (a TensorRT install's include/, or
#                     include/ of the NVIDIA/TensorRT repository at a tag: git archive v10.13.3
#                     include | tar -x -C /tmp/trt-10.13.3)
#   CUDA_INCLUDE_DIR  CUDA's own cuda_runtime_api.h and cuda.h, to check trtbuild's declarations
#                     (internal/cgo/cudadecl) and the loader's signatures against the real
#                     ones; without it the declarations are used
#   --tags REPO       a clone of NVIDIA/TensorRT (a bare one will do): every tag of majors 10
#                     and 11 (or the TAGs given) is checked, one after the other
#
# For each, the shim of the headers' major (internal/cgo/tensorrt10.cpp or tensorrt11.cpp) is
# compiled with -fsyntax-only -Wall -Wextra -Werror by $CXX (g++), and for Windows by MinGW-w64's
# x86_64-w64-mingw32-g++-posix when it is installed, in a copy of the tree whose vendored
# headers of that major are the ones given. Nothing is written to the repository. Exit status 0
# means every check passed.
set -euo pipefail

die() {
	echo "check-tensorrt-headers: $*" >&2
	exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
cxx=${CXX:-g++}
command -v "$cxx" >/dev/null || die "no C++ compiler ($cxx); set CXX"
mingw=x86_64-w64-mingw32-g++-posix
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# version_of DIR: the TensorRT version NvInferVersion.h in DIR declares, major.minor.patch.
version_of() {
	awk '/#define (TRT|NV_TENSORRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? +[0-9]/ {v[$2]=$3}
	END {
		if ("TRT_MAJOR_ENTERPRISE" in v) print v["TRT_MAJOR_ENTERPRISE"] "." v["TRT_MINOR_ENTERPRISE"] "." v["TRT_PATCH_ENTERPRISE"];
		else print v["NV_TENSORRT_MAJOR"] "." v["NV_TENSORRT_MINOR"] "." v["NV_TENSORRT_PATCH"]
	}' "$1/NvInferVersion.h"
}

# check INCLUDE_DIR [CUDA_INCLUDE_DIR]: compile the shim of the headers' major against them.
check() {
	local inc=$1 cuda=${2:-}
	[[ -f $inc/NvInfer.h && -f $inc/NvOnnxParser.h ]] || die "$inc has no NvInfer.h and NvOnnxParser.h; give the folder that holds TensorRT's headers"
	local version major
	version=$(version_of "$inc")
	major=${version%%.*}
	[[ $major == 10 || $major == 11 ]] || die "$inc holds TensorRT $version; the shim drives TensorRT 10 and 11"
	# A copy of the tree the shim includes from, with these headers as the vendored ones.
	local tree=$work/tree-$version
	rm -rf "$tree"
	mkdir -p "$tree/internal" "$tree/third_party/tensorrt/v$major"
	cp -R "$repo/internal/cgo" "$tree/internal/cgo"
	cp -R "$inc" "$tree/third_party/tensorrt/v$major/include"
	local includes=(-I"$tree/internal/cgo/cudadecl")
	local cuda_note="trtbuild's CUDA declarations (internal/cgo/cudadecl)"
	if [[ -n $cuda ]]; then
		[[ -f $cuda/cuda_runtime_api.h && -f $cuda/cuda.h ]] || die "$cuda has no cuda_runtime_api.h and cuda.h"
		includes=(-isystem "$cuda")
		cuda_note="CUDA's headers in $cuda"
	fi
	local tu=$tree/internal/cgo/tensorrt$major.cpp
	echo "--- TensorRT $version ($inc), $cuda_note: $cxx -std=c++17 -fsyntax-only -Wall -Wextra -Werror internal/cgo/tensorrt$major.cpp"
	"$cxx" -std=c++17 -fsyntax-only -Wall -Wextra -Werror "${includes[@]}" "$tu"
	if command -v "$mingw" >/dev/null; then
		echo "--- TensorRT $version for Windows: $mingw -std=c++17 -fsyntax-only -Wall -Wextra -Werror internal/cgo/tensorrt$major.cpp"
		"$mingw" -std=c++17 -fsyntax-only -Wall -Wextra -Werror "${includes[@]}" "$tu"
	else
		echo "--- TensorRT $version for Windows: skipped, no $mingw (apt-get install g++-mingw-w64-x86-64-posix)"
	fi
	echo "ok: TensorRT $version headers"
}

if [[ ${1:-} == --tags ]]; then
	[[ $# -ge 2 ]] || die "usage: $0 --tags REPO [TAG...]"
	tags_repo=$2
	shift 2
	git -C "$tags_repo" rev-parse --git-dir >/dev/null 2>&1 || die "$tags_repo is not a git repository; clone NVIDIA/TensorRT"
	tags=("$@")
	if [[ ${#tags[@]} -eq 0 ]]; then
		mapfile -t tags < <(git -C "$tags_repo" tag --list 'v10.*' 'v11.*' | sort -V)
	fi
	[[ ${#tags[@]} -gt 0 ]] || die "$tags_repo has no tags of TensorRT 10 or 11; fetch them"
	failed=()
	for tag in "${tags[@]}"; do
		dir=$work/headers-$tag
		mkdir -p "$dir"
		git -C "$tags_repo" archive "$tag" include | tar -x -C "$dir" || die "$tags_repo has no include/ at $tag"
		if [[ ! -f $dir/include/NvOnnxParser.h ]]; then
			# Before 10.14 the parser's header lived in the onnx-tensorrt submodule, which the
			# tag's archive does not hold: the vendored one of the same major stands in.
			major=$(version_of "$dir/include")
			major=${major%%.*}
			cp "$repo/third_party/tensorrt/v$major/include/NvOnnxParser.h" "$repo/third_party/tensorrt/v$major/include/NvOnnxConfig.h" "$dir/include/"
			echo "--- $tag has no include/NvOnnxParser.h (the onnx-tensorrt submodule held it then): the vendored v$major one stands in"
		fi
		if ! (check "$dir/include"); then
			failed+=("$tag")
		fi
	done
	if [[ ${#failed[@]} -gt 0 ]]; then
		echo "check-tensorrt-headers: the shim does not compile against ${failed[*]}" >&2
		exit 1
	fi
	echo "ok: ${#tags[@]} tags"
	exit 0
fi

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 INCLUDE_DIR [CUDA_INCLUDE_DIR], or $0 --tags REPO [TAG...]"
inc=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such folder"
check "$inc" "${2:-}"
