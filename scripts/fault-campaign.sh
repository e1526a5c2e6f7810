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
# Two stages cover the engine cache: "second user", where another account plants entries,
# links and FIFOs in a shared cache and in folders it can write, and "concurrent builds", where
# builds of different settings share a cache and an output, wait on a held lock, or are
# SIGKILLed while storing. The "serve" stage attacks trtbuild serve (scripts/serveattack): clients
# leaving mid-stream, 1,000 reconnects with Last-Event-ID, slow readers, slow headers, bad
# bodies, cancel storms on queued and running builds, and a kill -9 of the server.
#
#   scripts/fault-campaign.sh            full: 60 random cancels within 1 s, 40 early signals,
#                                        5 rounds of 8 concurrent builds, 40 kills while storing,
#                                        1,000 reconnects and 5 queued cancel storms (serve)
#   FAULT_CAMPAIGN_QUICK=1 scripts/...   quick (CI): 10 random cancels within 0.5 s, 6 early
#                                        signals, 2 rounds of concurrent builds, 8 kills,
#                                        100 reconnects and 2 queued cancel storms
#
# Root-only cases (a character device that root could replace) use a private device node made
# with mknod in the work folder, never the machine's /dev/null. The "second user" stage needs
# root: it makes a throwaway account (useradd, removed on exit) and acts as it with setpriv or
# runuser; without root it is skipped, said in one line. Exits non-zero on any failure.
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
attacker="" # the second account of the "second user" stage, removed at the end
cleanup() {
	if [ -n "$attacker" ]; then userdel "$attacker" >/dev/null 2>&1; fi
	chmod -R u+rwx "$work" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin" "$work/tmp" "$work/cache"
go build -o "$work/bin/trtbuild" ./cmd/trtbuild || exit 1
tb="$work/bin/trtbuild"
# Go keeps its caches where they were: the campaign's own cache folder and HOME are trtbuild's.
GOCACHE=$(go env GOCACHE)
GOMODCACHE=$(go env GOMODCACHE)
export GOCACHE GOMODCACHE TMPDIR="$work/tmp" XDG_CACHE_HOME="$work/cache" HOME="$work" TERM=dumb
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

# judge_refused CASE WANT BEFORE AFTER: records whether the run just made ($rc, $out, $err) was
# refused: exit 2 with one stderr line containing WANT, nothing on stdout, no ESC byte, and
# BEFORE and AFTER, the sums of what must not change, the same.
judge_refused() {
	local name=$1 want=$2 before=$3 after=$4
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

# --- Refusals: outputs over the model, its data and each other; FIFOs, sockets and links planted
# where trtbuild reads or writes; escapes from a folder; hangs; bad values; matrix outputs -------
# Each must exit 2 with one line on stderr, write nothing to stdout and change nothing (the
# folders, $TMPDIR, the outside folder a planted link points to). The cases are a Go table,
# cmd/trtbuild's TestUnsafePathsRefused, which the test command runs too; here each of its cases
# is one row of this campaign's table.

# go_cases PATTERN PACKAGE: records each case (subtest) of the Go tests PATTERN names, as
# "refused: CASE"; a test that ran none is one failure, with what go test said.
go_cases() {
	local pattern=$1 pkg=$2 ok name msg cases=0
	while IFS=$'\t' read -r ok name msg; do
		record "refused: $name" "$ok" "$msg"
		cases=$((cases + 1))
	done < <(TMPDIR="$work/gotmp" go test -count=1 -run "$pattern" -json "$pkg" 2>"$work/gotest.err" | python3 -c '
import json, sys
output, case_failed = {}, False
for raw in sys.stdin:
    try:
        ev = json.loads(raw)
    except ValueError:
        continue
    test = ev.get("Test", "")
    if "/" not in test:
        if ev.get("Action") == "fail" and test and not case_failed:
            print("0\t" + test + "\tfailed outside its cases")
        continue
    name = test.split("/", 1)[1].replace("_", " ")
    if ev.get("Action") == "output":
        output.setdefault(test, []).append(ev["Output"].strip())
    elif ev.get("Action") == "pass":
        print("1\t" + name + "\t")
    elif ev.get("Action") == "fail":
        case_failed = True
        print("0\t" + name + "\t" + " ".join(l for l in output.get(test, []) if l and not l.startswith("---"))[:300])
')
	if [ "$cases" = 0 ]; then
		record "refused: go test $pattern $pkg ran" 0 "$(head -5 "$work/gotest.err" | tr '\n' ' ')"
	fi
}
mkdir -p "$work/gotmp"
go_cases '^TestUnsafePathsRefused$' ./cmd/trtbuild

# --- Devices, FIFOs, sockets, links as outputs -----------------------------------------------

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
# Names trtbuild chooses itself beside a model (no -o): a link planted there by another user is
# never followed, so the file it points to is never replaced.

# The parent SIGKILLed mid-build: no temporary engine anywhere, and the worker gone, even when
# the builder ignores cancel requests (how soon is measured by scripts/bench/worker-orphan.sh; a
# process that has exited is gone, a zombie included).
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
		if [ $(($(date +%s%N) - start)) -gt 60000000000 ]; then break; fi
		sleep 0.02
	done
	ms=$((($(date +%s%N) - start) / 1000000))
	name="parent SIGKILL${ignore:+ (builder ignores cancel)}: worker gone"
	if [ -z "$w" ]; then
		record "$name" 0 "no worker found"
	elif [ -d "/proc/$w" ] && ! grep -q ') Z ' "/proc/$w/stat" 2>/dev/null; then
		record "$name" 0 "worker still running ${ms} ms after its parent"
		kill -KILL "$w" 2>/dev/null
	elif [ "$(sha256sum <"$d/m.engine")" != "$good" ] || [ -n "$(temps "$d")" ]; then
		record "$name" 0 "engine changed or temp left: $(temps "$d")"
	else
		record "$name" 1
	fi
done

# --- Hangs ---------------------------------------------------------------------------------------

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
	env "$marker" "$tb" --backend sim --sim-speed $((RANDOM % 6 + 3)) --timing-cache "$d/c.cache" --progress plain "$d/m.onnx" >/dev/null 2>"$d/stderr" &
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
		# The signal came after the new engine was put in place (while the manifest or the
		# last progress was written): the exit status is the signal's, and stderr must say
		# that the engine is built, and the engine must be the new one, whole.
		if ! grep -q "the engine .* is built" "$d/stderr" || ! head -c 23 "$d/m.engine" | grep -q TRTBUILD-SIMULATED-PLAN; then
			record "$name" 0 "${sig[$kind]} at ${delay}s: the old engine changed"
			continue
		fi
	fi
	if [ -n "$(temps "$d")" ]; then record "$name" 0 "${sig[$kind]} at ${delay}s: temp left: $(temps "$d")"; continue; fi
	if [ -n "$left" ]; then record "$name" 0 "${sig[$kind]} at ${delay}s: worker $left left running"; kill -KILL $left 2>/dev/null; continue; fi
	record "$name" 1
	rm -rf "$d"
done

# --- Helpers of the engine cache stages --------------------------------------------------------
# sha FILE: the SHA-256 of a regular file (not through a link), "-" for anything else.
sha() { if [ -f "$1" ] && [ ! -L "$1" ]; then sha256sum <"$1" | cut -c1-64; else echo -; fi; }

# key_of ARGS...: the build key that a build with ARGS (model and build flags) looks up.
key_of() { "$tb" key "$@" 2>/dev/null | head -1; }

# plan_prec ENGINE: the precision the simulated plan says it was built for (default = fp32),
# read by `trtbuild engine inspect` from a copy with no manifest beside it.
plan_prec() {
	rm -rf "$work/insp"
	mkdir -p "$work/insp"
	cp "$1" "$work/insp/x.engine" 2>/dev/null || return
	"$tb" engine inspect "$work/insp/x.engine" 2>/dev/null | sed -n 's/^plan .*; precision \([^ ;]*\).*/\1/p'
	rm -rf "$work/insp"
}

# want_prec SETTING: the plan precision a build with the flags SETTING must have.
want_prec() { case " $1 " in *" --fp16 "*) echo fp16 ;; *" --bf16 "*) echo bf16 ;; *) echo default ;; esac; }

