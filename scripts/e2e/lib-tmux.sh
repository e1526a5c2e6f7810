# Sourced by the scripts that drive trtbuild in tmux (e2e/tmux.sh, bench/tty-idle.sh,
# make/live-view-png.sh). It sets up a private tmux server in a temporary folder, removed on exit,
# and picks the trtbuild binary to drive. The caller sets `name` (for messages) and passes its
# first argument, a trtbuild binary or nothing (then one is built into the folder).
# It defines: work (the folder), sock (the server's socket), bin, t (tmux on that server) and
# fresh_server (the next session runs on a new server).

command -v tmux >/dev/null || { echo "$name: tmux is not installed" >&2; exit 1; }

work="$(mktemp -d)"
servers=0
sock="$work/tmux-0.sock"
cleanup() {
	local s
	for s in "$work"/tmux-*.sock; do
		[ -S "$s" ] && tmux -S "$s" kill-server 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

bin="${1:-}"
if [ -z "$bin" ]; then
	bin="$work/trtbuild"
	go build -o "$bin" ./cmd/trtbuild
fi

t() { tmux -S "$sock" "$@"; }

# fresh_server kills the server and moves to a socket of its own for the next one. kill-server
# returns before the old server has gone: a new session on the same socket can reach the dying
# server and fail with "server exited unexpectedly" on a busy machine.
fresh_server() {
	t kill-server 2>/dev/null || true
	servers=$((servers + 1))
	sock="$work/tmux-$servers.sock"
}
