#!/usr/bin/env bash
# fault-campaign.sh: tries every way of losing data, leaking files or hanging that the
# "nothing lost, nothing escapes" rules forbid, plus a storm of random cancels, against real
# trtbuild processes with the simulated builder, and prints a table of what held.
#
# Each case checks the exit status, that every file that must survive is byte-identical
# (sha256), that no temporary file is left in the output folder or in $TMPDIR (a private one),
# and that no worker process outlives its build (found by an environment marker that only the
# processes this script starts carry).
#
#   scripts/fault-campaign.sh            full: 60 random cancels within 1 s, 40 early signals
#   FAULT_CAMPAIGN_QUICK=1 scripts/...   quick (CI): 10 random cancels within 0.5 s, 6 early signals
#
# Root-only cases (a character device that root could replace) use a private device node made
# with mknod in the work folder, never the machine's /dev/null. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

quick="${FAULT_CAMPAIGN_QUICK:-}"
storm_runs=60
early_runs=40
fill_wait=3
storm_delay=10 # tenths of a second: the random cancel comes within this
if [ -n "$quick" ]; then
	storm_runs=10
	early_runs=6
	fill_wait=2
	storm_delay=4
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/trtbuild-fault.XXXXXX")
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/tmp" "$work/cache"
go build -o "$work/bin/trtbuild" ./cmd/trtbuild || exit 1
tb="$work/bin/trtbuild"
export TMPDIR="$work/tmp" XDG_CACHE_HOME="$work/cache" HOME="$work" TERM=dumb
marker="TRTBUILD_FAULT_CAMPAIGN=$$"
model_src="$repo/testdata/models/convnet.onnx"

declare -A tried held failed
order=()
failures=()

# record CASE OK MESSAGE: counts one try of CASE.
record() {
	local name=$1 ok=$2 msg=${3:-}
	if [ -z "${tried[$name]+x}" ]; then
		order+=("$name")
		tried[$name]=0 held[$name]=0 failed[$name]=0
	fi
	tried[$name]=$((tried[$name] + 1))
	if [ "$ok" = 1 ]; then
		held[$name]=$((held[$name] + 1))
	else
		failed[$name]=$((failed[$name] + 1))
		failures+=("$name: $msg")
	fi
}

# fresh: a new case folder with the model, in $d.
n=0
fresh() {
	n=$((n + 1))
	d="$work/case$n"
	mkdir -p "$d"
	cp "$model_src" "$d/m.onnx"
}

# sums DIR...: one line per file below the folders: name, kind and sha256.
sums() {
	find "$@" -mindepth 1 -printf '%p %y %l\n' 2>/dev/null | sort | while read -r p y l; do
		if [ "$y" = f ]; then
			echo "$p f $(sha256sum <"$p" | cut -c1-64)"
		else
			echo "$p $y $l"
		fi
	done
}

# temps DIR...: trtbuild's own temporary files (and, in $TMPDIR, anything at all).
temps() {
	find "$@" -name '.*.trtbuild-*.tmp' 2>/dev/null
	find "$TMPDIR" -mindepth 1 2>/dev/null
}

# workers: processes still running that this script started (they carry the marker).
workers() {
	local p
	for p in /proc/[0-9]*; do
		if tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qx "$marker"; then
			if ! grep -q ') Z ' "$p/stat" 2>/dev/null; then
				echo "${p#/proc/}"
			fi
		fi
	done
}

# run ARGS...: runs trtbuild with a minute's limit; sets rc, out, err.
run() {
	env "$marker" timeout -s KILL 60 "$tb" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	out=$(cat "$work/out")
	err=$(cat "$work/err")
}

# refused CASE WANT SETUP-FUNCTION: SETUP prints the arguments (one per line) after preparing
# the case folder $d; the command must exit 2 with one stderr line containing WANT, write
# nothing to stdout, and change nothing in $d and $TMPDIR.
refused() {
	local name=$1 want=$2 setup=$3
	fresh
	local outside="$d.outside"
	mkdir -p "$outside"
	local args
	mapfile -t args < <($setup "$d" "$outside")
	local before after
	before=$(sums "$d" "$outside" "$TMPDIR")
	run "${args[@]}"
	after=$(sums "$d" "$outside" "$TMPDIR")
	local lines
	lines=$(printf '%s' "$err" | grep -c '')
	if [ "$rc" != 2 ]; then
		record "$name" 0 "exit $rc, want 2: $err"
	elif [ "$lines" != 1 ] || [[ "$err" != *"$want"* ]]; then
		record "$name" 0 "stderr is not one line with '$want': $err"
	elif [ -n "$out" ]; then
		record "$name" 0 "stdout not empty"
	elif [ "$before" != "$after" ]; then
		record "$name" 0 "files changed: $(diff <(echo "$before") <(echo "$after") | head -5 | tr '\n' ' ')"
	elif printf '%s' "$err" | grep -q $'\e'; then
		record "$name" 0 "ESC byte on stderr"
	else
		record "$name" 1
	fi
}

