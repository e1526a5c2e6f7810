#!/usr/bin/env bash
# Measures the event pipeline end to end: C queue -> worker (drain, resolve, encode) -> pipe ->
# parent (decode, tree, renderer) -> stdout, with the simulated builder in flood mode (no
# sleeps: every thread reports as fast as it can), against the raw pipe limit (`cat` of the
# same JSON lines). For each progress mode it prints the events that reached stdout per second
# of the parent's wall time, the events the worker's bounded queue dropped (the builder
# outran the pipeline; the figure counts delivered events only), and the CPU seconds of the
# parent and of the worker (from /proc/PID/stat, sampled every 20 ms until each exits).
# Linux only.
# It ends with PASS or MISS for the goal of docs/benchmarks.md (median json run >= 1 M events/s)
# and exits 1 on a miss.
# Usage: scripts/bench/pipeline.sh [path/to/trtbuild]   (default: build it)
#   TACTICS, ITERATIONS (default 256 each: every "Evaluating tactic times" of a timed node of
#   the stand-in TensorRT times TACTICS tactics, of a reformat 3, each in ITERATIONS (+ 2 warm-up)
#   measuring steps; about 3.5 M steps for the convnet),
#   THREADS (sim builder threads, default 1), RUNS (default 3), MODES (default "json quiet"),
#   MODEL (default testdata/models/convnet.onnx; a model with more layers makes a longer run).
set -euo pipefail
cd "$(dirname "$0")/../.."

tactics="${TACTICS:-256}"
iterations="${ITERATIONS:-256}"
threads="${THREADS:-1}"
runs="${RUNS:-3}"
modes="${MODES:-json quiet}"
model="${MODEL:-testdata/models/convnet.onnx}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin="${1:-}"
if [[ -z "$bin" ]]; then
	bin="$work/trtbuild"
	go build -o "$bin" ./cmd/trtbuild
fi
hz="$(getconf CLK_TCK)"

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || true; }

for mode in $modes; do
	for run in $(seq "$runs"); do
		rm -f "$work/out.engine"
		start="$(date +%s%N)"
		XDG_CACHE_HOME="$work/cache" "$bin" --backend sim --sim-flood --sim-threads "$threads" \
			--sim-tactics "$tactics" --sim-iterations "$iterations" --no-timing-cache --progress "$mode" \
			-o "$work/out.engine" "$model" >"$work/out.jsonl" 2>"$work/stderr" &
		pid=$!
		ptick=0 wtick=0 worker=""
		while kill -0 "$pid" 2>/dev/null; do
			t="$(ticks "$pid")"; [[ -n "$t" ]] && ptick="$t"
			[[ -n "$worker" ]] || worker="$(pgrep -P "$pid" | head -n1 || true)"
			if [[ -n "$worker" ]]; then t="$(ticks "$worker")"; [[ -n "$t" ]] && wtick="$t"; fi
			sleep 0.02
		done
		wait "$pid" || { cat "$work/stderr" >&2; exit 1; }
		end="$(date +%s%N)"
		lines="$(wc -l <"$work/out.jsonl")"
		dropped="$(grep -o '"dropped_steps":[0-9]*' "$work/out.jsonl" | tail -n1 | cut -d: -f2 || true)"
		if [[ "$mode" == json ]]; then
			cp "$work/out.jsonl" "$work/last.jsonl"
		else
			# quiet prints nothing per event: count what the worker delivered from a json run's shape.
			lines="$(( $(wc -l <"$work/last.jsonl" 2>/dev/null || echo 0) ))"
		fi
		[[ "$mode" == json ]] && echo "$lines $((end - start))" >>"$work/json-rates"
		awk -v mode="$mode" -v run="$run" -v lines="$lines" -v ns="$((end - start))" -v d="${dropped:-0}" \
			-v p="$ptick" -v w="$wtick" -v hz="$hz" 'BEGIN {
			wall = ns / 1e9
			note = (mode == "json") ? "" : " (event count of the last json run)"
			printf "%-5s run %d: %d events in %.3fs = %.0f events/s%s; %d steps dropped; parent CPU %.2fs, worker CPU %.2fs\n",
				mode, run, lines, wall, lines / wall, note, d, p / hz, w / hz
		}'
	done
done
if [[ -f "$work/last.jsonl" ]]; then
	lines="$(wc -l <"$work/last.jsonl")"
	start="$(date +%s%N)"
	cat "$work/last.jsonl" | cat >/dev/null
	end="$(date +%s%N)"
	awk -v lines="$lines" -v ns="$((end - start))" 'BEGIN { printf "cat   raw pipe: %d lines in %.4fs = %.0f lines/s\n", lines, ns / 1e9, lines / (ns / 1e9) }'
fi
# The goal of docs/benchmarks.md: at least 1 M events/s end to end in json mode (the median run).
if [[ -f "$work/json-rates" ]]; then
	awk '{ printf "%.0f\n", $1 / ($2 / 1e9) }' "$work/json-rates" | sort -g | awk '{ r[NR] = $1 } END {
		m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
		if (m >= 1e6) { printf "PASS  json mode >= 1 M events/s (median %.2f M)\n", m / 1e6; exit 0 }
		printf "MISS  json mode >= 1 M events/s (median %.2f M)\n", m / 1e6; exit 1
	}'
fi
