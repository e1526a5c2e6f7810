# Sourced by the scripts that drive trtbuild in tmux (tmux-e2e.sh, bench-tty-idle.sh,
# live-view-png.sh). It sets up a private tmux server in a temporary folder, removed on exit,
# and picks the trtbuild binary to drive. The caller sets `name` (for messages) and passes its
# first argument, a trtbuild binary or nothing (then one is built into the folder).
# It defines: work (the folder), sock (the server's socket), bin, and t (tmux on that server).

command -v tmux >/dev/null || { echo "$name: tmux is not installed" >&2; exit 1; }

work="$(mktemp -d)"
sock="$work/tmux.sock"
cleanup() {
	tmux -S "$sock" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

bin="${1:-}"
if [ -z "$bin" ]; then
	bin="$work/trtbuild"
	go build -o "$bin" ./cmd/trtbuild
fi

t() { tmux -S "$sock" "$@"; }