sim=(--backend sim --sim-speed 50 --no-timing-cache)

# --- Data loss: outputs against the model, its data and each other -------------------------
c_trace_model() { echo --backend; echo sim; echo "$1/m.onnx"; echo --trace; echo "$1/m.onnx"; }
c_cache_engine() { printf '%s\n' --backend sim "$1/m.onnx" --timing-cache "$1/c" -o "$1/c"; }
c_report_trace() { printf '%s\n' "${sim[@]}" "$1/m.onnx" --report "$1/r.json" --trace "$1/r.json"; }
c_hardlink() { ln "$1/m.onnx" "$1/h.engine"; printf '%s\n' "${sim[@]}" "$1/m.onnx" -o "$1/h.engine"; }
c_symlink() { ln -s m.onnx "$1/l.json"; printf '%s\n' "${sim[@]}" "$1/m.onnx" --report "$1/l.json"; }
c_extdata() {
	cp "$repo/testdata/models/external_data.onnx" "$repo/testdata/models/external_data.bin" "$1/"
	printf '%s\n' "${sim[@]}" "$1/external_data.onnx" --no-preflight --trace "$1/external_data.bin"
}
refused "trace over the model" "is the model" c_trace_model
refused "timing cache = engine" "same file" c_cache_engine
refused "report = trace" "same file" c_report_trace
refused "engine = hard link to model" "is the model" c_hardlink
refused "report = symlink to model" "is the model" c_symlink
refused "trace over external data" "external data file" c_extdata

# --- Devices, FIFOs, sockets, links as outputs -----------------------------------------------
c_fifo_engine() { mkfifo "$1/e"; printf '%s\n' "${sim[@]}" "$1/m.onnx" -o "$1/e"; }
c_stdout_link() { mkfifo "$1/pipe"; ln -s pipe "$1/stdout"; printf '%s\n' "${sim[@]}" "$1/m.onnx" -o "$1/stdout"; }
c_fifo_report() { mkfifo "$1/r.json"; printf '%s\n' "${sim[@]}" "$1/m.onnx" --report "$1/r.json"; }
c_fifo_trace() { mkfifo "$1/t.jsonl"; printf '%s\n' "${sim[@]}" "$1/m.onnx" --trace "$1/t.jsonl"; }
c_fifo_cache() { mkfifo "$1/c.cache"; printf '%s\n' --backend sim --sim-speed 50 "$1/m.onnx" --timing-cache "$1/c.cache"; }
c_fifo_lock() { mkfifo "$1/c.cache.lock"; printf '%s\n' --backend sim --sim-speed 50 "$1/m.onnx" --timing-cache "$1/c.cache"; }
c_dir_cache() { mkdir "$1/c.cache"; printf '%s\n' --backend sim --sim-speed 50 "$1/m.onnx" --timing-cache "$1/c.cache"; }
c_fifo_convert_out() { mkfifo "$1/o.onnx"; printf '%s\n' convert --fp16 "$1/m.onnx" -o "$1/o.onnx"; }
refused "-o FIFO" "FIFO" c_fifo_engine
refused "-o /dev/stdout-style link to a pipe" "FIFO" c_stdout_link
refused "--report FIFO" "FIFO" c_fifo_report
refused "--trace FIFO, no reader" "no process is reading" c_fifo_trace
refused "--timing-cache FIFO" "FIFO" c_fifo_cache
refused "timing cache lock FIFO" "lock file" c_fifo_lock
refused "--timing-cache folder (message)" "is a folder" c_dir_cache
refused "convert -o FIFO" "FIFO" c_fifo_convert_out

