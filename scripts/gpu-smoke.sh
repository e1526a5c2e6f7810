#!/usr/bin/env bash
# gpu-smoke.sh: a first check of trtbuild's TensorRT backend on a machine with an NVIDIA GPU.
#
# Usage: scripts/gpu-smoke.sh [TRTBUILD]
#
#   TRTBUILD  a trtbuild binary built with -tags tensorrt (default: build one from this
#             checkout; that needs only TensorRT's and CUDA's headers, found through
#             CGO_CPPFLAGS, TENSORRT_ROOT/include, or a deb install's /usr/include/<multiarch>,
#             and CUDA_HOME or /usr/local/cuda; see docs/tensorrt.md). TensorRT itself is loaded
#             at run time, as trtbuild version shows. In the image of Dockerfile.cuda, with the
#             results kept in ./smoke:
#               docker run --rm --gpus all -v "$PWD/smoke:/smoke" -e TMPDIR=/smoke \
#                   --entrypoint /opt/trtbuild/scripts/gpu-smoke.sh trtbuild:cuda trtbuild
#
# Checks:
#   1. the bundled testdata/models/convnet.onnx builds with --backend tensorrt and
#      --progress json, and writes an engine (its trace.jsonl records the phases TensorRT
#      really reports on this machine);
#   2. a build of a deep convolution network (scripts/smokemodel: 48 different Conv layers, so
#      that tactic timing lasts long enough on an H100/H200) with --timing-cache FILE gets
#      SIGINT at its first step event: trtbuild must exit 130, leave no engine, and still save
#      what TensorRT timed into FILE;
#   3. the same build again with that FILE must use the cache (cache_used in its result) and
#      build.
# Everything lands in a new folder under $TMPDIR (default /tmp) that is kept. Please attach
# it (trace.jsonl, cancel.jsonl, cached.jsonl, version.txt) to bug reports; the phase names
# differ between TensorRT versions and these traces are how trtbuild learns them.
#
# Exit status: 0 all checks passed, 1 a check failed, 3 inconclusive (the cancelled build ended
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
	# Headers only: nothing of TensorRT or CUDA is linked (it is loaded at run time).
	if [[ -z ${CGO_CPPFLAGS:-} ]]; then
		multiarch=$(gcc -print-multiarch 2>/dev/null || true)
		trt_inc=
		for d in ${TENSORRT_ROOT:+"$TENSORRT_ROOT/include"} ${multiarch:+"/usr/include/$multiarch"} /usr/include; do
			if [[ -f $d/NvInfer.h ]]; then
				trt_inc=$d
				break
			fi
		done
		cuda_inc=
		for d in ${CUDA_HOME:+"$CUDA_HOME/include"} /usr/local/cuda/include ${multiarch:+"/usr/include/$multiarch"} /usr/include; do
			if [[ -f $d/cuda_runtime_api.h ]]; then
				cuda_inc=$d
				break
			fi
		done
		[[ -n $trt_inc ]] || fail "no NvInfer.h in TENSORRT_ROOT/include, /usr/include/$multiarch or /usr/include; set CGO_CPPFLAGS or TENSORRT_ROOT"
		[[ -n $cuda_inc ]] || fail "no cuda_runtime_api.h in CUDA_HOME/include, /usr/local/cuda/include or /usr/include; set CUDA_HOME"
		export CGO_CPPFLAGS="-isystem $trt_inc -isystem $cuda_inc"
	fi
	echo "building $bin with -tags tensorrt (CGO_CPPFLAGS=$CGO_CPPFLAGS)"
	(cd "$repo" && go build -tags tensorrt -o "$bin" ./cmd/trtbuild) || fail "go build -tags tensorrt failed; see docs/tensorrt.md"
fi
command -v "$bin" >/dev/null 2>&1 || [[ -x $bin ]] || fail "$bin is not an executable"

# The model of the cancel checks: shipped in the image, else generated from this checkout.
deep=$repo/testdata/models/deepconv.onnx
if [[ ! -f $deep ]]; then
	deep=$out/deepconv.onnx
	(cd "$repo" && go run ./scripts/smokemodel -o "$deep" >/dev/null) || fail "cannot generate $deep (go run ./scripts/smokemodel)"
fi

echo "== version"
"$bin" version | tee "$out/version.txt" || fail "trtbuild version failed; see $out/version.txt"
grep -q '^tensorrt .*; found ' "$out/version.txt" || fail "trtbuild did not find TensorRT (see $out/version.txt); put its lib folder on LD_LIBRARY_PATH or pass TRTBUILD_TENSORRT_LIB"

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

# 2. Cancel at the first step, with a timing cache: what TensorRT timed until then must be saved.
cache=$out/smoke.cache
echo "== cancel with --timing-cache (trace: $out/cancel.jsonl)"
# Job control on: a background job of a script otherwise starts with SIGINT ignored, and
# trtbuild leaves an ignored SIGINT alone (as a background job should).
set -m
"$bin" --backend tensorrt --progress json --timing-cache "$cache" -o "$out/cancel.engine" "$deep" \
	>"$out/cancel.jsonl" 2>"$out/cancel.stderr" &
pid=$!
set +m
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
		echo "INCONCLUSIVE: the build of $deep ended before a step event could be seen; run again" >&2
		exit 3
	fi
	fail "the cancelled build exited with $rc before reporting a step; see $out/cancel.stderr"
fi
if [[ $rc -eq 0 ]] && tail -n 1 "$out/cancel.jsonl" | grep -q '"status":"built"'; then
	echo "INCONCLUSIVE: the build finished although SIGINT was sent at its first step: the signal" >&2
	echo "came after the builder's last step, or the cancel was ignored; run again, and report it" >&2
	echo "with $out/cancel.jsonl if it happens every time" >&2
	exit 3
fi
[[ $rc -eq 130 ]] || fail "after SIGINT trtbuild exited with $rc, want 130; see $out/cancel.stderr"
[[ ! -e $out/cancel.engine ]] || fail "a cancelled build left $out/cancel.engine behind"
tail -n 1 "$out/cancel.jsonl" | grep -q '"status":"cancelled"' || fail "the cancel trace does not end with a cancelled result"
[[ -s $cache ]] || fail "the cancelled build saved no timing cache to $cache (see $out/cancel.jsonl and $out/cancel.stderr)"
echo "ok: cancelled with exit status 130, no engine written, timing cache of $(wc -c <"$cache") bytes saved"

# 3. The same build from that cache: it must be used, and the build must succeed.
echo "== build from the saved timing cache (trace: $out/cached.jsonl)"
"$bin" --backend tensorrt --progress json --timing-cache "$cache" -o "$out/deepconv.engine" "$deep" \
	>"$out/cached.jsonl" 2>"$out/cached.stderr"
rc=$?
[[ $rc -eq 0 ]] || fail "the build from the cache exited with $rc, want 0; see $out/cached.stderr"
result=$(tail -n 1 "$out/cached.jsonl")
grep -q '"status":"built"' <<<"$result" || fail "the build from the cache did not end built: $result"
grep -q '"cache_used":true' <<<"$result" || fail "the build did not use the timing cache saved after the cancel: $result"
echo "ok: built from the cache ($(grep -o '"cache_\(hits\|misses\)":[0-9]*' <<<"$result" | tr '\n' ' '))"

echo
echo "All checks passed. The progress trace of this machine is:"
echo "    $out/trace.jsonl"
echo "Please attach it, with $out/version.txt, to bug reports and to the issue that collects"
echo "TensorRT phase traces: it shows the phases your TensorRT version really reports."
