#!/usr/bin/env bash
# gpu-smoke.sh: a first check of trtbuild's TensorRT backend on a machine with an NVIDIA GPU.
#
# Usage: scripts/gpu-smoke.sh [--sim] [TRTBUILD]
#
#   TRTBUILD  the trtbuild binary to check. Default: built from this checkout when Go is
#             installed (a plain go build: the TensorRT shims are compiled against the
#             vendored headers; see docs/tensorrt.md), else the trtbuild on PATH. TensorRT
#             itself is loaded at run time, as trtbuild version shows. In the image of Dockerfile.cuda, which has no Go,
#             with the results kept in ./smoke:
#               docker run --rm --init --gpus all -v "$PWD/smoke:/smoke" -e TMPDIR=/smoke \
#                   --entrypoint /opt/trtbuild/scripts/gpu-smoke.sh trtbuild:cuda
#   --sim     run the same checks against the simulated builder (--backend sim, which writes
#             the same events), without a GPU or TensorRT: this checks the script itself, and
#             scripts/test.sh runs it so. The checks that only TensorRT can pass (TensorRT
#             found, a builder created) are skipped, and the folder is removed when all pass.
#
# Needs bash, GNU coreutils (tail --pid), grep and awk; and, unless the deep model is shipped
# beside the bundled one (testdata/models/deepconv.onnx, as in the image), Python 3 with the
# onnx package to generate it (scripts/smokemodel.py; $TRTBUILD_PYTHON picks the interpreter).
#
# Checks:
#   0. trtbuild finds TensorRT (trtbuild version) and can create a builder on the GPU
#      (trtbuild version --check-builder: this loads TensorRT's builder resource, which a
#      version check alone does not);
#   1. the bundled testdata/models/convnet.onnx builds with --progress json and a new
#      --timing-cache FILE, and the engine is one (trtbuild engine inspect reads its plan
#      header: a TensorRT plan, of the TensorRT the build loaded); its trace.jsonl records the
#      phases TensorRT really reports on this machine;
#   2. the same build again reuses that cache: the result says the cache was used, and hits
#      in it (or, where TensorRT cannot count hits, fewer new entries than the first build);
#   3. a build of a deep convolution network (scripts/smokemodel.py: 48 different Conv layers,
#      so that tactic timing lasts long enough also on an H100/H200) with another
#      --timing-cache FILE gets SIGINT after TensorRT has timed some layers (see
#      cancel_criterion below): trtbuild must exit 130, leave no engine, and save what
#      TensorRT timed into FILE without a warning;
#   4. the same build again from that FILE reads it without a warning about it (no refusal),
#      uses it when the cancelled build saved entries, and builds an engine that engine
#      inspect reads.
# Everything lands in a new folder under $TMPDIR (default /tmp) that is kept. Please attach
# it (trace.jsonl, cached.jsonl, cancel.jsonl, resume.jsonl, version.txt, builder.txt) to bug
# reports; the phase names differ between TensorRT versions and these traces are how trtbuild
# learns them.
#
# Exit status: 0 all checks passed, 1 a check failed, 2 bad arguments, 3 inconclusive (the
# cancelled build ended before the signal reached it; run again), 4 cannot run here (no
# trtbuild, or no Python with onnx to generate the deep model).
set -uo pipefail

usage() {
	sed -n '4,18p' "$0" | sed 's/^# \{0,1\}//'
}

mode=tensorrt
bin=
for arg in "$@"; do
	case $arg in
	--sim) mode=sim ;;
	-h | --help)
		usage
		exit 0
		;;
	-*)
		echo "gpu-smoke.sh: unknown option $arg; the only option is --sim (see --help)" >&2
		exit 2
		;;
	*)
		if [[ -n $bin ]]; then
			echo "gpu-smoke.sh: more than one TRTBUILD ($bin, $arg); give one binary" >&2
			exit 2
		fi
		bin=$arg
		;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
model=$repo/testdata/models/convnet.onnx
out=$(mktemp -d "${TMPDIR:-/tmp}/trtbuild-smoke.XXXXXX") || exit 1

fail() {
	echo "FAIL: $*" >&2
	echo "files: $out" >&2
	exit 1
}

cannot() {
	echo "CANNOT RUN: $*" >&2
	rm -rf "$out"
	exit 4
}

[[ -f $model ]] || fail "$model is missing"

