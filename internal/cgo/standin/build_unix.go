//go:build !windows

package standin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Build compiles libs into dir (created if need be) and returns dir. It skips the test
// when no C++ compiler is found (cgo needs one, so a machine that builds trtbuild has one).
func Build(t *testing.T, dir string, libs ...Lib) string {
	t.Helper()
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		t.Skipf("no C++ compiler (%s) to build stand-in libraries: %v", cxx, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		src := filepath.Join(dir, l.File+".cpp")
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src, []byte(l.Src), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, l.File)
		args := []string{"-std=c++17", "-shared", "-fPIC", "-o", out, "-Wl,-soname," + filepath.Base(l.File), src}
		if l.Fake != 0 {
			core, err := fakeCore(cxx, l.Fake, true)
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, core, "-lpthread")
		}
		args = append(args, "-ldl")
		if l.Headers {
			flags, err := HeaderFlags(l.File)
			if err != nil {
				t.Fatal(err)
			}
			args = append(flags, args...)
		}
		cmd := exec.Command(cxx, args...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compiling stand-in %s: %v\n%s", l.File, err, strings.TrimSpace(string(b)))
		}
		os.Remove(src)
	}
	return dir
}