# entry_bad CACHE KEY [PRECISION]: why the cache's entry for KEY is not whole and its own
# (nothing when it is): a folder with a regular engine and manifest, none of them writable by
# group or others, the manifest naming KEY and the engine's size and SHA-256, and, given, the
# plan's precision.
entry_bad() {
	local e="$1/entries/$2" want=${3:-} f m
	if [ -L "$e" ] || [ ! -d "$e" ]; then echo "no entry folder $e"; return; fi
	for f in "$e" "$e/engine" "$e/manifest.json"; do
		if [ "$f" != "$e" ] && { [ -L "$f" ] || [ ! -f "$f" ]; }; then echo "${f##*/} is not a regular file"; return; fi
		m=$(stat -c %a "$f")
		if (((8#$m & 8#022) != 0)); then echo "${f#"$1"/} has mode $m"; return; fi
	done
	local msum mkey bytes
	msum=$(grep -oE '"sha256": *"sha256:[0-9a-f]{64}"' "$e/manifest.json" | grep -oE '[0-9a-f]{64}')
	mkey=$(grep -oE '"key": *"[^"]*"' "$e/manifest.json" | sed 's/^"key": *"//; s/"$//')
	bytes=$(grep -oE '"bytes": *[0-9]+' "$e/manifest.json" | grep -oE '[0-9]+$')
	if [ "$mkey" != "$2" ]; then echo "the manifest's key is '$mkey'"; return; fi
	if [ "$msum" != "$(sha "$e/engine")" ]; then echo "the engine's SHA-256 is not the manifest's '$msum'"; return; fi
	if ! printf '%s\n' "$bytes" | grep -qx "$(stat -c %s "$e/engine")"; then echo "the engine's size is not the manifest's"; return; fi
	if [ -n "$want" ] && [ "$(plan_prec "$e/engine")" != "$want" ]; then echo "the engine is a '$(plan_prec "$e/engine")' plan, want $want"; return; fi
}

# --- A second user on the machine --------------------------------------------------------------
# An attacker with an account of their own plants files where root's builds look: entries in a
# shared (sticky, world-writable) engine cache, links where trtbuild writes a file it names
# itself, FIFOs where it reads. None may be served, followed or hang a build, and the
# root-only file the links point at must stay as it is. Needs root (to make the account).

# as_att CMD...: runs CMD as the attacker.
as_att() {
	if [ "$as_how" = setpriv ]; then
		setpriv --reuid="$auid" --regid="$agid" --clear-groups -- "$@"
	else
		runuser -u "$attacker" -- "$@"
	fi
}

# secret_state: kind, mode, owner, links and SHA-256 of root's secret file.
secret_state() { echo "$(stat -c '%F %a %u %h' "$secret" 2>&1) $(sha "$secret")"; }

# forge_manifest KEY FILE: a manifest naming KEY that describes FILE (its size and SHA-256).
forge_manifest() {
	printf '{"manifest_version": 1, "key": "%s", "engine": {"file": "engine", "bytes": %s, "sha256": "sha256:%s"}}\n' \
		"$1" "$(stat -L -c %s "$2")" "$(sha256sum <"$2" | cut -c1-64)"
}

# shared MODE: a new root-owned folder with MODE under the attacker-reachable $u, in $s.
un=0
shared() {
	un=$((un + 1))
	s="$u/s$un"
	mkdir -m "$1" "$s"
}

# plant_entry CACHE KEY: the attacker makes CACHE/entries/KEY (and entries/) with the
# forged engine and a manifest that matches it, all the attacker's, 0755/0644; in $e.
plant_entry() {
	e="$1/entries/$2"
	as_att mkdir -p "$e"
	as_att chmod 755 "$1/entries" "$e"
	as_att cp "$evil" "$e/engine"
	forge_manifest "$2" "$evil" | as_att tee "$e/manifest.json" >/dev/null
	as_att chmod 644 "$e/engine" "$e/manifest.json"
}

# not_served NAME ENGINE BAD...: the build just run must have exited 0 with a simulated plan
# at ENGINE equal to none of the files BAD, said on stderr that the entry was not used, and
# left the secret as it was.
not_served() {
	local name=$1 o=$2 b
	shift 2
	if [ "$rc" != 0 ]; then record "$name" 0 "exit $rc, want 0: $err"; return; fi
	if ! head -c 23 "$o" 2>/dev/null | grep -q TRTBUILD-SIMULATED-PLAN; then record "$name" 0 "no simulated plan at -o"; return; fi
	for b in "$@"; do
		if [ "$(sha "$o")" = "$(sha "$b")" ]; then record "$name" 0 "the planted engine was served (-o = ${b##*/})"; return; fi
	done
	if [[ "$out" == *"Engine cache hit"* ]]; then record "$name" 0 "stdout reports a cache hit: $out"; return; fi
	if [[ "$err" != *"was not used"* ]]; then record "$name" 0 "stderr does not say the entry was not used: $err"; return; fi
	if [ "$(secret_state)" != "$secret_was" ]; then record "$name" 0 "root's secret changed: $(secret_state)"; return; fi
	record "$name" 1
}

# replaced_by_root NAME CACHE KEY [PRECISION]: after a build that did not use a planted
# entry, the entry is root's own and whole.
replaced_by_root() {
	local name=$1 e="$2/entries/$3" why f
	why=$(entry_bad "$2" "$3" "${4:-}")
	if [ -z "$why" ]; then
		for f in "$e" "$e/engine" "$e/manifest.json"; do
			if [ "$(stat -c %u "$f")" != 0 ]; then why="${f#"$2"/} is owned by uid $(stat -c %u "$f")"; break; fi
		done
	fi
	if [ -n "$why" ]; then record "$name" 0 "$why"; else record "$name" 1; fi
}

stage_second_user() {
	auid=$(id -u "$attacker") agid=$(id -g "$attacker")
	u="$work/u"
	mkdir -m 711 "$u"
	chmod 711 "$work" # the attacker reaches $u only
	secret="$work/secret"
	(umask 077 && head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$secret")
	chmod 600 "$secret"
	secret_was=$(secret_state)
	if ! as_att true 2>/dev/null; then
		echo "second user: stage skipped: cannot run a command as $attacker with $as_how"
		return
	fi
	if as_att cat "$secret" >/dev/null 2>&1; then
		echo "second user: stage skipped: $attacker can read root's 0600 file"
		return
	fi
	mkdir -m 755 "$u/att"
	chown "$auid:$agid" "$u/att"
	evil="$u/att/evil"
	printf 'TRTBUILD-SIMULATED-PLAN forged by %s\n' "$attacker" | as_att tee "$evil" >/dev/null
	local key key16 name

	# 1. Entries planted in a shared cache before root's first build there.
	local kind
	for kind in link plain nomanifest; do
		fresh
		shared 1777
		key=$(key_of "${sim[@]}" "$d/m.onnx")
		plant_entry "$s" "$key"
		case $kind in
		link)
			as_att rm "$e/engine"
			as_att ln -s "$secret" "$e/engine"
			forge_manifest "$key" "$secret" | as_att tee "$e/manifest.json" >/dev/null
			name="2nd user: planted entry, engine a link to root's file"
			;;
		plain) name="2nd user: planted engine + matching manifest" ;;
		nomanifest)
			as_att rm "$e/manifest.json"
			name="2nd user: planted entry without manifest"
			;;
		esac
		run "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$s" -o "$d/v.engine"
		not_served "$name" "$d/v.engine" "$evil" "$secret"
		replaced_by_root "2nd user: planted entries replaced by root's own" "$s" "$key" default
	done
	# Root's own entry, moved by the attacker (who made entries/) to the name of another key.
	fresh
	shared 1777
	as_att mkdir -m 755 "$s/entries"
	key=$(key_of "${sim[@]}" "$d/m.onnx")
	key16=$(key_of "${sim[@]}" "$d/m.onnx" --fp16)
	run "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$s" -o "$d/fp32.engine"
	name="2nd user: root's entry moved to another key"
	if [ "$rc" != 0 ] || [ -n "$(entry_bad "$s" "$key")" ]; then
		record "$name" 0 "setup: the first build exited $rc: $err $(entry_bad "$s" "$key")"
	else
		cp "$s/entries/$key/engine" "$d/moved.engine"
		as_att mv "$s/entries/$key" "$s/entries/$key16"
		run "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$s" --fp16 -o "$d/v.engine"
		if [ "$rc" = 0 ] && [ "$(plan_prec "$d/v.engine")" != fp16 ]; then
			record "$name" 0 "-o is a '$(plan_prec "$d/v.engine")' plan, want fp16"
		else
			not_served "$name" "$d/v.engine" "$d/moved.engine"
		fi
		replaced_by_root "2nd user: planted entries replaced by root's own" "$s" "$key16" fp16
	fi

	# 2. A link planted where trtbuild writes a file it names itself (the manifest beside the
	# engine), in folders the attacker can write: refused before anything is written.
	local where before after
	for where in "attacker's" 0777 1777; do
		case $where in
		"attacker's") shared 755 && chown "$auid:$agid" "$s" ;;
		*) shared "$where" ;;
		esac
		cp "$model_src" "$s/m.onnx"
		as_att ln -s "$secret" "$s/m.engine.json"
		before=$(sums "$s" "$TMPDIR")
		run "${sim[@]}" --progress quiet "$s/m.onnx"
		after=$(sums "$s" "$TMPDIR")
		if [ "$(secret_state)" != "$secret_was" ]; then
			record "2nd user: m.engine.json link ($where folder)" 0 "root's secret changed: $(secret_state)"
		else
			judge_refused "2nd user: m.engine.json link ($where folder)" "symbolic link" "$before" "$after"
		fi
	done
	# The same on an engine cache hit: a build fills root's cache, then the attacker swaps the
	# manifest beside the engine for a link.
	fresh
	shared 755
	chown "$auid:$agid" "$s"
	cp "$model_src" "$s/m.onnx"
	name="2nd user: m.engine.json link before a cache hit"
	run "${sim[@]}" --progress quiet "$s/m.onnx" --engine-cache "$d/cache"
	key=$(key_of "${sim[@]}" "$s/m.onnx")
	if [ "$rc" != 0 ] || [ -n "$(entry_bad "$d/cache" "$key")" ]; then
		record "$name" 0 "setup: the first build exited $rc: $err $(entry_bad "$d/cache" "$key")"
	else
		as_att rm "$s/m.engine.json"
		as_att ln -s "$secret" "$s/m.engine.json"
		before=$(sums "$s" "$d/cache" "$TMPDIR")
		run "${sim[@]}" --progress quiet "$s/m.onnx" --engine-cache "$d/cache"
		after=$(sums "$s" "$d/cache" "$TMPDIR")
		if [ "$(secret_state)" != "$secret_was" ]; then
			record "$name" 0 "root's secret changed: $(secret_state)"
		else
			judge_refused "$name" "symbolic link" "$before" "$after"
		fi
	fi

	# 3. FIFOs planted as the lock, an entry's engine and its manifest: the build ends by itself
	# (0 or 2), never held until the 60 s limit kills it. Once in a sticky shared folder with
	# the attacker untrusted, once in a 0777 one with the attacker trusted (so the entry's
	# files are opened, not refused for their owner).
	local what mode trust
	for what in lock engine manifest.json; do
		for mode in 1777 0777; do
			trust=self
			[ "$mode" = 0777 ] && trust=$attacker
			fresh
			shared "$mode"
			key=$(key_of "${sim[@]}" "$d/m.onnx")
			if [ "$what" = lock ]; then
				as_att mkfifo "$s/lock"
				name="2nd user: cache lock a FIFO"
			else
				plant_entry "$s" "$key"
				as_att rm "$e/$what"
				as_att mkfifo -m 644 "$e/$what"
				name="2nd user: entry $what a FIFO"
			fi
			run "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$s" --engine-cache-trust "$trust" -o "$d/f.engine"
			if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
				record "$name" 0 "($mode folder) killed by the 60 s limit: the build hung"
			elif [ "$rc" != 0 ] && [ "$rc" != 2 ]; then
				record "$name" 0 "($mode folder) exit $rc, want 0 or 2: $err"
			elif [ "$what" = lock ] && [[ "$err" != *"lock file"* ]]; then
				record "$name" 0 "($mode folder) exit $rc, no clear error about the lock file: $err"
			elif [ "$what" != lock ] && [ "$rc" = 0 ]; then
				not_served "$name" "$d/f.engine" "$evil"
			else
				record "$name" 1
			fi
		done
	done

	# 4. The lock a link to a path that does not exist (in a folder only root may write): the
	# build must not create it.
	mkdir -m 700 "$u/rootonly"
	for mode in 1777 0777; do
		fresh
		shared "$mode"
		as_att ln -s "$u/rootonly/made-by-lock" "$s/lock"
		run "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$s" -o "$d/l.engine"
		name="2nd user: cache lock a dangling link: target not made"
		if [ -e "$u/rootonly/made-by-lock" ] || [ -L "$u/rootonly/made-by-lock" ]; then
			record "$name" 0 "($mode folder) exit $rc, the link's target was created: $(ls -l "$u/rootonly")"
			rm -f "$u/rootonly/made-by-lock"
		elif [ "$rc" -ge 124 ]; then
			record "$name" 0 "($mode folder) exit $rc: killed or hung: $err"
		elif [[ "$err" != *"lock"* ]]; then
			record "$name" 0 "($mode folder) exit $rc, stderr does not name the lock: $err"
		elif [ ! -L "$s/lock" ]; then
			record "$name" 0 "($mode folder) the planted link was replaced: $(ls -l "$s")"
		else
			record "$name" 1
		fi
	done

	# 5. A trusted user's entry (--engine-cache-trust names the attacker): served as it is, not
	# when a file or the folder is writable by group or others.
	local how
	for how in none engine:666 engine:664 manifest.json:666 manifest.json:664 .:777 .:775; do
		fresh
		shared 1777
		key=$(key_of "${sim[@]}" "$d/m.onnx")
		plant_entry "$s" "$key"
		[ "$how" != none ] && as_att chmod "${how#*:}" "$e/${how%:*}"
		run "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$s" --engine-cache-trust "$attacker" -o "$d/t.engine"
		if [ "$how" = none ]; then
			name="2nd user: trusted user's entry served (control)"
			if [ "$rc" = 0 ] && [ "$(sha "$d/t.engine")" = "$(sha "$evil")" ]; then
				record "$name" 1
			else
				record "$name" 0 "exit $rc, -o is not the trusted entry's engine: $err"
			fi
		elif [ "$rc" = 0 ] && [[ "$err" != *writable* ]]; then
			record "2nd user: trusted entry, g/o-writable file: not served" 0 "(${how%:*} ${how#*:}) stderr does not say what is writable: $err"
		else
			not_served "2nd user: trusted entry, g/o-writable file: not served" "$d/t.engine" "$evil"
		fi
	done

	# 6. A folder in serve's private state dir that the attacker owns (a chown that was not
	# recursive): the server does not start, in one line, exit 2, rather than serve engines from
	# it or write through a link its owner puts there; nothing is written in that folder.
	local sub st
	for sub in builds runs converted; do
		fresh
		st="$d/state"
		mkdir -m 700 "$st"
		mkdir -m 755 "$st/$sub"
		chown "$auid:$agid" "$st/$sub"
		before=$(sums "$st/$sub")
		run serve --listen 127.0.0.1:0 --state-dir "$st" --model-root "$d"
		after=$(sums "$st/$sub")
		judge_refused "2nd user: serve's state dir holds the attacker's $sub/" "belongs to user $auid" "$before" "$after"
	done
	# A state dir in a folder the attacker owns: she could swap it for a folder of hers while the
	# server runs, which then writes its files where she points.
	fresh
	mkdir -m 755 "$d/above"
	chown "$auid:$agid" "$d/above"
	mkdir -m 700 "$d/above/state"
	before=$(sums "$d/above")
	run serve --listen 127.0.0.1:0 --state-dir "$d/above/state" --model-root "$d"
	after=$(sums "$d/above")
	judge_refused "2nd user: serve's state dir is in the attacker's folder" "which belongs to user $auid" "$before" "$after"
	# The same through a link of the attacker's, to a folder of root's: she could point the link
	# elsewhere once the server runs. Refused before anything is made through it.
	fresh
	mkdir -m 700 "$d/target"
	ln -s "$d/target" "$d/via"
	chown -h "$auid:$agid" "$d/via"
	before=$(sums "$d/target")
	run serve --listen 127.0.0.1:0 --state-dir "$d/via/state" --model-root "$d"
	after=$(sums "$d/target")
	judge_refused "2nd user: serve's state dir is reached through the attacker's link" "which belongs to user $auid" "$before" "$after"
	chmod 700 "$work"
}