# A character device is written through, never replaced: a private node of /dev/null's kind
# (as root, a replaced node would otherwise be the machine's /dev/null).
fresh
if [ "$(id -u)" = 0 ]; then
	mknod "$d/null" c 1 3 && chmod 666 "$d/null"
	dev="$d/null"
else
	dev=/dev/null
fi
ln -s "$dev" "$d/report.json"
run "${sim[@]}" --progress quiet "$d/m.onnx" -o "$dev" --report "$d/report.json"
if [ "$rc" = 0 ] && [ -c "$dev" ] && [ -z "$(temps "$d")" ]; then record "-o device: written through" 1; else record "-o device: written through" 0 "exit $rc, $(ls -l "$dev")"; fi
run convert --fp16 "$d/m.onnx" -o "$dev"
if [ "$rc" = 0 ] && [ -c "$dev" ]; then record "convert -o device" 1; else record "convert -o device" 0 "exit $rc: $err"; fi

# A symbolic link to a regular file: the target is replaced in its own folder, the link stays.
fresh
mkdir -m 700 "$d/private"
echo OLD >"$d/private/real.engine"
ln -s private/real.engine "$d/link.engine"
run "${sim[@]}" --progress quiet "$d/m.onnx" -o "$d/link.engine"
if [ "$rc" = 0 ] && [ -L "$d/link.engine" ] && head -c 23 "$d/private/real.engine" | grep -q TRTBUILD-SIMULATED-PLAN && [ -z "$(temps "$d")" ]; then
	record "-o symlink: target replaced" 1
else
	record "-o symlink: target replaced" 0 "exit $rc"
fi

# --- Files escaping their folder ---------------------------------------------------------------
c_cache_passwd() { echo "root:x:0:0" >"$2/passwd"; ln -s "$2/passwd" "$1/c.cache"; printf '%s\n' --backend sim --sim-speed 50 "$1/m.onnx" --timing-cache "$1/c.cache"; }
c_cache_dangling() { ln -s "$2/made" "$1/c.cache"; printf '%s\n' --backend sim --sim-speed 50 "$1/m.onnx" --timing-cache "$1/c.cache"; }
c_extdata_escape() {
	cp "$repo/testdata/models/external_data.onnx" "$1/"
	cp "$repo/testdata/models/external_data.bin" "$2/"
	ln -s "$2/external_data.bin" "$1/external_data.bin"
	printf '%s\n' "${sim[@]}" "$1/external_data.onnx" --no-preflight
}
refused "cache symlink to /etc/passwd-like file" "symbolic link" c_cache_passwd
refused "cache dangling symlink" "symbolic link" c_cache_dangling
refused "--no-preflight keeps external data check" "external data" c_extdata_escape

# The parent SIGKILLed mid-build: no temporary engine anywhere, the worker gone within 2 s
# even when the builder ignores cancel requests.
for ignore in "" --sim-ignore-cancel; do
	fresh
	echo GOOD >"$d/m.engine"
	good=$(sha256sum <"$d/m.engine")
	env "$marker" "$tb" --backend sim --sim-speed 0.2 --no-timing-cache $ignore --progress quiet "$d/m.onnx" &
	parent=$!
	w=""
	for _ in $(seq 100); do
		w=$(grep -l "^[0-9]* ([^)]*) . $parent " /proc/[0-9]*/stat 2>/dev/null | head -1 | cut -d/ -f3)
		[ -n "$w" ] && break
		sleep 0.02
	done
	sleep 0.5
	kill -KILL "$parent"
	wait "$parent" 2>/dev/null
	start=$(date +%s%N)
	gone=""
	while [ -n "$w" ] && [ -d "/proc/$w" ] && ! grep -q ') Z ' "/proc/$w/stat" 2>/dev/null; do
		if [ $(($(date +%s%N) - start)) -gt 10000000000 ]; then break; fi
		sleep 0.02
	done
	ms=$((($(date +%s%N) - start) / 1000000))
	name="parent SIGKILL${ignore:+ (builder ignores cancel)}: worker gone <2s"
	if [ -z "$w" ]; then
		record "$name" 0 "no worker found"
	elif [ "$ms" -gt 2000 ]; then
		record "$name" 0 "worker lived ${ms} ms"
		kill -KILL "$w" 2>/dev/null
	elif [ "$(sha256sum <"$d/m.engine")" != "$good" ] || [ -n "$(temps "$d")" ]; then
		record "$name" 0 "engine changed or temp left: $(temps "$d")"
	else
		record "$name" 1
	fi
