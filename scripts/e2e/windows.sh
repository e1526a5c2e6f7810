#!/usr/bin/env bash
# trtbuild.exe, the Windows build, cross-compiled here and run under Wine: version, inspect,
# convert --fp16, a simulated build in plain and JSON modes whose events match the Linux build's
# of the same model, an engine-cache hit, -o NUL, cancels by Ctrl-C (Wine turns a SIGINT to the
# program into CTRL_C_EVENT), a second Ctrl-C, a failed build, and the parent killed outright
# (the Job Object must take the worker with it). Every failed or cancelled build must leave the
# engine that was there untouched.
#
# Exits 4 with a message when mingw-w64 or Wine is missing (scripts/wine.sh), 1 when a check
# failed. Prints one line per check and "windows: N of M held".
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

wine_sh="$root/scripts/wine.sh"
if ! prefix="$("$wine_sh" prefix)"; then
	rc=$?
	[ "$rc" = 4 ] && echo "skipping the Windows checks: mingw-w64 or Wine is missing (apt-get install g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix wine64)"
	exit "$rc"
fi
wine=/usr/lib/wine/wine64
[ -x "$wine" ] || wine="$(command -v wine64)"
export WINEPREFIX="$prefix" WINEDEBUG=-all

work="$(mktemp -d)"
# Windows processes show their command lines with the exe's Windows path (Z:\tmp\...), so they are
# matched by the work folder's name with any separator.
wk="$(basename "$work")"
cleanup() {
	# No Windows process of this run may outlive it.
	pkill -KILL -f "$wk.trtbuild" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "== building trtbuild.exe (windows/amd64) and trtbuild (linux)"
"$wine_sh" build "$work/trtbuild.exe"
go build -o "$work/trtbuild" ./cmd/trtbuild
mkdir -p "$work/m" "$work/lx/m"
cp testdata/models/convnet.onnx testdata/models/dynamic_batch.onnx "$work/m/"
cp testdata/models/convnet.onnx "$work/lx/m/"
cd "$work"

held=0
total=0
failures=()
check() { # check NAME CONDITION-COMMAND...
	local name="$1"
	shift
	total=$((total + 1))
	if "$@"; then
		held=$((held + 1))
		echo "ok    $name"
	else
		failures+=("$name")
		echo "FAIL  $name"
	fi
}

# win runs trtbuild.exe under Wine in the work folder, stdin from /dev/null (no console input).
win() { "$wine" "$work/trtbuild.exe" "$@" </dev/null; }

# winbg starts trtbuild.exe in the background with its output in $1.out/$1.err; its exit status
# goes to $1.rc. Sets bgpid (the Wine process of trtbuild.exe).
winbg() {
	local name="$1"
	shift
	(
		rc=0
		"$wine" "$work/trtbuild.exe" "$@" </dev/null >"$name.out" 2>"$name.err" || rc=$?
		echo "$rc" >"$name.rc"
	) &
	bgpid=$!
}

# waitfor FILE PATTERN: wait (up to 120 s on a busy machine) until FILE holds PATTERN.
waitfor() {
	local i
	for i in $(seq 1200); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# waitrc NAME: wait for a background run's exit status and print it.
waitrc() {
	local i
	for i in $(seq 1200); do
		[ -s "$1.rc" ] && { cat "$1.rc"; return 0; }
		sleep 0.1
	done
	echo timeout
}

# exepid: the Linux pid of the Windows process whose command line holds PATTERN.
exepids() { pgrep -f "$1" || true; }

# gone PATTERN: no process whose command line holds PATTERN is left (waits up to 60 s).
gone() {
	local i
	for i in $(seq 600); do
		[ -z "$(exepids "$1")" ] && return 0
		sleep 0.1
	done
	pgrep -af "$1" >&2 || true
	return 1
}

sameas() { cmp -s "$1" "$2"; }

echo "== version, inspect, convert"
win version >version.out 2>&1 && rcv=0 || rcv=$?
check "version exits 0 and names windows/amd64" bash -c "[ $rcv = 0 ] && grep -q 'windows/amd64' version.out"
win version --json >version.json 2>/dev/null || true
check "version --json is one object with os windows" python3 -c '
import json,sys
v=json.load(open("version.json"))
sys.exit(0 if "windows" in json.dumps(v) else 1)'

./trtbuild inspect m/convnet.onnx >lx/inspect.out 2>&1 || true
win inspect 'm\convnet.onnx' >inspect.out 2>&1 && rci=0 || rci=$?
check "inspect exits 0 and prints what Linux prints" bash -c "[ $rci = 0 ] && diff <(sed 's#\\\\#/#g' inspect.out | tr -d '\r') lx/inspect.out >inspect.diff"

./trtbuild convert --fp16 m/convnet.onnx -o lx/convnet_fp16.onnx >/dev/null 2>&1
win convert --fp16 'm\convnet.onnx' -o 'm\convnet_fp16.onnx' >convert.out 2>&1 && rcc=0 || rcc=$?
check "convert --fp16 exits 0 and writes the bytes Linux writes" bash -c "[ $rcc = 0 ] && cmp -s m/convnet_fp16.onnx lx/convnet_fp16.onnx"

echo "== simulated builds"
sim=(--backend sim --sim-speed 20 --no-timing-cache)
# The Linux build runs in lx/ with the same relative paths: an engine names its model as given.
(cd lx && ../trtbuild "${sim[@]}" --progress json m/convnet.onnx -o m/a.engine >events.jsonl 2>/dev/null)
# Forward slashes, which Windows takes too, so that the engine (it names its model as given) is
# byte for byte the Linux one; the other checks give backslashed paths.
win "${sim[@]}" --progress json m/convnet.onnx -o m/a.engine >events.jsonl 2>events.err && rcj=0 || rcj=$?
python3 "$root/scripts/wine/events.py" lx/events.jsonl >lx/events.norm
python3 "$root/scripts/wine/events.py" events.jsonl >events.norm 2>/dev/null || true
check "JSON build exits 0 with events that match the Linux build's ($(wc -l <lx/events.norm) events)" \
	bash -c "[ $rcj = 0 ] && diff lx/events.norm events.norm >events.diff"
check "the engine is the one Linux builds" sameas m/a.engine lx/m/a.engine

win "${sim[@]}" 'm\convnet.onnx' -o 'm\plain.engine' >plain.out 2>plain.err && rcp=0 || rcp=$?
check "plain build exits 0, says Built, no escape sequences when redirected" \
	bash -c "[ $rcp = 0 ] && grep -q '^Built' plain.out && ! grep -q $'\x1b' plain.out plain.err"

win "${sim[@]}" --engine-cache 'ec' 'm\convnet.onnx' -o 'm\c1.engine' >/dev/null 2>&1 || true
win "${sim[@]}" --engine-cache 'ec' --progress json 'm\convnet.onnx' -o 'm\c2.engine' >cache.jsonl 2>cache.err && rch=0 || rch=$?
check "engine-cache hit on the second build (cached: true, same engine)" \
	bash -c "[ $rch = 0 ] && grep -q '\"cached\":true' cache.jsonl && cmp -s m/c1.engine m/c2.engine"

win "${sim[@]}" 'm\convnet.onnx' -o NUL >nul.out 2>&1 && rcn=0 || rcn=$?
check "-o NUL builds and keeps nothing" bash -c "[ $rcn = 0 ] && [ ! -e m/NUL ] && [ ! -e NUL ] && [ ! -e nul ]"

echo "== failures and cancels keep the engine that was there"
printf 'previous engine\n' >prev.engine
cp prev.engine m/keep.engine
win --backend sim --sim-speed 20 --sim-scenario fail 'm\convnet.onnx' -o 'm\keep.engine' >fail.out 2>&1 && rcf=0 || rcf=$?
check "a failed build exits non-zero and leaves the old engine" bash -c "[ $rcf != 0 ] && cmp -s prev.engine m/keep.engine && ! ls m/.keep.engine.trtbuild-* >/dev/null 2>&1"
# The fail scenario fails as TensorRT does, on a node it names (TensorRT's phases name none).
check "the failure is TensorRT's error naming the node" grep -q 'Could not find any implementation for node [^ ]' fail.out

winbg cancel --backend sim --no-timing-cache --progress json 'm\convnet.onnx' -o 'm\keep.engine'
waitfor cancel.out '"type":"step"' || true
pkill -INT -f "$wk.trtbuild\\.exe --backend sim --no-timing-cache --progress json" || true
rc="$(waitrc cancel)"
check "Ctrl-C (CTRL_C_EVENT) cancels: exit 130, status cancelled, old engine kept (exit $rc)" \
	bash -c "[ '$rc' = 130 ] && grep -q '\"status\":\"cancelled\"' cancel.out && cmp -s prev.engine m/keep.engine"
check "no worker left after the cancel" gone "$wk.trtbuild\\.exe.*__worker"

winbg hard --backend sim --sim-scenario slow-cancel --no-timing-cache --progress json 'm\convnet.onnx' -o 'm\keep.engine'
waitfor hard.out '"type":"step"' || true
pkill -INT -f "$wk.trtbuild\\.exe --backend sim --sim-scenario slow-cancel" || true
waitfor hard.out 'cancel' || true
sleep 0.5
pkill -INT -f "$wk.trtbuild\\.exe --backend sim --sim-scenario slow-cancel" || true
rc="$(waitrc hard)"
check "a second Ctrl-C stops a slow cancel at once: exit 130, old engine kept (exit $rc)" \
	bash -c "[ '$rc' = 130 ] && cmp -s prev.engine m/keep.engine"
check "no worker left after the second Ctrl-C" gone "$wk.trtbuild\\.exe.*__worker"

echo "== the parent killed outright"
winbg killed --backend sim --no-timing-cache --progress json 'm\convnet.onnx' -o 'm\keep.engine'
waitfor killed.out '"type":"step"' || true
workers_before="$(exepids "$wk.trtbuild\\.exe.*__worker" | wc -l)"
pkill -KILL -f "$wk.trtbuild\\.exe --backend sim --no-timing-cache --progress json" || true
check "a worker ran during the build ($workers_before)" test "$workers_before" -ge 1
check "SIGKILL of the parent leaves no worker (Job Object, kill on close)" gone "$wk.trtbuild\\.exe.*__worker"
check "and the old engine untouched" sameas prev.engine m/keep.engine

echo "windows: $held of $total held"
if [ "${#failures[@]}" -gt 0 ]; then
	for f in "${failures[@]}"; do echo "failed: $f"; done
	pgrep -af "$wk" || true
	for f in inspect.diff events.diff events.err fail.out cancel.err cancel.rc hard.err hard.rc killed.err; do
		[ -s "$f" ] && { echo "--- $f"; head -40 "$f"; }
	done
	exit 1
fi