skip=""
as_how=""
if [ "$(id -u)" != 0 ]; then
	skip="not root (a second account is needed)"
elif ! command -v useradd >/dev/null 2>&1 || ! command -v userdel >/dev/null 2>&1; then
	skip="no useradd/userdel"
elif command -v setpriv >/dev/null 2>&1; then
	as_how=setpriv
elif command -v runuser >/dev/null 2>&1; then
	as_how=runuser
else
	skip="neither setpriv nor runuser"
fi
if [ -z "$skip" ]; then
	if uerr=$(useradd -M -N -s /usr/sbin/nologin "trtb-attacker-$$" 2>&1); then
		attacker="trtb-attacker-$$"
	else
		skip="useradd failed: ${uerr%%$'\n'*}"
	fi
fi
if [ -n "$skip" ]; then
	echo "second user: stage skipped: $skip"
else
	stage_second_user
	userdel "$attacker" >/dev/null 2>&1 && attacker=""
fi

# --- Concurrent builds -----------------------------------------------------------------------
# Builds that share an engine cache and an output, at once: each key's entry must be whole and
# of its own settings (an fp16 key never serves an fp32 plan), and a build SIGKILLed while it
# stores leaves nothing the next build does not clean.
settings=("" --fp16 --bf16 "--opt-level 0" "--opt-level 5" "--sim-seed 1" "--sim-seed 2" "--fp16 --sim-seed 3")
conc_rounds=5
lock_runs=3
kill_runs=40
if [ -n "$quick" ]; then
	conc_rounds=2
	lock_runs=1
	kill_runs=8
