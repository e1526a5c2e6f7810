#!/usr/bin/env bash
# The test command of README.md: go vet, the whole test suite with the race detector (internal/cgo
# with the trtbench tag, which compiles its measurement and test ABI, trtb_bench.h), the Slurm
# end-to-end test when Slurm is installed, trtbuild mcp driven by the TypeScript MCP SDK when node
# and npm are installed, the Windows build under Wine when mingw-w64 and wine64 are installed, the
# quick fault campaign, the GPU smoke test's checks against the simulated builder, the shim under
# the sanitizers, a short run of every fuzz target, and the real-terminal end-to-end test when
# tmux is installed; each stage says how long the command has run.
# Tests that need tools this machine lacks (tmux, python3-onnx, chromium, slurm-wlm) skip with a message;
# .ci/run installs them first.
set -euo pipefail
cd "$(dirname "$0")/.."

# The C++ of internal/cgo (the TensorRT shim and the stand-in TensorRT) is compiled once per
# build configuration, about ten times here (race, the trtbench tag, plain, Windows, the
# sanitizers, fuzzing): at -O1 without debug information each takes about 40% of the time of Go's
# default -g -O2. The tests check behaviour; benchmarks (scripts/bench-*.sh) build with the default.
export CGO_CXXFLAGS="${CGO_CXXFLAGS:--O1}"
# Each stage's time, for finding the one that grew.
started=$SECONDS
elapsed() { echo "   ($((SECONDS - started)) s so far)"; }
stage() {
	elapsed
	echo "== $1"
}

stage "gofmt"
unformatted=$(gofmt -l cmd internal scripts)
if [ -n "$unformatted" ]; then
	echo "not gofmt-formatted (run gofmt -w on them):"
	echo "$unformatted"
	exit 1
fi

stage "go vet"
go vet ./...
go vet -tags trtbench ./internal/cgo

stage "go test -race"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
# internal/cgo runs once, with the trtbench tag: the event queue's bound, the exception guard,
# the timing cache's rules and the benchmarks of the C boundary drive builds that only that tag
# compiles (internal/cgo/bench.go; a trtbuild binary holds none), and the tag only adds files, so
# that run is every test of the package. The other packages link it as a trtbuild binary does.
# shellcheck disable=SC2046 # one package per word
go test -race -count=1 -v -parallel 4 $(go list ./... | grep -vx 'github.com/trtbuild/trtbuild/internal/cgo') >"$log" 2>&1 || status=$?
go test -race -count=1 -v -parallel 4 -tags trtbench ./internal/cgo >>"$log" 2>&1 || status=$?
grep -E '^(ok|FAIL|panic:)|no test files' "$log" || true
grep -E -B1 '^\s*--- SKIP' "$log" | grep -v '^--$' || true
passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
echo "the slowest tests (top level, seconds):"
grep -E '^--- (PASS|FAIL): ' "$log" | sed -E 's/^--- [A-Z]+: ([^ ]+) \(([0-9.]+)s\)$/\2 \1/' | sort -rn | head -n 12 | sed 's/^/   /' || true
if [ "$status" != 0 ]; then
	echo "== go test failed; its output:"
	cat "$log"
	echo "tests: $passed passed, $failed failed, $skipped skipped"
	exit "$status"
fi

stage "Slurm (a real single-node cluster)"
# The emitted Slurm array submitted as emitted to slurmctld and slurmd on localhost; skips with
# a message without Slurm (apt-get install slurm-wlm munge) or root.
if ! scripts/e2e/slurm.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

stage "MCP with the TypeScript SDK (an independent client)"
# trtbuild mcp driven by @modelcontextprotocol/sdk from npm: progress, cancel, time budget;
# skips with a message without node and npm.
if ! scripts/e2e/mcp-ts.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

stage "Windows (trtbuild.exe cross-compiled with mingw-w64, run under Wine)"
# The Windows tests of every package that has them, then trtbuild.exe end to end (version,
# inspect, convert, builds whose events match Linux's, the engine cache, -o NUL, Ctrl-C, a killed
# parent); skips with a message without mingw-w64 and wine64 (apt-get install
# g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix wine wine64).
win=0
if scripts/wine.sh env >/dev/null 2>&1 && scripts/wine.sh prefix >/dev/null 2>&1; then
	winpkgs="$(git ls-files '*_windows_test.go' '*_portable_test.go' | xargs -n1 dirname | sort -u | sed 's#^#./#')"
	# shellcheck disable=SC2086 # one package per word
	WINE_TESTS_WINDOWS_ONLY=1 scripts/wine.sh test $winpkgs >"$log.wine" 2>&1 || win=$?
	grep -E '^(ok|FAIL)' "$log.wine" || true
	if [ "$win" != 0 ]; then
		cat "$log.wine"
	elif ! scripts/e2e/windows.sh; then
		win=1
	fi
	rm -f "$log.wine"
else
	echo "skipping the Windows checks: no mingw-w64 or Wine (scripts/wine.sh says why)"
fi
if [ "$win" != 0 ]; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

stage "fault campaign (quick)"
# Every unsafe path, hang and pipe fault of the output rules, and a storm of random cancels,
# against real processes; scripts/fault-campaign.sh without FAULT_CAMPAIGN_QUICK runs more.
if ! FAULT_CAMPAIGN_QUICK=1 scripts/fault-campaign.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

stage "GPU smoke test (simulated builder)"
# scripts/gpu-smoke.sh's checks against --backend sim, so that a broken check fails here and not
# first on a user's GPU. It exits 4 when it cannot run (no Python with onnx for its model).
smoke=0
scripts/gpu-smoke.sh --sim || smoke=$?
if [ "$smoke" = 4 ]; then
	echo "skipping the GPU smoke test's simulated run"
elif [ "$smoke" != 0 ]; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

stage "the shim under AddressSanitizer and UndefinedBehaviorSanitizer"
if ! scripts/check/sanitize.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

# Every Fuzz* function in the module, run briefly from its committed seed corpus (go test
# above already ran each seed corpus as a regression test).
elapsed
if ! scripts/check/fuzz-all.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

if [ -x scripts/e2e/tmux.sh ]; then
	stage "real terminal (tmux)"
	if command -v tmux >/dev/null; then
		scripts/e2e/tmux.sh
	else
		echo "tmux is not installed: skipping the real-terminal test"
	fi
fi
echo "== all checks passed in $((SECONDS - started)) s"
echo "tests: $passed passed, $failed failed, $skipped skipped"