# --- the deep model of the cancel checks: shipped in the image, else generated in Python.
deep=$repo/testdata/models/deepconv.onnx
if [[ ! -f $deep ]]; then
	deep=$out/deepconv.onnx
	python=
	for py in ${TRTBUILD_PYTHON:+"$TRTBUILD_PYTHON"} python3 /usr/bin/python3; do
		if "$py" -c 'import onnx' >/dev/null 2>&1; then
			python=$py
			break
		fi
	done
	[[ -n $python ]] || cannot "no Python with the onnx package to generate the deep model: pip install onnx (or apt-get install python3-onnx), or set TRTBUILD_PYTHON"
	"$python" "$repo/scripts/smokemodel.py" -o "$deep" >/dev/null 2>"$out/smokemodel.stderr" ||
		fail "cannot generate $deep ($python scripts/smokemodel.py); see $out/smokemodel.stderr"
fi

# --- the binary
if [[ -z $bin ]] && command -v go >/dev/null 2>&1 && [[ -f $repo/go.mod ]]; then
	bin=$out/trtbuild
	echo "building $bin"
	(cd "$repo" && go build -o "$bin" ./cmd/trtbuild) || fail "go build failed; see docs/tensorrt.md"
elif [[ -z $bin ]]; then
	bin=$(command -v trtbuild) || cannot "no trtbuild on PATH and no Go to build one: give the binary, scripts/gpu-smoke.sh PATH/TO/trtbuild"
fi
command -v "$bin" >/dev/null 2>&1 || [[ -x $bin ]] || fail "$bin is not an executable"

# --- helpers
# No build of these small models takes half an hour; a hang fails the check (exit 124).
common=(--backend "$mode" --progress json --timeout 30m)
deep_common=("${common[@]}")
if [[ $mode == sim ]]; then
	# Faster than the simulation's default pace, so that the whole check takes seconds; the deep
	# model's builds less so, so that the cancel still lands mid-build on a busy machine (the
	# simulated build lasts about 10 s, the cancel comes after about 0.2 s).
	common+=(--sim-speed 20)
	deep_common+=(--sim-speed 10)
fi

# number FIELD LINE: the value of a numeric field of a JSON line, 0 when it is absent.
number() {
	local v
	v=$(grep -o "\"$1\":[0-9]*" <<<"$2" | head -n 1 | cut -d: -f2)
	echo "${v:-0}"
}

# text FIELD LINE: the value of a string field of a JSON line, empty when it is absent.
text() {
	grep -o "\"$1\": *\"[^\"]*\"" <<<"$2" | head -n 1 | sed 's/.*: *"\(.*\)"/\1/'
}

# cache_warnings TRACE: the builder's and trtbuild's warnings in TRACE that speak of the
# timing cache (a refused, unreadable or unsaved cache says so in one).
cache_warnings() {
	grep '"type":"log"' "$1" | grep -E '"severity":"(warning|error)"' | grep -i 'timing.cache'
}

# inspect ENGINE RESULT: engine inspect must read ENGINE's plan header and find it a plan of the
# builder that RESULT (the build's result line) names.
inspect() {
	local engine=$1 result=$2 report kind want got
	report=$out/$(basename "$engine").inspect.json
	"$bin" engine inspect --json "$engine" >"$report" 2>"$report.stderr" ||
		fail "trtbuild engine inspect cannot read $engine: $(tail -n 1 "$report.stderr")"
	kind=$(text kind "$(tr -d '\n' <"$report")")
	if [[ $mode == sim ]]; then
		[[ $kind == simulated ]] || fail "engine inspect reads $engine as a $kind plan, want a simulated one; see $report"
		return
	fi
	[[ $kind == tensorrt ]] || fail "engine inspect reads $engine as a $kind plan, want a TensorRT plan; see $report"
	# The header names the TensorRT that wrote the plan where its layout is known.
	want=$(text tensorrt_version "$result")
	got=$(text tensorrt "$(tr -d '\n' <"$report")")
	if [[ -n $want && -n $got && $got != "$want" && $got != "$want".* && $want != "$got".* ]]; then
		fail "the plan header of $engine says TensorRT $got wrote it, but the build loaded TensorRT $want; see $report"
	fi
}