fi

for round in $(seq "$conc_rounds"); do
	fresh
	c="$d/cache"
	o="$d/out.engine"
	pids=()
	for i in "${!settings[@]}"; do
		# shellcheck disable=SC2086 # a setting is zero or more flags
		env "$marker" timeout -s KILL 60 "$tb" "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$c" -o "$o" ${settings[$i]} >"$d/out.$i" 2>"$d/err.$i" &
		pids+=($!)
	done
	bad=""
	for i in "${!settings[@]}"; do
		wait "${pids[$i]}"
		r=$?
		[ "$r" != 0 ] && bad+="'${settings[$i]}' exit $r: $(head -1 "$d/err.$i"); "
	done
	if [ -z "$bad" ]; then record "concurrent: 8 builds, one -o: all exit 0" 1; else record "concurrent: 8 builds, one -o: all exit 0" 0 "$bad"; fi

	built=() bad_entry="" bad_hit=""
	for i in "${!settings[@]}"; do
		# shellcheck disable=SC2086
		key=$(key_of "${sim[@]}" "$d/m.onnx" ${settings[$i]})
		why=$(entry_bad "$c" "$key" "$(want_prec "${settings[$i]}")")
		if [ -n "$why" ]; then
			record "concurrent: each key's entry whole, its own precision" 0 "'${settings[$i]}' (${key:0:18}): $why"
			continue
		fi
		record "concurrent: each key's entry whole, its own precision" 1
		built+=("$(sha "$c/entries/$key/engine")")
		# shellcheck disable=SC2086
		run "${sim[@]}" "$d/m.onnx" --engine-cache "$c" -o "$d/hit.$i.engine" ${settings[$i]}
		if [ "$rc" != 0 ] || [[ "$out" != *"Engine cache hit"* ]]; then
			record "concurrent: a later build hits the entry's engine" 0 "'${settings[$i]}' exit $rc, no cache hit: $err"
		elif [ "$(sha "$d/hit.$i.engine")" != "$(sha "$c/entries/$key/engine")" ]; then
			record "concurrent: a later build hits the entry's engine" 0 "'${settings[$i]}': the engine served is not the entry's"
		else
			record "concurrent: a later build hits the entry's engine" 1
		fi
	done
	if printf '%s\n' "${built[@]}" | grep -qx "$(sha "$o")"; then
		record "concurrent: -o is one of the built engines" 1
	else
		record "concurrent: -o is one of the built engines" 0 "-o (sha256 $(sha "$o" | cut -c1-12)) is none of the entries' engines"
	fi
	if grep -q "\"sha256:$(sha "$o")\"" "$o.json" 2>/dev/null; then
		record "concurrent: -o's manifest describes -o" 1
	else
		record "concurrent: -o's manifest describes -o" 0 "round $round: $o.json does not hold -o's SHA-256: $("$tb" engine inspect "$o" 2>&1 | grep -i problem)"
	fi
	left="$(temps "$d")$(find "$c/tmp" -mindepth 1 2>/dev/null)"
	if [ -z "$left" ]; then record "concurrent: nothing left in tmp/ or beside -o" 1; else record "concurrent: nothing left in tmp/ or beside -o" 0 "$(echo "$left" | head -3 | tr '\n' ' ')"; fi
