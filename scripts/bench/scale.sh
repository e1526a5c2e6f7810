#!/usr/bin/env bash
# ONNX reading and conversion at scale: trtbuild against the naive Python peer
# (scripts/bench/scale-peer.py: onnx.load + numpy astype(float16) + onnx.save, and
# onnx.load(..., load_external_data=False) for inspect), side by side in one run, on generated
# models (internal/testmodels/scalegen):
#
#   nodes-100000     100k Add nodes, each with a 16-value float32 weight (~12 MB)
#   nodes-300000     the same with 300k nodes (~38 MB): convert must scale linearly
#   identity-1000000 10^6 Identity nodes, no weights (~40 MB)
#   external-256     256 MatMul weights of 4 MiB in an external data file (1 GiB)
#
# For each case it prints the median wall time and CPU time (user + system) over RUNS runs, the
# largest peak resident set size (GNU time), and the ratios trtbuild / peer, then checks each
# goal of docs/benchmarks.md ("Reading and converting at scale") and prints PASS or MISS with
# the figure (CPU time where the goal is a time: the machine is shared). Exit status 1 when a goal is missed (so the benchmark can fail), 2 when a tool is
# missing.
#
#   scripts/bench/scale.sh               # all cases, 3 runs each
#   RUNS=5 CASES="convert-100k inspect-300k" scripts/bench/scale.sh
#
# BIN_DIR names a folder with prebuilt trtbuild and scalegen binaries (for a machine without Go),
# GNU_TIME another GNU time binary.
# Needs Go, GNU time (/usr/bin/time; apt-get install time) and a Python with the onnx package
# and numpy (Debian: apt-get install python3-onnx; TRTBUILD_PYTHON chooses the interpreter,
# default /usr/bin/python3). The models are written to a temporary folder, removed afterwards;
# the 1 GiB case needs about 3 GiB of free disk. Every input is read once before timing, so
# both tools read from the page cache. Times are medians; on a loaded machine compare the CPU
# ratios, which load changes less.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs="${RUNS:-3}"
cases="${CASES:-convert-100k convert-300k convert-identity convert-external inspect-300k}"
python="${TRTBUILD_PYTHON:-/usr/bin/python3}"
gnutime="${GNU_TIME:-/usr/bin/time}"

[ -x "$gnutime" ] || { echo "bench-scale: $gnutime not found; install GNU time (apt-get install time)" >&2; exit 2; }
"$python" -c 'import onnx, numpy' 2>/dev/null || { echo "bench-scale: $python cannot import onnx and numpy; apt-get install python3-onnx or set TRTBUILD_PYTHON" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ -n "${BIN_DIR:-}" ]; then
	# Prebuilt binaries (a machine without Go): BIN_DIR/trtbuild and BIN_DIR/scalegen.
	cp "$BIN_DIR/trtbuild" "$BIN_DIR/scalegen" "$tmp/"
else
	go build -o "$tmp/trtbuild" ./cmd/trtbuild
	go build -o "$tmp/scalegen" ./internal/testmodels/scalegen
fi
peer=(env PYTHONDONTWRITEBYTECODE=1 "$python" scripts/bench/scale-peer.py)

