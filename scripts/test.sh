#!/usr/bin/env bash
# The test command of README.md: go vet, the whole test suite with the race detector (and
# internal/cgo once more with the trtbench tag, which compiles its measurement and test ABI,
# trtb_bench.h), the quick fault campaign, the GPU smoke test's checks against the simulated
# builder, a short run of every fuzz target, the Slurm end-to-end test when Slurm is installed,
# trtbuild mcp driven by the TypeScript MCP SDK when node and npm are installed, and the
# real-terminal end-to-end test when tmux is installed.
# Tests that need tools this machine lacks (tmux, python3-onnx, chromium, slurm-wlm) skip with a message;
# .ci/run installs them first.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...
go vet -tags trtbench ./internal/cgo

echo "== go test -race"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
go test -race -count=1 -v -parallel 4 ./... >"$log" 2>&1 || status=$?
# The event queue's bound, the exception guard and the benchmarks of the C boundary drive builds
# that only the trtbench tag compiles (internal/cgo/bench.go); a trtbuild binary holds none.
go test -race -count=1 -v -tags trtbench ./internal/cgo >>"$log" 2>&1 || status=$?
grep -E '^(ok|FAIL|panic:)|no test files' "$log" || true
grep -E -B1 '^\s*--- SKIP' "$log" | grep -v '^--$' || true
passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
if [ "$status" != 0 ]; then
	echo "== go test failed; its output:"
	cat "$log"
	echo "tests: $passed passed, $failed failed, $skipped skipped"
	exit "$status"
fi

echo "== Slurm (a real single-node cluster)"
# The emitted Slurm array submitted as emitted to slurmctld and slurmd on localhost; skips with
# a message without Slurm (apt-get install slurm-wlm munge) or root.
if ! scripts/slurm-e2e.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

echo "== MCP with the TypeScript SDK (an independent client)"
# trtbuild mcp driven by @modelcontextprotocol/sdk from npm: progress, cancel, time budget;
# skips with a message without node and npm.
if ! scripts/mcp-ts-e2e.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

echo "== fault campaign (quick)"
# Every unsafe path, hang and pipe fault of the output rules, and a storm of random cancels,
# against real processes; scripts/fault-campaign.sh without FAULT_CAMPAIGN_QUICK runs more.
if ! FAULT_CAMPAIGN_QUICK=1 scripts/fault-campaign.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

echo "== GPU smoke test (simulated builder)"
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

# Every Fuzz* function in the module, run briefly from its committed seed corpus (go test
# above already ran each seed corpus as a regression test).
if ! scripts/fuzz-all.sh; then
	echo "tests: $passed passed, 1 failed, $skipped skipped"
	exit 1
fi

if [ -x scripts/tmux-e2e.sh ]; then
	echo "== real terminal (tmux)"
	if command -v tmux >/dev/null; then
		scripts/tmux-e2e.sh
	else
		echo "tmux is not installed: skipping the real-terminal test"
	fi
fi
echo "== all checks passed"
echo "tests: $passed passed, $failed failed, $skipped skipped"