done

# An fp16 and an fp32 build into the same default -o, both held at the lookup by another
# process's lock for 3 s, then building and storing at once.
for _ in $(seq "$lock_runs"); do
	fresh
	c="$d/cache"
	mkdir -p "$c"
	name="concurrent: fp16 + fp32 behind a held lock"
	flock "$c/lock" sleep 3 &
	holder=$!
	for _ in $(seq 200); do flock -n "$c/lock" true || break; sleep 0.01; done
	start=$(date +%s%N)
	env "$marker" timeout -s KILL 60 "$tb" "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$c" --fp16 >/dev/null 2>"$d/err.fp16" &
	p16=$!
	env "$marker" timeout -s KILL 60 "$tb" "${sim[@]}" --progress quiet "$d/m.onnx" --engine-cache "$c" >/dev/null 2>"$d/err.fp32" &
	p32=$!
	wait "$p16"
	r16=$?
	wait "$p32"
	r32=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	wait "$holder"
	k16=$(key_of "${sim[@]}" "$d/m.onnx" --fp16)
	k32=$(key_of "${sim[@]}" "$d/m.onnx")
	if [ "$r16" != 0 ] || [ "$r32" != 0 ]; then
		record "$name" 0 "exit $r16 (fp16) and $r32 (fp32): $(cat "$d/err.fp16" "$d/err.fp32")"
	elif [ "$ms" -lt 2000 ]; then
		record "$name" 0 "both ended in $ms ms: the lock did not hold them"
	elif [ -n "$(entry_bad "$c" "$k16" fp16)" ]; then
		record "$name" 0 "the fp16 entry: $(entry_bad "$c" "$k16" fp16)"
	elif [ -n "$(entry_bad "$c" "$k32" default)" ]; then
		record "$name" 0 "the fp32 entry: $(entry_bad "$c" "$k32" default)"
	elif [ "$(sha "$d/m.engine")" != "$(sha "$c/entries/$k16/engine")" ] && [ "$(sha "$d/m.engine")" != "$(sha "$c/entries/$k32/engine")" ]; then
		record "$name" 0 "m.engine is neither build's engine"
	else
		record "$name" 1
	fi