done

# --- Hangs ---------------------------------------------------------------------------------------
c_fifo_model() { mkfifo "$1/f.onnx"; printf '%s\n' "${sim[@]}" "$1/f.onnx"; }
c_fifo_inspect() { mkfifo "$1/f.onnx"; printf '%s\n' inspect "$1/f.onnx"; }
c_fifo_convert() { mkfifo "$1/f.onnx"; printf '%s\n' convert --fp16 "$1/f.onnx"; }
refused "model FIFO (build)" "FIFO" c_fifo_model
refused "model FIFO (inspect)" "FIFO" c_fifo_inspect
refused "model FIFO (convert)" "FIFO" c_fifo_convert

# stdout a pipe nobody reads: a signal or the timeout acts at once.
for what in SIGINT SIGTERM timeout; do
	fresh
	extra=()
	want=130
	case $what in SIGTERM) want=143 ;; timeout) want=124 extra=(--timeout 2s) ;; esac
	rm -f "$work/rc"
	(
		env "$marker" "$tb" --backend sim --sim-speed 1 --sim-tactics 64 --sim-iterations 256 --no-timing-cache --progress json --verbose "${extra[@]}" "$d/m.onnx" 2>/dev/null &
		echo $! >"$work/pid"
		wait $!
		echo $? >"$work/rc"
	) | sleep 30 &
	reader=$!
	sleep "$fill_wait"
	[ "$what" != timeout ] && kill "-${what#SIG}" "$(cat "$work/pid")"
	for _ in $(seq 300); do [ -s "$work/rc" ] && break; sleep 0.05; done
	got=$(cat "$work/rc" 2>/dev/null)
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null
	if [ "$got" = "$want" ]; then record "stdout not read: $what acts" 1; else record "stdout not read: $what acts" 0 "exit '${got}' after 15 s, want $want"; fi
done

# `| head -1`: the build finishes and the engine is written, exit 0, said once on stderr.
fresh
env "$marker" "$tb" --backend sim --sim-speed 20 --no-timing-cache "$d/m.onnx" 2>"$work/err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
if [ "$rc" = 0 ] && head -c 23 "$d/m.engine" 2>/dev/null | grep -q TRTBUILD-SIMULATED-PLAN && [ "$(grep -c 'stdout was closed' "$work/err")" = 1 ]; then
	record "stdout closed (| head -1)" 1
else
	record "stdout closed (| head -1)" 0 "exit $rc: $(cat "$work/err")"
fi

# --- Smaller, same class ---------------------------------------------------------------------
c_empty_strict() { : >"$1/c.cache"; printf '%s\n' --backend sim --sim-speed 50 "$1/m.onnx" --timing-cache "$1/c.cache" --strict-cache; }
c_nan() { printf '%s\n' --backend sim --sim-speed NaN "$1/m.onnx"; }
c_tiny() { printf '%s\n' --backend sim --sim-speed 1e-300 "$1/m.onnx"; }
c_plugins() { printf '%s\n' "${sim[@]}" "$1/m.onnx" --plugins a.so,,b.so; }
c_name() { printf '%s\n' "${sim[@]}" "$1/x"$'\e'"]0;pwned"$'\a'"Built ok.onnx"; }
refused "empty cache + --strict-cache" "is empty" c_empty_strict
refused "--sim-speed NaN" "invalid --sim-speed" c_nan
refused "--sim-speed 1e-300" "invalid --sim-speed" c_tiny
refused "empty --plugins item" "empty item" c_plugins
refused "ESC in a file name is quoted" '\x1b]0;pwned\a' c_name

fresh
: >"$d/c.cache"
run --backend sim --sim-speed 50 --progress plain "$d/m.onnx" --timing-cache "$d/c.cache"
if [ "$rc" = 0 ] && [[ "$out" == *"is empty"* ]] && [ -s "$d/c.cache" ]; then record "empty cache: warned, replaced" 1; else record "empty cache: warned, replaced" 0 "exit $rc"; fi

