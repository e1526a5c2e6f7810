#!/usr/bin/env bash
# Compare `trtbuild inspect` with `python3 -c 'import onnx; onnx.load(...)'` on a generated
# model of about 1 GiB (256 inline weights of 4 MiB), measuring wall time and peak memory with
# /usr/bin/time -v. The numbers go into docs/benchmarks.md, section "Model inspection".
#
#   scripts/bench/inspect.sh            # 1024 MiB model, 5 runs each
#   SIZE_MIB=256 RUNS=3 scripts/bench/inspect.sh
#
# Needs Go, GNU time (/usr/bin/time) and a Python with the onnx package (Debian: python3-onnx;
# set TRTBUILD_PYTHON to choose the interpreter). The model is written to a temporary folder and
# removed afterwards. Both tools read the file from the page cache: it is read once first.
set -euo pipefail
cd "$(dirname "$0")/../.."

size_mib="${SIZE_MIB:-1024}"
runs="${RUNS:-5}"
python="${TRTBUILD_PYTHON:-python3}"
gnutime=/usr/bin/time

[ -x "$gnutime" ] || { echo "bench-inspect: $gnutime not found; install GNU time (apt-get install time)" >&2; exit 2; }
"$python" -c 'import onnx' 2>/dev/null || { echo "bench-inspect: $python cannot import onnx; install python3-onnx or set TRTBUILD_PYTHON" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
model="$tmp/large.onnx"

go build -o "$tmp/trtbuild" ./cmd/trtbuild
go run ./testdata/models/gen -large "$model" -large-mib "$size_mib"
bytes="$(stat -c %s "$model")"
cat "$model" >/dev/null # page cache

# measure CMD...: prints "seconds peak_kib" for one run. The wall time is taken around the
# process with nanosecond clocks (GNU time's own figure has 10 ms resolution); the peak resident
# set size comes from GNU time.
measure() {
	local start end
	start="$(date +%s%N)"
	"$gnutime" -v "$@" >/dev/null 2>"$tmp/time.txt" || { cat "$tmp/time.txt" >&2; exit 1; }
	end="$(date +%s%N)"
	awk -F': ' -v ns="$((end - start))" '
		/Maximum resident set size/ { rss = $2 }
		END { printf "%.4f %d\n", ns / 1e9, rss }' "$tmp/time.txt"
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

bench() {
	local name="$1"; shift
	: >"$tmp/t" && : >"$tmp/m"
	for _ in $(seq "$runs"); do
		read -r s kib < <(measure "$@")
		echo "$s" >>"$tmp/t"
		echo "$kib" >>"$tmp/m"
	done
	printf '%s %s %s\n' "$name" "$(median <"$tmp/t")" "$(sort -g "$tmp/m" | tail -1)"
}

onnx_version="$("$python" -c 'import onnx; print(onnx.__version__)')"
inspect_row="$(bench inspect "$tmp/trtbuild" inspect "$model")"
json_row="$(bench inspect-json "$tmp/trtbuild" inspect --json "$model")"
load_row="$(bench onnx.load "$python" -c "import onnx, sys; onnx.load(sys.argv[1])" "$model")"

echo "model: $bytes bytes ($size_mib MiB requested), $((size_mib / 4)) initializers; $runs runs each, median time, largest peak RSS"
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(go env GOVERSION), onnx $onnx_version"
echo
echo "| command | wall time (median) | peak RSS |"
echo "|---|---|---|"
for row in "$inspect_row" "$json_row" "$load_row"; do
	read -r name s kib <<<"$row"
	case "$name" in
	inspect) cmd='`trtbuild inspect large.onnx`' ;;
	inspect-json) cmd='`trtbuild inspect --json large.onnx`' ;;
	onnx.load) cmd="\`python3 -c 'import onnx; onnx.load(\"large.onnx\")'\`" ;;
	esac
	awk -v c="$cmd" -v s="$s" -v k="$kib" 'BEGIN { printf "| %s | %.3f s | %.1f MiB |\n", c, s, k / 1024 }'
done
read -r _ t_inspect _ <<<"$inspect_row"
read -r _ t_load _ <<<"$load_row"
echo
awk -v a="$t_load" -v b="$t_inspect" 'BEGIN { printf "inspect is %.0fx faster than onnx.load\n", a / b }'