done

# SIGKILL at a random moment of a short build that stores into the cache; each time the next
# build (a miss: another seed) must remove what the killed one left in tmp/ and say so. The
# store is the last few milliseconds of a build, so half the kills come at a random moment of
# the whole build and half within its last 10 ms, timed by the build before (T ms).
fast=(--backend sim --sim-speed 2000 --no-timing-cache --progress quiet)
fresh
c="$d/cache"
finished=0 leftovers=0
start=$(date +%s%N)
run "${fast[@]}" "$d/m.onnx" --engine-cache "$c" --sim-seed 999 -o "$d/next.engine"
T=$((($(date +%s%N) - start) / 1000000))
for i in $(seq "$kill_runs"); do
	if ((i % 2)); then at=$((RANDOM % (T + 1))); else at=$((T - RANDOM % 11)); fi
	((at < 0)) && at=0
	env "$marker" "$tb" "${fast[@]}" "$d/m.onnx" --engine-cache "$c" --sim-seed $((1000 + i)) >/dev/null 2>&1 &
	p=$!
	sleep "$((at / 1000)).$(printf %03d $((at % 1000)))"
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	[ $? = 0 ] && finished=$((finished + 1))
	for _ in $(seq 100); do [ -z "$(workers)" ] && break; sleep 0.02; done
	left=$(find "$c/tmp" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	[ "$left" != 0 ] && leftovers=$((leftovers + 1))
	start=$(date +%s%N)
	run "${fast[@]}" "$d/m.onnx" --engine-cache "$c" --sim-seed $((5000 + i)) -o "$d/next.engine"
	T=$((($(date +%s%N) - start) / 1000000))
	name="concurrent: SIGKILL while storing: next build cleans"
	if [ "$rc" != 0 ]; then
		record "$name" 0 "the next build exited $rc: $err"
	elif [ "$left" != 0 ] && [[ "$err" != *"removed $left temporary"* ]]; then
		record "$name" 0 "$left left in tmp/, the next build's stderr does not say it removed them: $err"
	elif [ -n "$(find "$c/tmp" -mindepth 1 2>/dev/null)" ]; then
		record "$name" 0 "tmp/ not empty after the next build: $(ls -A "$c/tmp" | head -3 | tr '\n' ' ')"
	elif [ -n "$(temps "$d")" ]; then
		record "$name" 0 "temporary files beside the engine: $(temps "$d" | head -3 | tr '\n' ' ')"
	else
		record "$name" 1
	fi
done
bad=""
n_entries=0
for e in "$c"/entries/*; do
	[ -e "$e" ] || continue
	n_entries=$((n_entries + 1))
	why=$(entry_bad "$c" "${e##*/}")
	[ -n "$why" ] && bad+="${e##*/}: $why; "
