// Command mkdll compiles the stand-in DLLs of internal/cgo's Windows tests
// (standin.WindowsTestLibs) with MinGW-w64 into a folder, each under its standin.DLLKey, for
// tests that run under Wine and cannot run the compiler themselves:
//
//	go run ./internal/cgo/standin/mkdll DIR
//	TRTBUILD_STANDIN_DLLS=DIR scripts/wine.sh test ./internal/cgo
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/cgo/standin"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkdll DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	cxx := os.Getenv("TRTBUILD_MINGW_CXX")
	if cxx == "" {
		cxx = standin.MinGWCXX
	}
	if _, err := exec.LookPath(cxx); err != nil {
		fmt.Fprintf(os.Stderr, "mkdll: no MinGW-w64 C++ compiler %s: apt-get install g++-mingw-w64-x86-64-posix, or set TRTBUILD_MINGW_CXX\n", cxx)
		os.Exit(4)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "mkdll:", err)
		os.Exit(1)
	}
	for _, l := range standin.WindowsTestLibs() {
		key, err := standin.DLLKey(l)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkdll:", err)
			os.Exit(1)
		}
		out := filepath.Join(dir, key)
		if _, err := os.Stat(out); err == nil {
			continue // the same source was compiled before
		}
		tmp := out + ".tmp"
		if err := standin.CompileDLL(cxx, tmp, l); err != nil {
			fmt.Fprintln(os.Stderr, "mkdll:", err)
			os.Exit(1)
		}
		if err := os.Rename(tmp, out); err != nil {
			fmt.Fprintln(os.Stderr, "mkdll:", err)
			os.Exit(1)
		}
		fmt.Println(out, l.File)
	}
}
