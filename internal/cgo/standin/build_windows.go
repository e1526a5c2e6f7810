package standin

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build puts the DLLs of libs into dir (created if need be) and returns dir. Each is copied
// from the EnvDLLs folder, where `go run ./internal/cgo/standin/mkdll` stored it under its
// DLLKey on the build machine, or else compiled with the MinGW g++ named by CXX. It skips the
// test when neither is there, and fails it when EnvDLLs is set but lacks one (mkdll and the
// test disagree on the sources: run mkdll again).
func Build(t *testing.T, dir string, libs ...Lib) string {
	t.Helper()
	prebuilt := os.Getenv(EnvDLLs)
	cxx := os.Getenv("CXX")
	if prebuilt == "" {
		if cxx == "" {
			cxx = "g++"
		}
		if _, err := exec.LookPath(cxx); err != nil {
			t.Skipf("no stand-in DLLs: set %s to a folder made by `go run ./internal/cgo/standin/mkdll DIR` on the build machine, or CXX to a MinGW g++ (%s: %v)", EnvDLLs, cxx, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		out := filepath.Join(dir, filepath.FromSlash(l.File))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if prebuilt == "" {
			if err := CompileDLL(cxx, out, l); err != nil {
				t.Fatal(err)
			}
			continue
		}
		key, err := DLLKey(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := copyFile(filepath.Join(prebuilt, key), out); err != nil {
			t.Fatalf("stand-in %s was not compiled beforehand (%v): run `go run ./internal/cgo/standin/mkdll %s` again", l.File, err, prebuilt)
		}
	}
	return dir
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
