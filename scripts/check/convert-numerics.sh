#!/usr/bin/env bash
# Convert ONNX models with `trtbuild convert` and compare each with its
# conversion on random inputs in ONNX Runtime (scripts/check/convert-numerics.py).
#
#   scripts/check/convert-numerics.sh [--fp16|--bf16] MODEL.onnx... [-- OPTIONS FOR THE PYTHON SCRIPT]
#
# TRTBUILD names the trtbuild binary (default: built from this checkout);
# PYTHON the interpreter (default: python3). Exits as the Python script does;
# 3 means ONNX Runtime is missing or cannot run a model.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
target=--fp16
models=()
while [ $# -gt 0 ]; do
	case $1 in
	--fp16 | --bf16) target=$1 ;;
	--) shift; break ;;
	-*) echo "check/convert-numerics.sh: unknown option $1 (options for the Python script go after --)" >&2; exit 2 ;;
	*) models+=("$1") ;;
	esac
	shift
done
if [ ${#models[@]} -eq 0 ]; then
	echo "usage: check/convert-numerics.sh [--fp16|--bf16] MODEL.onnx... [-- OPTIONS]" >&2
	exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trtbuild=${TRTBUILD:-}
if [ -z "$trtbuild" ]; then
	trtbuild=$work/trtbuild
	(cd "$root" && go build -o "$trtbuild" ./cmd/trtbuild)
fi

pairs=()
for m in "${models[@]}"; do
	out=$work/$(basename "${m%.onnx}")${target/--/.}.onnx
	"$trtbuild" convert "$target" "$m" -o "$out" >/dev/null
	pairs+=("$m" "$out")
done
exec "${PYTHON:-python3}" "$root/scripts/check/convert-numerics.py" "$@" "${pairs[@]}"
