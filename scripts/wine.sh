#!/usr/bin/env bash
# Windows builds of trtbuild on this Linux machine, and running them under Wine (Debian's wine64).
#
#   scripts/wine.sh env            print the environment (CGO_ENABLED, GOOS, CC, ...) of a Windows
#                                  cross build with mingw-w64's POSIX thread model, for eval
#   scripts/wine.sh build OUT.exe [go build args]   cross-compile trtbuild.exe (static: no MinGW DLLs)
#   scripts/wine.sh prefix         make the test Wine prefix (once) and print its path
#   scripts/wine.sh run PROG.exe [args]   run a Windows program in that prefix
#   scripts/wine.sh test PKG... [-- test flags]   cross-compile each package's tests and run them under Wine
#                                  (WINE_TESTS_WINDOWS_ONLY=1: only those of its *_windows_test.go
#                                  and *_portable_test.go files)
#
# Needs g++-mingw-w64-x86-64-posix, gcc-mingw-w64-x86-64-posix and wine64 (.ci/run installs them);
# exits 4 with a message when they are missing. The prefix is $TRTBUILD_WINEPREFIX, else a folder
# of this user's under $TMPDIR; it holds a stand-in bcryptprimitives.dll (scripts/wine/), which the
# Go runtime needs and Wine 8 lacks.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
wine=/usr/lib/wine/wine64
[ -x "$wine" ] || wine="$(command -v wine64 || true)"
cc=x86_64-w64-mingw32-gcc-posix
cxx=x86_64-w64-mingw32-g++-posix

need() {
	if ! command -v "$cc" >/dev/null || ! command -v "$cxx" >/dev/null; then
		echo "wine.sh: no mingw-w64 POSIX compilers; apt-get install g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix" >&2
		exit 4
	fi
	if [ "${1:-}" = wine ] && [ -z "$wine" ]; then
		echo "wine.sh: no Wine; apt-get install wine64" >&2
		exit 4
	fi
}

cross_env() {
	echo "export CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$cc CXX=$cxx CGO_LDFLAGS=-static"
}

prefix() {
	local p="${TRTBUILD_WINEPREFIX:-${TMPDIR:-/tmp}/trtbuild-wine-$(id -u)}"
	local dll="$p/drive_c/windows/system32/bcryptprimitives.dll"
	if [ ! -f "$dll" ]; then
		mkdir -p "$p"
		chmod 700 "$p"
		local tmp
		tmp="$(mktemp -d)"
		"$cc" -shared -O2 -o "$tmp/bcryptprimitives.dll" "$root/scripts/wine/bcryptprimitives.c" -ladvapi32
		WINEPREFIX="$p" WINEDEBUG=-all "$wine" wineboot -i >/dev/null 2>&1 || true
		WINEPREFIX="$p" "${wine%64}server64" -w 2>/dev/null || WINEPREFIX="$p" wineserver -w 2>/dev/null || true
		mkdir -p "$(dirname "$dll")"
		cp "$tmp/bcryptprimitives.dll" "$dll.tmp" && mv "$dll.tmp" "$dll"
		rm -rf "$tmp"
	fi
	echo "$p"
}

cmd="${1:-}"
shift || true
case "$cmd" in
env)
	need
	cross_env
	;;
build)
	need
	out="$1"
	shift
	eval "$(cross_env)"
	cd "$root"
	go build -o "$out" "$@" ./cmd/trtbuild
	;;
prefix)
	need wine
	prefix
	;;
run)
	need wine
	p="$(prefix)"
	WINEPREFIX="$p" WINEDEBUG="${WINEDEBUG:--all}" exec "$wine" "$@"
	;;
test)
	need wine
	pkgs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		pkgs+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	p="$(prefix)"
	eval "$(cross_env)"
	cd "$root"
	dir="$(mktemp -d)"
	trap 'rm -rf "$dir"' EXIT
	status=0
	# internal/cgo's Windows tests load stand-in DLLs that a program under Wine cannot compile:
	# they are compiled here first (internal/cgo/standin/mkdll).
	if [[ " ${pkgs[*]} " == *internal/cgo* ]] && [ -z "${TRTBUILD_STANDIN_DLLS:-}" ]; then
		(unset GOOS GOARCH CC CXX CGO_LDFLAGS; go run ./internal/cgo/standin/mkdll "$dir/standin-dlls" >/dev/null)
		export TRTBUILD_STANDIN_DLLS="$dir/standin-dlls"
	fi
	for pkg in "${pkgs[@]}"; do
		name="$(echo "$pkg" | tr '/.' '__')"
		go test -c -o "$dir/$name.test.exe" "$pkg"
		[ -f "$dir/$name.test.exe" ] || { echo "ok  	$pkg [no test files]"; continue; }
		run=()
		if [ -n "${WINE_TESTS_WINDOWS_ONLY:-}" ]; then
			# Only the tests written for Windows (*_windows_test.go) and those written for every OS
			# (*_portable_test.go, on folders of winetest.TempDir): the others run on Linux, and
			# most of them use t.TempDir, whose cleanup (os.RemoveAll) fails under Wine 8.
			names="$(grep -hoE '^func (Test[A-Za-z0-9_]+)\(t \*testing\.T\)' "$pkg"/*_windows_test.go "$pkg"/*_portable_test.go 2>/dev/null | sed -E 's/^func (Test[A-Za-z0-9_]+).*/\1/' | paste -sd'|' || true)"
			[ -n "$names" ] || { echo "ok  	$pkg [no Windows tests]"; continue; }
			run=(-test.run "^($names)\$")
		fi
		# A package's tests run in its own folder, as go test runs them.
		if (cd "$pkg" && WINEPREFIX="$p" WINEDEBUG=-all "$wine" "$dir/$name.test.exe" "${run[@]}" "$@"); then
			echo "ok  	$pkg (windows/amd64 under Wine)"
		else
			echo "FAIL	$pkg (windows/amd64 under Wine)"
			status=1
		fi
	done
	exit "$status"
	;;
*)
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
