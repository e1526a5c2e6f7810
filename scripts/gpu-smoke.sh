#!/usr/bin/env bash
# gpu-smoke.sh: a first check of trtbuild's TensorRT backend on a machine with an NVIDIA GPU.
#
# Usage: scripts/gpu-smoke.sh [TRTBUILD]
#
#   TRTBUILD  a trtbuild binary built with -tags tensorrt (default: build one from this
#             checkout with go build -tags tensorrt, finding TensorRT through CGO_CPPFLAGS and
#             CGO_LDFLAGS, or through TENSORRT_ROOT; see docs/tensorrt.md). In the image of Dockerfile.cuda,
#             with the results kept in ./smoke:
#               docker run --rm --gpus all -v "$PWD/smoke:/smoke" -e TMPDIR=/smoke \
#                   --entrypoint /opt/trtbuild/scripts/gpu-smoke.sh trtbuild:cuda trtbuild
#
# It builds the bundled model testdata/models/convnet.onnx with --backend tensorrt and
# --progress json, checks that the build succeeds and writes an engine, then starts a second
# build, sends SIGINT after the first step event, and checks that trtbuild exits with 130 and
# leaves no engine. Everything lands in a new folder under $TMPDIR (default /tmp) that is
# kept: its trace.jsonl records the phases TensorRT really reports on this machine. Please
# attach it, with version.txt, to bug reports; the phase names differ between TensorRT
# versions and these traces are how trtbuild learns them.
#
# Exit status: 0 all checks passed, 1 a check failed, 3 inconclusive (the second build ended
# before the signal reached it; run again).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
model=$repo/testdata/models/convnet.onnx
out=$(mktemp -d "${TMPDIR:-/tmp}/trtbuild-smoke.XXXXXX")

fail() {
	echo "FAIL: $*" >&2
	echo "files: $out" >&2
	exit 1
}

[[ -f $model ]] || fail "$model is missing"

bin=${1:-}
if [[ -z $bin ]]; then
	bin=$out/trtbuild
	# With only TENSORRT_ROOT set, point cgo at it (and at CUDA_HOME, default /usr/local/cuda).
	if [[ -n ${TENSORRT_ROOT:-} && -z ${CGO_CPPFLAGS:-} ]]; then
		cuda=${CUDA_HOME:-/usr/local/cuda}
		export CGO_CPPFLAGS="-isystem $TENSORRT_ROOT/include -isystem $cuda/include"
		export CGO_LDFLAGS="-L$TENSORRT_ROOT/lib -L$cuda/lib64 -Wl,-rpath,$TENSORRT_ROOT/lib"
	fi
	echo "building $bin with -tags tensorrt"
	(cd "$repo" && go build -tags tensorrt -o "$bin" ./cmd/trtbuild) || fail "go build -tags tensorrt failed; see docs/tensorrt.md"
fi
command -v "$bin" >/dev/null 2>&1 || [[ -x $bin ]] || fail "$bin is not an executable"

echo "== version"
"$bin" version | tee "$out/version.txt" || fail "trtbuild version failed; see $out/version.txt"

# 1. A full build, recorded.
echo "== build (trace: $out/trace.jsonl)"
cp "$model" "$out/convnet.onnx"
"$bin" --backend tensorrt --progress json --verbose -o "$out/convnet.engine" "$out/convnet.onnx" \
	>"$out/trace.jsonl" 2>"$out/build.stderr"
rc=$?
[[ $rc -eq 0 ]] || fail "the build exited with $rc, want 0; see $out/build.stderr and $out/trace.jsonl"
[[ -s $out/convnet.engine ]] || fail "the build succeeded but $out/convnet.engine is missing or empty"
grep -q '"type":"phase_start"' "$out/trace.jsonl" || fail "the trace has no phase_start event; TensorRT reported no progress"
tail -n 1 "$out/trace.jsonl" | grep -q '"status":"built"' || fail "the trace does not end with a built result"
echo "ok: engine of $(wc -c <"$out/convnet.engine") bytes, $(grep -c '"type":"phase_start"' "$out/trace.jsonl") phases"

# 2. Cancel at the first step. No timing cache, so the builder has to time tactics again.
echo "== cancel (trace: $out/cancel.jsonl)"
"$bin" --backend tensorrt --progress json --no-timing-cache -o "$out/cancel.engine" "$out/convnet.onnx" \
	>"$out/cancel.jsonl" 2>"$out/cancel.stderr" &
pid=$!
signalled=0
for _ in $(seq 1 6000); do # up to 10 minutes
	if ! kill -0 "$pid" 2>/dev/null; then
		break
	fi
	if grep -q '"type":"step"' "$out/cancel.jsonl" 2>/dev/null; then
		kill -INT "$pid"
		signalled=1
		break
	fi
	sleep 0.1
done
wait "$pid"
rc=$?
if [[ $signalled -eq 0 ]]; then
	if [[ $rc -eq 0 ]]; then
		echo "INCONCLUSIVE: the second build ended before a step event could be seen; run again" >&2
		exit 3
	fi
	fail "the second build exited with $rc before reporting a step; see $out/cancel.stderr"
fi
if [[ $rc -eq 0 ]] && tail -n 1 "$out/cancel.jsonl" | grep -q '"status":"built"'; then
	echo "INCONCLUSIVE: the second build finished although SIGINT was sent at its first step: the" >&2
	echo "signal came after the builder's last step, or the cancel was ignored; run again, and report" >&2
	echo "it with $out/cancel.jsonl if it happens every time" >&2
	exit 3
fi
[[ $rc -eq 130 ]] || fail "after SIGINT trtbuild exited with $rc, want 130; see $out/cancel.stderr"
[[ ! -e $out/cancel.engine ]] || fail "a cancelled build left $out/cancel.engine behind"
tail -n 1 "$out/cancel.jsonl" | grep -q '"status":"cancelled"' || fail "the cancel trace does not end with a cancelled result"
echo "ok: cancelled with exit status 130, no engine written"

echo
echo "All checks passed. The progress trace of this machine is:"
echo "    $out/trace.jsonl"
echo "Please attach it, with $out/version.txt, to bug reports and to the issue that collects"
echo "TensorRT phase traces: it shows the phases your TensorRT version really reports."
