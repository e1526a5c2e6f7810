#!/usr/bin/env bash
# check/shim-coverage.sh: which lines of the TensorRT shim (internal/cgo/shim) the tests' simulated
# builds reach. internal/cgo's tests (builds in the test process and its children) and
# cmd/trtbuild's (the real parent and worker processes) run with the C++ compiled with
# --coverage and the gcov tag (cgo.FlushCoverage writes the counts before os.Exit); the counts
# of both TensorRT majors' shims are merged per line. internal/cgo is compiled with the trtbench
# tag too, so its unit tests of the shim's helpers (trtb_bench.h) count. It prints each shim
# file's covered lines and then every line no test reached. Not part of the test command (it
# compiles everything afresh, without the race detector).
#
# The check: a line a simulated build can reach belongs under a test; a line none can reach
# carries a mark saying why, "// coverage: <why no simulated build reaches it>". A mark at the
# end of a line of code covers that line and, when the line opens a block (more '{' than '}'
# after any leading '}', as "} catch (...) {"), the lines of that block through its closing
# brace. A mark on a line of its own covers every line after it up to the closing brace of the
# block it stands in. The script then lists the unreached lines no mark covers and exits 1 when
# there are any (or when a test failed).
#
# Usage: scripts/check/shim-coverage.sh [go test -run pattern]   (default: every test)
#   KEEP=1 leaves its work folder (the gcov JSON files) and prints its path.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
work="$(mktemp -d)"
[[ -n "${KEEP:-}" ]] || trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/tmp" "$work/json"
pattern="${1:-.}"
# Tests that run trtbuild as another user in a folder it cannot write compare its stderr, where
# the coverage runtime complains that it cannot write its counts there.
skip='ReadOnlyFolder'
# A fresh build cache, kept work folders: the objects' notes (.gcno) and counts (.gcda) stay
# where each go command compiled them.
status=0
TMPDIR="$work/tmp" GOCACHE="$work/cache" GOFLAGS=-work TRTBUILD_TEST_TAGS=gcov \
	CGO_CXXFLAGS="-O0 --coverage" CGO_LDFLAGS="--coverage" \
	go test -tags gcov,trtbench -count=1 -run "$pattern" -skip "$skip" ./internal/cgo ./cmd/trtbuild >"$work/test.log" 2>&1 || status=$?
grep -E '^(ok|FAIL|---)' "$work/test.log" | grep -v -- '--- PASS' || true
if [[ "$status" != 0 ]]; then
	echo "shim-coverage: the tests failed (the lines below are what the others reached); their output: $work/test.log" >&2
	KEEP=1
	trap - EXIT
fi
# One folder per object's counts: gcov names its output after the source, which repeats.
n=0
find "$work/tmp" -name '*.gcda' | while read -r gcda; do
	n=$((n + 1))
	mkdir -p "$work/json/$n"
	(cd "$work/json/$n" && gcov -j -o "$(dirname "$gcda")" "$gcda" >/dev/null 2>&1) || true
done
unmarked=0
python3 - "$work/json" "$root/internal/cgo" <<'PY' || unmarked=$?
import collections, glob, gzip, json, os, re, sys
jdir, base = sys.argv[1], sys.argv[2]
lines = collections.defaultdict(dict)
for f in glob.glob(os.path.join(jdir, "*", "*.json.gz")):
    for fi in json.load(gzip.open(f))["files"]:
        name = os.path.normpath(fi["file"])
        if not name.startswith("shim/"):
            continue
        for l in fi["lines"]:
            n = l["line_number"]
            lines[name][n] = max(lines[name].get(n, 0), l["count"])
total = hit = 0
for name in sorted(lines):
    ls = lines[name]
    h = sum(1 for c in ls.values() if c > 0)
    total, hit = total + len(ls), hit + h
    print(f"{h:5d}/{len(ls):5d} lines {100 * h / len(ls):5.1f}%  internal/cgo/{name}")
print(f"{hit:5d}/{total:5d} lines {100 * hit / max(total, 1):5.1f}%  the shim")
MARK = "// coverage:"
def code_of(line):
    """The code of a line: string and character literals emptied, a // comment cut."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    k = line.find("//")
    return line if k < 0 else line[:k]
def marked(src):
    """The line numbers (1-based) the coverage marks of src cover (the rule in the header)."""
    covered = {}
    for i, line in enumerate(src):
        k = line.find(MARK)
        if k < 0:
            continue
        why = line[k + len(MARK):].strip()
        code = code_of(line[:k]).strip()
        if code:
            covered[i + 1] = why
            opened = code.lstrip("}")
            depth = opened.count("{") - opened.count("}")
            j = i + 1
            while depth > 0 and j < len(src):
                c = code_of(src[j])
                depth += c.count("{") - c.count("}")
                covered[j + 1] = why
                j += 1
        else:
            depth = 0
            for j in range(i + 1, len(src)):
                for ch in code_of(src[j]):
                    depth += {"{": 1, "}": -1}.get(ch, 0)
                    if depth < 0:
                        break
                if depth < 0:
                    break
                covered[j + 1] = why
    return covered
bad = 0
reasons = collections.Counter()
for name in sorted(lines):
    src = open(os.path.join(base, name)).read().split("\n")
    missed = [n for n, c in sorted(lines[name].items()) if c == 0]
    covered = marked(src)
    for n in missed:
        if n in covered:
            reasons[covered[n]] += 1
    if missed:
        print(f"\n== not reached: internal/cgo/{name}")
        for n in missed:
            print(f"{n:5d}{'  ' if n not in covered else ' m'}  {src[n - 1]}")
    left = [n for n in missed if n not in covered]
    if left:
        bad += len(left)
        print(f"\n== not reached and not marked: internal/cgo/{name}")
        for n in left:
            print(f"{n:5d}  {src[n - 1]}")
print(f"\n{sum(reasons.values())} unreached lines marked (m above), by reason:")
for why, n in sorted(reasons.items(), key=lambda r: (-r[1], r[0])):
    print(f"{n:5d}  {why}")
if bad:
    print(f"\nshim-coverage: {bad} unreached lines carry no '// coverage:' mark: test them, or mark why no "
          "simulated build reaches them", file=sys.stderr)
    sys.exit(1)
PY
[[ -z "${KEEP:-}" ]] || echo "shim-coverage: kept $work"
if [[ "$status" == 0 && "$unmarked" != 0 ]]; then
	status=1
fi
exit "$status"