# A signal in the first milliseconds takes the documented path: exit 130 with a message (a
# process killed by the signal also gives status 130 in a shell, but says nothing). The signal
# is sent the moment main has installed its handlers, which trtbuild shows by ignoring SIGPIPE
# right after (SigIgn in /proc/PID/status); before main no Go program can handle a signal. The
# process is started with SIGINT at its default action, as from a terminal (a background job
# of a script would start with SIGINT ignored).
for i in $(seq "$early_runs"); do
	fresh
	env --default-signal=INT "$marker" "$tb" --backend sim --sim-speed 5 --no-timing-cache --progress quiet "$d/m.onnx" 2>"$work/err" &
	p=$!
	for _ in $(seq 2000); do
		mask=$(sed -n 's/^SigIgn:\s*//p' "/proc/$p/status" 2>/dev/null)
		[ -n "$mask" ] && (((16#$mask >> 12) & 1)) && break
	done
	kill -INT "$p" 2>/dev/null
	wait "$p"
	rc=$?
	if [ "$rc" = 130 ] && grep -qiE 'interrupted|cancel' "$work/err"; then
		record "SIGINT as soon as main starts" 1
	else
		record "SIGINT as soon as main starts" 0 "exit $rc, stderr: $(cat "$work/err")"
	fi
	rm -rf "$d"
done

# --- Cancel storm ------------------------------------------------------------------------------
for i in $(seq "$storm_runs"); do
	fresh
	echo GOOD-OLD-ENGINE >"$d/m.engine"
	good=$(sha256sum <"$d/m.engine")
	kind=$((RANDOM % 3))
	delay="0.$((RANDOM % storm_delay))$((RANDOM % 10))"
	env "$marker" "$tb" --backend sim --sim-speed $((RANDOM % 6 + 3)) --timing-cache "$d/c.cache" --progress plain "$d/m.onnx" >/dev/null 2>&1 &
	p=$!
	sleep "$delay"
	case $kind in
	0) kill -INT "$p" 2>/dev/null; want=130 ;;
	1) kill -TERM "$p" 2>/dev/null; want=143 ;;
	2) kill -INT "$p" 2>/dev/null; sleep 0.0$((RANDOM % 9 + 1)); kill -INT "$p" 2>/dev/null; want=130 ;;
	esac
	wait "$p"
	rc=$?
	sig=(SIGINT SIGTERM "double SIGINT")
	name="cancel storm"
	left=$(workers)
	if [ "$rc" = 0 ]; then
		# Finished before the signal: the engine must be the new one, whole.
		if ! head -c 23 "$d/m.engine" | grep -q TRTBUILD-SIMULATED-PLAN; then record "$name" 0 "${sig[$kind]} at ${delay}s: exit 0 but no new engine"; continue; fi
	elif [ "$rc" != "$want" ]; then
		record "$name" 0 "${sig[$kind]} at ${delay}s: exit $rc, want $want"
		continue
	elif [ "$(sha256sum <"$d/m.engine")" != "$good" ]; then
		record "$name" 0 "${sig[$kind]} at ${delay}s: the old engine changed"
		continue
	fi
	if [ -n "$(temps "$d")" ]; then record "$name" 0 "${sig[$kind]} at ${delay}s: temp left: $(temps "$d")"; continue; fi
	if [ -n "$left" ]; then record "$name" 0 "${sig[$kind]} at ${delay}s: worker $left left running"; kill -KILL $left 2>/dev/null; continue; fi
	record "$name" 1
	rm -rf "$d"
done

# --- Nothing anywhere at the end ----------------------------------------------------------------
left=$(workers)
if [ -z "$left" ]; then record "no worker left at the end" 1; else record "no worker left at the end" 0 "$left"; kill -KILL $left 2>/dev/null; fi
if [ -z "$(temps "$work")" ]; then record "no temp file anywhere at the end" 1; else record "no temp file anywhere at the end" 0 "$(temps "$work" | head -3)"; fi

# --- Table ------------------------------------------------------------------------------------
total_t=0 total_h=0 total_f=0
printf '%-58s %6s %6s %6s\n' case tried held failed
for name in "${order[@]}"; do
	printf '%-58s %6d %6d %6d\n' "$name" "${tried[$name]}" "${held[$name]}" "${failed[$name]}"
	total_t=$((total_t + tried[$name])) total_h=$((total_h + held[$name])) total_f=$((total_f + failed[$name]))
done
printf '%-58s %6d %6d %6d\n' TOTAL "$total_t" "$total_h" "$total_f"
if [ "$total_f" != 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failures[@]}"
	exit 1
fi