done
[ -n "$(find "$c/tmp" -mindepth 1 2>/dev/null)" ] && bad+="tmp/ not empty; "
if [ -z "$bad" ] && [ "$n_entries" -gt 0 ]; then
	record "concurrent: SIGKILL while storing: all entries whole" 1
else
	record "concurrent: SIGKILL while storing: all entries whole" 0 "${bad:-no entries}"
fi
echo "SIGKILL while storing: $kill_runs kills, $finished builds finished first, $leftovers left a temporary entry; $n_entries entries"

# --- Serve -----------------------------------------------------------------------------------
# trtbuild serve under attack (scripts/serveattack): clients that leave mid-stream, reconnect
# with Last-Event-ID, read or send their headers one byte a second, bad bodies, cancel storms;
# then a kill -9 of the server with builds running: no worker outlives it, and the restarted
# server reports the builds interrupted.
serve_reconnects=1000
serve_storms=5
if [ -n "$quick" ]; then
	serve_reconnects=100
	serve_storms=2
fi
go build -o "$work/bin/serveattack" ./scripts/serveattack || exit 1
sa="$work/bin/serveattack"
serve_state="$work/serve-state"
mkdir -p "$work/serve-models"
cp "$model_src" "$work/serve-models/convnet.onnx"

# serve_start ARGS...: starts trtbuild serve (with the marker) on a free loopback port; sets
# serve_pid and serve_url ("" when it did not start).
serve_start() {
	: >"$work/serve.log"
	env "$marker" "$tb" serve --listen 127.0.0.1:0 --model-root "$work/serve-models" --state-dir "$serve_state" "$@" 2>>"$work/serve.log" &
	serve_pid=$!
	serve_url=""
	for _ in $(seq 300); do
		serve_url=$(grep -o 'listening on http://[0-9.:]*' "$work/serve.log" | head -1 | cut -d' ' -f3)
		[ -n "$serve_url" ] && return
		kill -0 "$serve_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "serve: the server did not start: $(cat "$work/serve.log")"
}

# serve_record: records each "CASE<TAB>1|0<TAB>MESSAGE" line of serveattack's stdout.
serve_record() {
	local name ok msg
	while IFS=$'\t' read -r name ok msg; do
		record "serve: $name" "$ok" "$msg"
	done
}

# serve_workers: the marked processes other than the server itself.
serve_workers() { workers | grep -vx "${serve_pid:-none}"; }

serve_start --sim-slots 1
if [ -z "$serve_url" ]; then
	record "serve: the server starts" 0 "$(tail -3 "$work/serve.log" | tr '\n' ' ')"
else
	"$sa" -url "$serve_url" -state "$serve_state" -reconnects "$serve_reconnects" -storms "$serve_storms" attack >"$work/serve.out" 2>"$work/serve.err"
	src=$?
	serve_record <"$work/serve.out"
	[ "$src" = 0 ] || record "serve: the attack program ran" 0 "exit $src: $(head -3 "$work/serve.err")"
	for _ in $(seq 100); do [ -z "$(serve_workers)" ] && break; sleep 0.05; done
	left=$(serve_workers)
	if [ -z "$left" ]; then record "serve: no worker left after the attacks" 1; else record "serve: no worker left after the attacks" 0 "$left"; fi
	if kill -0 "$serve_pid" 2>/dev/null; then record "serve: server alive after the attacks" 1; else record "serve: server alive after the attacks" 0 "$(tail -3 "$work/serve.log")"; fi
	kill -TERM "$serve_pid" 2>/dev/null
	wait "$serve_pid"
	src=$?
	if [ "$src" = 143 ]; then record "serve: SIGTERM: exit 143" 1; else record "serve: SIGTERM: exit 143" 0 "exit $src: $(tail -3 "$work/serve.log")"; fi

	# kill -9 with two builds running and one queued: no worker outlives the server, and the
	# builds are interrupted after the restart.
	serve_start --sim-slots 2
	if [ -n "$serve_url" ] && ids=$("$sa" -url "$serve_url" submit-running 2 2>"$work/serve.err"); then
		sleep 0.5
		kill -KILL "$serve_pid"
		wait "$serve_pid" 2>/dev/null
		killed=$serve_pid
		serve_pid=""
		# The workers see their parent die at once and exit within ParentGoneGrace; how fast
		# is measured by scripts/bench/worker-orphan.sh, not bounded here: a loaded machine may take
		# longer, and a process that exited is gone (workers skips zombies).
		start=$(date +%s%N)
		while [ -n "$(workers)" ] && [ $(($(date +%s%N) - start)) -lt 60000000000 ]; do sleep 0.02; done
		ms=$((($(date +%s%N) - start) / 1000000))
		left=$(workers)
		if [ -n "$left" ]; then
			record "serve: kill -9: no worker outlives the server" 0 "workers $left live 60 s after the server $killed"
			kill -KILL $left 2>/dev/null
		else
			record "serve: kill -9: no worker outlives the server" 1
			echo "serve: kill -9: the workers were gone $ms ms after the server"
		fi
		serve_start --sim-slots 2
		if [ -n "$serve_url" ]; then
			# shellcheck disable=SC2086 # the ids, one a word
			"$sa" -url "$serve_url" -state "$serve_state" interrupted $ids >"$work/serve.out" 2>"$work/serve.err"
			serve_record <"$work/serve.out"
			kill -TERM "$serve_pid" 2>/dev/null
			wait "$serve_pid" 2>/dev/null
		else
			record "serve: kill -9: the server restarts" 0 "$(tail -3 "$work/serve.log" | tr '\n' ' ')"
		fi
	else
		record "serve: kill -9: builds running" 0 "$(head -3 "$work/serve.err") $(tail -3 "$work/serve.log" | tr '\n' ' ')"
		[ -n "$serve_pid" ] && kill -KILL "$serve_pid" 2>/dev/null
	fi
