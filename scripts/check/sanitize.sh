#!/usr/bin/env bash
# check/sanitize.sh: the TensorRT shim and the stand-in TensorRT under AddressSanitizer and
# UndefinedBehaviorSanitizer: internal/cgo's tests of the shim and whole simulated builds (built,
# cancelled, failed, the timing cache saved and merged, the stress threads), compiled with
# go test -asan and the C++ built with -fsanitize=undefined, any finding fatal.
#
# Usage: scripts/check/sanitize.sh [go test -run pattern]
set -euo pipefail
cd "$(dirname "$0")/../.."

pattern=${1:-'TestStandIn|TestShim|TestNative|TestBuild|TestCancel|TestTimingCache|TestDrain|TestTensorRTRefusals'}
export CGO_CXXFLAGS="${CGO_CXXFLAGS:-} -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
export CGO_LDFLAGS="${CGO_LDFLAGS:-} -fsanitize=undefined"
# A leak in the process's own lifetime objects (the stand-in installed once) is not a finding;
# every other report is.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Without address-space randomization where setarch can turn it off: AddressSanitizer of older
# compilers cannot map its shadow memory under the randomization newer kernels allow.
norandom=()
if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
	norandom=(setarch "$(uname -m)" -R)
fi
"${norandom[@]}" go test -asan -count=1 -run "$pattern" ./internal/cgo
