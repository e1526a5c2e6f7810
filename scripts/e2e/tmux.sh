#!/usr/bin/env bash
# Real-terminal test of the live view. It builds trtbuild, runs simulated builds in a private
# tmux server and reads the screen the way a person would (tmux capture-pane):
#   0. at 80 columns: the whole tree of TensorRT 10.16/11's timing (8 levels, down to
#      "Measuring tactic time") fits: no line wraps, no row's name or count is cut, the
#      footer says how long the layer timing still runs, and the build exits with 0.
#   1. the nested bars appear; a silent phase (no report at the start of "Timing graph
#      nodes") is reported from the view's own clock; a narrower window reflows the view;
#      Ctrl-C during a long measuring step shows the cancelling state; the build exits with
#      130, the summary replaces the view, and the terminal is sane (echo, icanon).
#   2. a builder that ignores the cancel: the second Ctrl-C stops the worker; same checks.
#   3. SIGHUP (a closed SSH session) cancels: exit 129, the terminal sane.
#   4. SIGQUIT stops at once: exit 131, no goroutine dump, the terminal sane.
#   5. Ctrl-C on `matrix build`: exit 130, the index written, the terminal sane.
# Needs tmux. Usage: scripts/e2e/tmux.sh [path/to/trtbuild]  (default: build it)
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C.UTF-8 # widths and patterns below count characters, not bytes

name=tmux-e2e
# shellcheck source=scripts/e2e/lib-tmux.sh
. scripts/e2e/lib-tmux.sh "${1:-}"
model="testdata/models/convnet.onnx"
width=100 height=32


# screen prints the visible pane; history the whole scrollback.
screen() { t capture-pane -p -t e2e; }
history() { t capture-pane -p -S - -t e2e; }

fail() {
	echo "tmux-e2e: FAIL: $*" >&2
	echo "---- screen and history ----" >&2
	history >&2 || true
	echo "----------------------------" >&2
	exit 1
}

# wait_for TEXT [SECONDS]: wait until TEXT is on the screen.
wait_for() {
	local deadline=$((SECONDS + ${2:-30}))
	until screen | grep -qF -- "$1"; do
		((SECONDS < deadline)) || fail "never saw: $1"
		sleep 0.1
	done
}

# wait_for_re REGEX [SECONDS]: wait until a line on the screen matches REGEX (grep -E).
wait_for_re() {
	local deadline=$((SECONDS + ${2:-30}))
	until screen | grep -qE -- "$1"; do
		((SECONDS < deadline)) || fail "never saw a line matching: $1"
		sleep 0.1
	done
}

# require_nested_bars: at least three levels of running phases, each with a bar.
require_nested_bars() {
	local s levels
	s="$(screen)"
	levels="$(grep -E '^( *)[•⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] .*[━█░]{8,} +[0-9]+/[0-9]+ ' <<<"$s" |
		sed -E 's/^( *).*/\1/' | awk '{ print length($0) }' | sort -un | wc -l)"
	((levels >= 3)) || fail "expected bars on at least 3 levels of the tree, found $levels"
}

# require_width N: no line on the screen is wider than N cells.
require_width() {
	local widest
	widest="$(screen | wc -L)"
	((widest <= $1)) || fail "a line is $widest columns wide, more than $1"
}

# start_build ARGS...: run one build in a fresh shell and record its exit code and terminal
# mode afterwards.
start_build() {
	fresh_server
	rm -rf "$work/rc" "$work/stty" "$work/cache" # each build starts without a timing cache
	t -f /dev/null new-session -d -s e2e -x "$width" -y "$height" \
		"env -u NO_COLOR -u TRTBUILD_PROGRESS LANG=C.UTF-8 XDG_CACHE_HOME='$work/cache' bash --norc --noprofile"
	t set-option -t e2e window-size manual
	t send-keys -t e2e "clear; '$bin' --backend sim -o '$work/out.engine' $* '$model'; echo \$? >'$work/rc'; stty -a >'$work/stty'" Enter
}

# finish EXPECTED_RC: wait for the build to end and check the exit code and the terminal.
finish() {
	local deadline=$((SECONDS + 60))
	until [ -s "$work/stty" ]; do
		((SECONDS < deadline)) || fail "the build did not end"
		sleep 0.1
	done
	local rc
	rc="$(cat "$work/rc")"
	[ "$rc" = "$1" ] || fail "exit code $rc, want $1"
	grep -qE '(^|[ ;])echo( |;|$)' "$work/stty" || fail "echo is off after the build: $(cat "$work/stty")"
	grep -qE '(^|[ ;])icanon( |;|$)' "$work/stty" || fail "icanon is off after the build: $(cat "$work/stty")"
	if screen | grep -qE '(ctrl\+c cancel|ctrl\+c stop now)'; then
		fail "the live view was left on the screen"
	fi
}

echo "tmux-e2e: run 0: 80 columns, the deepest rows whole, the time left of layer timing"
width=80
start_build --sim-speed 4
# One frame with the deepest phase (the 8th level: Building engine › … › Timing graph nodes ›
# Evaluating tactic times › Measuring tactic time) and the footer's time left.
deadline=$((SECONDS + 30))
until s="$(screen)" && grep -qF "Measuring tactic time" <<<"$s" && grep -qF "of layer timing left" <<<"$s"; do
	((SECONDS < deadline)) || fail "never saw a frame with \"Measuring tactic time\" and the time left of layer timing"
	sleep 0.1