# cancel_criterion: an awk program that reads a --progress json stream as it is written and
# exits 0 at the moment the build should be cancelled (1 if the stream ends first).
#
# The moment: once `need` phases that had phases of their own inside have ended. TensorRT's
# phase names and their hierarchy change between versions (NvInfer.h says so; 8.7-9.x named the
# layer in "Finding fastest tactic for LAYER", 10.16 and 11 name none), so the criterion uses
# only what every version reports: a phase's id and its parent, and when it ends. A phase with
# sub-phases that has ended is a finished piece of work made of smaller ones. In TensorRT
# 10.16-11.1 (docs/events.md, "What TensorRT 10.16 and 11.x report"; the tree --sim plays) the
# stages before timing ("Cloning network graph", "Preparing graph for optimization",
# "Optimizing graph") have none, and the first such phases are the tactic searches under
# "Timing graph nodes" ("Evaluating tactic times", made of "Measuring tactic time" phases; a
# node may take several); in 8.7-9.x they were the per-layer "Finding fastest tactic for
# LAYER". Each one's result is what the timing cache keeps. So three of them means nodes timed
# and in the cache, well before the last of the deep model's 48 layers. Cancelling at the first
# step, as a simpler check would, lands before anything was timed and tests only an empty
# cache; counting steps alone would depend on how many tactics and measurements a version
# reports per node. Where a version times nodes without sub-phases (11.0 on Blackwell hands the
# whole graph to Myelin in one silent step), the first phases with sub-phases to end are whole
# stages (all nodes timed); the cancel then comes late and the build may end first: the script
# says it was inconclusive (exit 3), and the trace in cancel.jsonl shows the hierarchy, to be
# reported.
# shellcheck disable=SC2016 # awk's $0, not the shell's
cancel_criterion='
function field(key,    s) {
	if (!match($0, "\"" key "\":[0-9]+")) return -1
	s = substr($0, RSTART, RLENGTH)
	sub(/.*:/, "", s)
	return s + 0
}
/"type":"phase_start"/ { parent[field("id")] = field("parent") }
/"type":"phase_finish"/ {
	id = field("id")
	if (id in had_child) {
		ended++
		if (ended >= need) { done = 1; exit }
	}
	had_child[parent[id]] = 1
}
END { exit done ? 0 : 1 }'

echo "== version"
"$bin" version >"$out/version.txt" 2>&1 || fail "trtbuild version exited with $?; see $out/version.txt"
cat "$out/version.txt"
if [[ $mode == tensorrt ]]; then
	grep -q '^tensorrt .*; found ' "$out/version.txt" || fail "trtbuild did not find TensorRT (see $out/version.txt); put its lib folder on LD_LIBRARY_PATH or pass TRTBUILD_TENSORRT_LIB"
fi

echo "== builder"
if [[ $mode == tensorrt ]]; then
	"$bin" version --check-builder >"$out/builder.txt" 2>&1
	rc=$?
	[[ $rc -eq 0 ]] || fail "trtbuild could not create a TensorRT builder on this GPU (version --check-builder exited with $rc): $(tail -n 1 "$out/builder.txt")"
	echo "ok: a builder was created"
else
	echo "skipped: --sim has no TensorRT builder to create"
fi

# 1. A full build, recorded, with a new timing cache.
echo "== build (trace: $out/trace.jsonl)"
cp "$model" "$out/convnet.onnx"
first_cache=$out/convnet.cache
"$bin" "${common[@]}" --verbose --timing-cache "$first_cache" -o "$out/convnet.engine" "$out/convnet.onnx" \
	>"$out/trace.jsonl" 2>"$out/build.stderr"
rc=$?
[[ $rc -eq 0 ]] || fail "the build exited with $rc, want 0; see $out/build.stderr and $out/trace.jsonl"
first=$(tail -n 1 "$out/trace.jsonl")
grep -q '"status":"built"' <<<"$first" || fail "the trace does not end with a built result: $first"
[[ -s $out/convnet.engine ]] || fail "the build succeeded but $out/convnet.engine is missing or empty"
grep -q '"type":"phase_start"' "$out/trace.jsonl" || fail "the trace has no phase_start event; the builder reported no progress"
[[ -s $first_cache ]] || fail "the build saved no timing cache to $first_cache; see $out/build.stderr"
inspect "$out/convnet.engine" "$first"
echo "ok: engine of $(wc -c <"$out/convnet.engine") bytes, $(grep -c '"type":"phase_start"' "$out/trace.jsonl") phases, timing cache of $(wc -c <"$first_cache") bytes"

# 2. The same build again: the timing cache must be reused.
echo "== build again from its timing cache (trace: $out/cached.jsonl)"
"$bin" "${common[@]}" --timing-cache "$first_cache" -o "$out/cached.engine" "$out/convnet.onnx" \
	>"$out/cached.jsonl" 2>"$out/cached.stderr"
rc=$?
[[ $rc -eq 0 ]] || fail "the second build exited with $rc, want 0; see $out/cached.stderr"
second=$(tail -n 1 "$out/cached.jsonl")
grep -q '"status":"built"' <<<"$second" || fail "the second build did not end built: $second"
grep -q '"cache_used":true' <<<"$second" || fail "the second build did not use the timing cache the first one saved: $second"
inspect "$out/cached.engine" "$second"
hits=$(number cache_hits "$second")
added_first=$(number cache_misses "$first")
added_second=$(number cache_misses "$second")
if [[ $hits -gt 0 ]]; then
	echo "ok: reused, $hits timing-cache hits, $added_second new entries"