fi
serve_pid=""

# --- The model root: a name swapped while the server reads it ----------------------------------
# Another user who may write in --model-root toggles a model's name between a hard link to a
# model inside the root and a symbolic link to one outside it, while clients submit builds of
# that name and the command line builds it into an engine cache of its own
# (serveattack modelrace): nothing outside the root is built, keyed, cached or quoted, and
# every engine cache entry is the engine of the model its key was hashed from. Beside it, the
# command line builds a model whose folder is exchanged with another holding a model of the
# same name (renameat2 RENAME_EXCHANGE) a million times a minute: its cache entries too must
# each be the engine of their key's model.
race_submits=500
[ -n "$quick" ] && race_submits=100
rm -rf "$serve_state"
serve_start --sim-slots 4
if [ -z "$serve_url" ]; then
	record "model race: the server starts" 0 "$(tail -3 "$work/serve.log" | tr '\n' ' ')"
else
	cp "$repo/testdata/models/control_flow.onnx" "$work/outside.onnx"
	env "$marker" "$sa" -url "$serve_url" -state "$serve_state" -models "$work/serve-models" -outside "$work/outside.onnx" -trtbuild "$tb" \
		modelrace "$race_submits" >"$work/serve.out" 2>"$work/serve.err"
	src=$?
	serve_record <"$work/serve.out"
	[ "$src" = 0 ] || record "model race: the attack program ran" 0 "exit $src: $(head -3 "$work/serve.err")"
	kill -TERM "$serve_pid" 2>/dev/null
	wait "$serve_pid" 2>/dev/null
fi
serve_pid=""

# --- serve's hardening: what one client does stays its own, what the server keeps is bounded ----
# Sharers keep their own budget and cancel, MCP sessions are capped, DELETE (serveattack
# hardening); a second server on the same state dir, a FIFO or device as --token-file and a weak
# token off loopback are refused at start, in one line, without hanging.
rm -rf "$serve_state"
serve_start --sim-slots 4 --mcp-sessions 5
if [ -z "$serve_url" ]; then
	record "hardening: the server starts" 0 "$(tail -3 "$work/serve.log" | tr '\n' ' ')"
else
	env "$marker" "$sa" -url "$serve_url" -sessions 5 hardening >"$work/serve.out" 2>"$work/serve.err"
	src=$?
	serve_record <"$work/serve.out"
	[ "$src" = 0 ] || record "hardening: the attack program ran" 0 "exit $src: $(head -3 "$work/serve.err")"
	# A second server on the same state dir is refused while the first runs.
	env "$marker" timeout -s KILL 60 "$tb" serve --listen 127.0.0.1:0 --model-root "$work/serve-models" --state-dir "$serve_state" >"$work/out" 2>"$work/err"
	rc=$?
	if [ "$rc" = 2 ] && [ "$(grep -c '' "$work/err")" = 1 ] && grep -q "another" "$work/err"; then
		record "serve: a second server on the same state dir is refused" 1
	else
		record "serve: a second server on the same state dir is refused" 0 "exit $rc: $(head -3 "$work/err" | tr '\n' ' ')"
	fi
	kill -TERM "$serve_pid" 2>/dev/null
	wait "$serve_pid" 2>/dev/null
fi
serve_pid=""
mkfifo "$work/token.fifo"
printf 'ab12\n' >"$work/weak.token"
chmod 600 "$work/weak.token"
for c in "FIFO as --token-file|--listen 127.0.0.1:0 --token-file $work/token.fifo|not a regular file" \
	"/dev/zero as --token-file|--listen 127.0.0.1:0 --token-file /dev/zero|not a regular file" \
	"a weak token on all interfaces|--listen 0.0.0.0:0 --token-file $work/weak.token|openssl rand"; do
	name=${c%%|*}
	rest=${c#*|}
	args=${rest%|*}
	want=${rest##*|}
	# shellcheck disable=SC2086 # the arguments, a word each
	env "$marker" timeout -s KILL 30 "$tb" serve $args --model-root "$work/serve-models" --state-dir "$work/serve-state-$RANDOM" >"$work/out" 2>"$work/err"
	rc=$?
	if [ "$rc" = 2 ] && [ "$(grep -c '' "$work/err")" = 1 ] && grep -q -- "$want" "$work/err"; then
		record "serve: $name is refused at start" 1
	else
		record "serve: $name is refused at start" 0 "exit $rc (137: it hung): $(head -3 "$work/err" | tr '\n' ' ')"
	fi
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