# measure CMD...: prints "wall_s cpu_s peak_kib" for one run.
measure() {
	local start end
	start="$(date +%s%N)"
	"$gnutime" -f '%U %S %M' -o "$tmp/time.txt" "$@" >/dev/null 2>"$tmp/err.txt" || { cat "$tmp/err.txt" "$tmp/time.txt" >&2; exit 1; }
	end="$(date +%s%N)"
	awk -v ns="$((end - start))" '{ printf "%.3f %.3f %d\n", ns / 1e9, $1 + $2, $3 }' "$tmp/time.txt"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench NAME CMD...: runs CMD RUNS times (removing the outputs in $tmp/out* before each run) and
# sets the globals wall, cpu and mib.
bench() {
	local name="$1"; shift
	: >"$tmp/w"; : >"$tmp/c"; : >"$tmp/m"
	for _ in $(seq "$runs"); do
		rm -f "$tmp"/out*
		read -r w c k < <(measure "$@")
		echo "$w" >>"$tmp/w"; echo "$c" >>"$tmp/c"; echo "$k" >>"$tmp/m"
	done
	wall="$(median <"$tmp/w")"; cpu="$(median <"$tmp/c")"
	mib="$(sort -g "$tmp/m" | tail -1 | awk '{ printf "%.0f", $1 / 1024 }')"
	printf '  %-34s %7.3f s wall %7.3f s cpu %6d MiB\n' "$name" "$wall" "$cpu" "$mib"
}

status=0
# goal TEXT OK: prints the goal with PASS or MISS and records a miss.
goal() {
	if [ "$2" = 1 ]; then echo "  PASS  $1"; else echo "  MISS  $1"; status=1; fi
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

model() { # model KIND N: generates the model once, prints its path
	local path="$tmp/$1-$2.onnx"
	[ -e "$path" ] || { "$tmp/scalegen" -dir "$tmp" -kind "$1" -n "$2" >/dev/null; cat "$path" "$path".data 2>/dev/null >/dev/null || true; }
	echo "$path"
}

# convert_case NAME KIND N PEERMODE: trtbuild convert --fp16 against the peer; sets t_* and p_*.
convert_case() {
	local m size
	m="$(model "$2" "$3")"
	size="$(du -cb "$m"* | tail -1 | cut -f1)"
	echo "$1: $(basename "$m"), $((size / 1000000)) MB"
	bench "trtbuild convert --fp16" "$tmp/trtbuild" convert --fp16 "$m" -o "$tmp/out.onnx"
	t_wall=$wall t_cpu=$cpu t_mib=$mib
	bench "python peer ($4)" "${peer[@]}" "$4" "$m" "$tmp/out.onnx"
	p_wall=$wall p_cpu=$cpu p_mib=$mib
	echo "  ratio trtbuild/peer: wall $(ratio "$t_wall" "$p_wall"), cpu $(ratio "$t_cpu" "$p_cpu"), memory $(ratio "$t_mib" "$p_mib")"
	model_mib="$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1048576 }')"
}

echo "bench-scale: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $runs runs each, onnx $("$python" -c 'import onnx; print(onnx.__version__)'), $(go version 2>/dev/null | cut -d' ' -f3 || echo "prebuilt binaries")"
for c in $cases; do
	case "$c" in
	convert-100k)
		convert_case "$c" nodes 100000 convert
		goal "convert --fp16 100k nodes: time <= 0.5x peer (cpu $(ratio "$t_cpu" "$p_cpu")x, wall $(ratio "$t_wall" "$p_wall")x)" "$(le "$(ratio "$t_cpu" "$p_cpu")" 0.5)"
		goal "convert --fp16 100k nodes: memory <= 3x model size ($t_mib MiB = $(ratio "$t_mib" "$model_mib")x of $model_mib MiB)" "$(le "$(ratio "$t_mib" "$model_mib")" 3)"
		cpu_100k=$t_cpu
		;;
	convert-300k)
		convert_case "$c" nodes 300000 convert
		goal "convert --fp16 300k nodes: time <= 0.5x peer (cpu $(ratio "$t_cpu" "$p_cpu")x, wall $(ratio "$t_wall" "$p_wall")x)" "$(le "$(ratio "$t_cpu" "$p_cpu")" 0.5)"
		if [ -n "${cpu_100k:-}" ]; then
			# Linear: 3x the nodes costs at most 3.3x the CPU time (10% slack for noise).
			goal "convert --fp16 300k nodes: linear (cpu 300k/100k = $(ratio "$t_cpu" "$cpu_100k"), at most 3.3)" "$(le "$(ratio "$t_cpu" "$cpu_100k")" 3.3)"
		fi
		;;
	convert-identity)
		convert_case "$c" identity 1000000 convert
		goal "convert --fp16 10^6 Identity nodes: memory <= 400 MiB ($t_mib MiB)" "$(le "$t_mib" 400)"
		;;
	convert-external)
		convert_case "$c" external 256 convert-external
		goal "convert --fp16 1 GiB external data: time <= 0.5x peer (wall $(ratio "$t_wall" "$p_wall")x, cpu $(ratio "$t_cpu" "$p_cpu")x)" "$(le "$(ratio "$t_wall" "$p_wall")" 0.5)"
		;;
	inspect-300k)
		m="$(model nodes 300000)"
		echo "$c: $(basename "$m")"
		bench "trtbuild inspect" "$tmp/trtbuild" inspect "$m"
		t_wall=$wall t_cpu=$cpu t_mib=$mib
		bench "python peer (onnx.load, no external data)" "${peer[@]}" inspect "$m"
		echo "  ratio trtbuild/peer: wall $(ratio "$t_wall" "$wall"), cpu $(ratio "$t_cpu" "$cpu"), memory $(ratio "$t_mib" "$mib")"
		goal "inspect 300k nodes: <= 0.25 s (cpu $t_cpu s, wall $t_wall s)" "$(le "$t_cpu" 0.25)"
		goal "inspect 300k nodes: <= 64 MiB ($t_mib MiB)" "$(le "$t_mib" 64)"
		;;
	*)
		echo "bench-scale: unknown case $c" >&2
		exit 2
		;;
	esac
done
exit $status