elif [[ $added_first -gt 0 ]]; then
	# TensorRT does not count hits; the entries a build adds are what it had to time anew.
	[[ $added_second -lt $added_first ]] || fail "the second build timed everything again ($added_second new cache entries, the first build added $added_first): $second"
	echo "ok: reused, $added_second new entries (the first build added $added_first)"
else
	echo "ok: cache used (this TensorRT counts neither hits nor entries)"
fi

# 3. Cancel once some layers were timed, with a timing cache: what was timed must be saved.
cache=$out/deepconv.cache
echo "== cancel with --timing-cache (trace: $out/cancel.jsonl)"
: >"$out/cancel.jsonl"
# Job control on: a background job of a script otherwise starts with SIGINT ignored, and
# trtbuild leaves an ignored SIGINT alone (as a background job should).
set -m
"$bin" "${deep_common[@]}" --timing-cache "$cache" -o "$out/cancel.engine" "$deep" \
	>>"$out/cancel.jsonl" 2>"$out/cancel.stderr" &
pid=$!
set +m
signalled=0
# tail follows the trace as trtbuild writes it and stops when trtbuild has exited.
if awk -v need=3 "$cancel_criterion" < <(tail --pid="$pid" -s 0.1 -n +1 -f "$out/cancel.jsonl"); then
	kill -INT "$pid" 2>/dev/null && signalled=1
fi
wait "$pid"
rc=$?
cancelled=$(tail -n 1 "$out/cancel.jsonl")
if [[ $signalled -eq 0 ]]; then
	if [[ $rc -eq 0 ]]; then
		echo "INCONCLUSIVE: the build of $deep ended before three phases with sub-phases had ended;" >&2
		echo "run again, and report it with $out/cancel.jsonl if it happens every time" >&2
		exit 3
	fi
	fail "the build to cancel exited with $rc before it could be cancelled; see $out/cancel.stderr"
fi
if [[ $rc -eq 0 ]] && grep -q '"status":"built"' <<<"$cancelled"; then
	echo "INCONCLUSIVE: the build finished although SIGINT was sent: the signal came after the" >&2
	echo "builder's last step, or the cancel was ignored; run again, and report it with" >&2
	echo "$out/cancel.jsonl if it happens every time" >&2
	exit 3
fi
[[ $rc -eq 130 ]] || fail "after SIGINT trtbuild exited with $rc, want 130; see $out/cancel.stderr"
[[ ! -e $out/cancel.engine ]] || fail "a cancelled build left $out/cancel.engine behind"
grep -q '"status":"cancelled"' <<<"$cancelled" || fail "the cancel trace does not end with a cancelled result: $cancelled"
[[ -s $cache ]] || fail "the cancelled build saved no timing cache to $cache (see $out/cancel.jsonl and $out/cancel.stderr)"
if warned=$(cache_warnings "$out/cancel.jsonl"); then
	fail "the cancelled build warned about its timing cache: $(head -n 1 <<<"$warned")"
fi
learned=$(number cache_misses "$cancelled")
echo "ok: cancelled with exit status 130, no engine written, timing cache of $(wc -c <"$cache") bytes saved ($learned entries learned)"

# 4. The same build from that cache: it must be read without a refusal, and the build succeed.
echo "== build from the cache the cancel saved (trace: $out/resume.jsonl)"
"$bin" "${deep_common[@]}" --timing-cache "$cache" -o "$out/deepconv.engine" "$deep" \
	>"$out/resume.jsonl" 2>"$out/resume.stderr"
rc=$?
[[ $rc -eq 0 ]] || fail "the build from the cache exited with $rc, want 0; see $out/resume.stderr"
result=$(tail -n 1 "$out/resume.jsonl")
grep -q '"status":"built"' <<<"$result" || fail "the build from the cache did not end built: $result"
if warned=$(cache_warnings "$out/resume.jsonl"); then
	fail "the build after the cancel warned about the cache the cancel saved: $(head -n 1 <<<"$warned")"
fi
if [[ $learned -gt 0 ]]; then
	grep -q '"cache_used":true' <<<"$result" || fail "the cancelled build saved $learned cache entries, but the next build did not use them: $result"
fi
inspect "$out/deepconv.engine" "$result"
# TensorRT tells no hits: a result has cache_hits only where they are known.
hits=$(number cache_hits "$result")
told=""
[[ $hits -gt 0 ]] && told="$hits hits, "
echo "ok: built from the cache: $told$(number cache_misses "$result") new entries"

echo
if [[ $mode == sim ]]; then
	echo "All checks passed with the simulated builder."
	rm -rf "$out"
	exit 0
fi
echo "All checks passed. The progress trace of this machine is:"
echo "    $out/trace.jsonl"
echo "Please attach it, with $out/version.txt, to bug reports and to the issue that collects"
echo "TensorRT phase traces: it shows the phases your TensorRT version really reports."
