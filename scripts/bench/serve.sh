#!/usr/bin/env bash
# trtbuild serve under load (docs/benchmarks.md, "Service"): scripts/bench/servebench starts the
# servers on free loopback ports, each with a temporary state dir and the bundled
# testdata/models/convnet.onnx as its model root, and measures
#
#   fanout  1,000 Server-Sent Events clients watching one simulated build (about 2,700 events
#           in 13 s): p99 event delay <= 50 ms, server RSS <= 150 MiB (VmRSS sampled every
#           20 ms, and VmHWM, of the server process)
#   peer    the same clients and build on the Python relay of scripts/bench/serve-peer.py,
#           printed beside fanout (no target: the comparison)
#   submit  POST /v1/builds → the first event of its stream, 20 builds: median <= 100 ms
#   list    10,000 builds in the history (written with internal/history), all listed: median
#           of 10 <= 50 ms
#
# The clients run inside servebench, on the same machine as the server (on 2 CPUs they share
# them). Prints PASS or MISS per target; exit status 1 when one is missed, 2 when it could not
# measure.
#
#   scripts/bench/serve.sh
#   CASES=fanout,peer CLIENTS=1000 scripts/bench/serve.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

cases="${CASES:-fanout,peer,submit,list}"
clients="${CLIENTS:-1000}"
python="${TRTBUILD_PYTHON:-python3}"

# A thousand clients hold a thousand sockets in this process and as many in the server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((2 * clients + 256)) ]; then
	echo "bench-serve: the open-files limit is $(ulimit -n), below the $((2 * clients + 256)) needed; raise it (ulimit -Hn)" >&2
	exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/trtbuild" ./cmd/trtbuild
go build -o "$tmp/servebench" ./scripts/bench/servebench
mkdir "$tmp/models"
cp testdata/models/convnet.onnx "$tmp/models/"

echo "bench-serve: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), open files $(ulimit -n), $(go version | cut -d' ' -f3), $("$python" --version 2>&1)"
"$tmp/servebench" -trtbuild "$tmp/trtbuild" -model-root "$tmp/models" -python "$python" -peer scripts/bench/serve-peer.py \
	-cases "$cases" -clients "$clients"
