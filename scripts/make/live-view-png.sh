#!/usr/bin/env bash
# Makes docs/img/live-view.png, the README's picture of the live view, from a real run: trtbuild
# replaying real TensorRT 10.16.1 progress (internal/testtraces, the cookbook's MNIST build at
# 5 ms a callback) in a private tmux server, captured with its colours in the middle of tactic
# timing, drawn by scripts/ansi2png.py. Needs tmux, python3-pil and fonts-dejavu-core.
# Usage: scripts/make/live-view-png.sh [path/to/trtbuild]   (default: build it)
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C.UTF-8

out="docs/img/live-view.png"
cols=100 rows=24

python=""
for p in "${TRTBUILD_PYTHON:-}" python3 /usr/bin/python3; do
	if [ -n "$p" ] && "$p" -c 'import PIL' 2>/dev/null; then
		python="$p"
		break
	fi
done
[ -n "$python" ] || { echo "live-view-png: no python3 with PIL (apt-get install python3-pil)" >&2; exit 1; }
name=live-view-png
# shellcheck source=scripts/e2e/lib-tmux.sh
. scripts/e2e/lib-tmux.sh "${1:-}"
# A short name for the binary, so the command line in the picture reads like the README's.
mkdir -p "$work/bin"
ln -s "$(realpath "$bin")" "$work/bin/trtbuild"

t -f /dev/null new-session -d -s png -x "$cols" -y "$rows" \
	"env LANG=C.UTF-8 XDG_CACHE_HOME='$work/cache' PATH='$work/bin:$PATH' PS1='\$ ' bash --norc --noprofile"
cp internal/testtraces/testdata/trt-10.16.1-mnist-5ms.jsonl "$work/trt-10.16.1-mnist.jsonl"
t send-keys -t png "cd '$work' && clear" Enter
sleep 0.3
t send-keys -t png "trtbuild replay trt-10.16.1-mnist.jsonl" Enter

# Wait until "Timing graph nodes" is well into its first node with 153 candidate tactics.
deadline=$((SECONDS + 60))
until t capture-pane -p -t png | grep -Eq 'Evaluating tactic times .* (1[0-4][0-9])/153'; do
	((SECONDS < deadline)) || { t capture-pane -p -t png >&2; echo "live-view-png: the view never got there" >&2; exit 1; }
	sleep 0.1
done
# The whole pane from the command line down (the shell cleared the screen before it).
t capture-pane -p -e -S - -t png | sed '/./,$!d' >"$work/capture.txt"
t send-keys -t png C-c

mkdir -p "$(dirname "$out")"
"$python" scripts/make/ansi2png.py "$work/capture.txt" "$out" --cols "$cols"
echo "live-view-png: wrote $out"
