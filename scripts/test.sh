#!/usr/bin/env bash
# The test command of README.md: go vet, the whole test suite with the race detector, a short
# run of every fuzz target, and the real-terminal end-to-end test when tmux is installed.
# Tests that need tools this machine lacks (tmux, python3-onnx, chromium) skip with a message;
# .ci/run installs them first.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-10s}"

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 ./...

echo "== fuzz ($fuzztime each)"
# Every Fuzz* function in the module, run briefly from its committed seed corpus.
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
	pkg="./$(dirname "${file#./}")"
	for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2); do
		echo "-- $pkg $target"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" | tail -n 1
	done
done

if [ -x scripts/tmux-e2e.sh ]; then
	echo "== real terminal (tmux)"
	if command -v tmux >/dev/null; then
		scripts/tmux-e2e.sh
	else
		echo "tmux is not installed: skipping the real-terminal test"
	fi
fi
echo "== all tests passed"