done
widest="$(wc -L <<<"$s")"
((widest <= 80)) || fail "a line is $widest columns wide, more than 80"
# Each tree row is one line: marker, whole name, bar, count, elapsed (a wrapped or cut row
# loses its count or its name's end).
rows="$(grep -E '^ *[•✓⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [A-Za-z]' <<<"$s")"
(($(wc -l <<<"$rows") >= 8)) || fail "fewer than 8 tree rows at 80 columns: $rows"
if bad="$(grep -vE '^ *[•✓⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [A-Za-z][A-Za-z ]*[a-z] .* [0-9]+/[0-9]+ +[0-9][0-9.hms]*$' <<<"$rows")"; then
	fail "a tree row is cut or wrapped at 80 columns: $bad"
fi
grep -qE '^ {12}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏•] Measuring tactic time .*[━█░]{8,} +[0-9]+/[0-9]+ ' <<<"$s" ||
	fail "the 8th level's row (Measuring tactic time) is not whole, with its bar and count, at 80 columns"
grep -qE '^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] .*elapsed · .* of layer timing left +ctrl\+c cancel$' <<<"$s" ||
	fail "the footer does not show the time left and the key hint on one line at 80 columns"
finish 0
width=100

echo "tmux-e2e: run 1: nested bars, silence, resize, Ctrl-C cancels"
# Every step scales with --sim-step (the stages before timing take a quarter step each): a
# short step reaches "Timing graph nodes" in seconds; the silence comes at its start, and the
# first measuring step after it lasts 5 s, so that the cancel waits for the step boundary.
start_build --sim-step 100ms --sim-silent 7s --sim-long-step 5s
wait_for "Building $model"
wait_for "Timing graph nodes"
wait_for "no progress reported for 5." 20
require_width "$width"
t resize-window -t e2e -x 64 -y "$height"
sleep 0.5
require_width 64
# At 64 columns the names of the 7th and 8th levels are cut in the middle ("Measur…g tactic
# time"): their start and end stay.
wait_for_re 'Measur.*tactic time +[━█░]{8,} +[0-9]+/[0-9]+ ' 20
require_nested_bars
t send-keys -t e2e C-c
wait_for "Cancelling:"
wait_for "cancel requested"
finish 130
wait_for "Build cancelled after"

echo "tmux-e2e: run 2: the builder ignores the cancel; the second Ctrl-C stops it"
start_build --sim-threads 2 --sim-step 200ms --sim-ignore-cancel
wait_for "Measuring tactic time"
require_nested_bars
t send-keys -t e2e C-c
wait_for "Ctrl-C again"
sleep 0.5
screen | grep -qF "Cancelling:" || fail "the cancelling state went away while the builder ignores the cancel"
t send-keys -t e2e C-c
finish 130
wait_for "Build cancelled after"
wait_for "The build worker was killed without waiting for a step boundary."

# signal_build SIGNAL: sends SIGNAL to the running trtbuild parent (the one writing out.engine),
# as a closed SSH session (SIGHUP) or `kill -QUIT` would.
signal_build() {
	local pid
	pid="$(pgrep -f -- "-o $work/out.engine" | head -1)"
	[ -n "$pid" ] || fail "no trtbuild process to signal"
	kill -s "$1" "$pid"
}

echo "tmux-e2e: run 3: SIGHUP cancels like Ctrl-C, and the terminal is restored"
start_build --sim-threads 2 --sim-step 200ms
wait_for "Measuring tactic time"
require_nested_bars
signal_build HUP
finish 129
wait_for "Build cancelled after"

echo "tmux-e2e: run 4: SIGQUIT stops at once, without a goroutine dump, and the terminal is restored"
start_build --sim-threads 2 --sim-step 200ms --sim-ignore-cancel
wait_for "Measuring tactic time"
signal_build QUIT
finish 131
if history | grep -q "goroutine "; then
	fail "a goroutine dump reached the terminal"
fi

echo "tmux-e2e: run 5: Ctrl-C on matrix build cancels its cell, writes the index, restores the terminal"
mkdir -p "$work/mx/models"
cp "$model" "$work/mx/models/convnet.onnx"
printf 'version: 1\nmodels:\n  - path: models/convnet.onnx\nprecisions: [fp32, fp16]\ntargets:\n  - name: l4\n    gpu: NVIDIA-L4\n    compute_capability: "8.9"\n' >"$work/mx/matrix.yaml"
fresh_server
rm -rf "$work/rc" "$work/stty" "$work/cache"
t -f /dev/null new-session -d -s e2e -x "$width" -y "$height" \
	"env -u NO_COLOR -u TRTBUILD_PROGRESS LANG=C.UTF-8 XDG_CACHE_HOME='$work/cache' bash --norc --noprofile"
t set-option -t e2e window-size manual
t send-keys -t e2e "clear; '$bin' matrix build '$work/mx/matrix.yaml' --backend sim --sim-speed 1; echo \$? >'$work/rc'; stty -a >'$work/stty'" Enter
wait_for "Measuring tactic time" 30
t send-keys -t e2e C-c
finish 130
[ -s "$work/mx/engines/index.json" ] || fail "matrix build wrote no index.json after Ctrl-C"
grep -q '"skipped"' "$work/mx/engines/index.json" || fail "the cell after the cancelled one was not left out"

echo "tmux-e2e: ok"
