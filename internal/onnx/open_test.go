//go:build unix

package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// mkfifo makes a named pipe with no writer: a reader that opens it in
// blocking mode, or reads from it, waits forever, so these tests hang
// (and time out) if a check is missing.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
}

func TestOpenModelRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.onnx")
	mkfifo(t, fifo)
	tests := []struct {
		path, want string
	}{
		{fifo, "model.onnx is a named pipe (FIFO), not a regular file; pass the .onnx file itself"},
		{dir, "is a directory; pass the .onnx file inside it"},
		{filepath.Join(dir, "missing.onnx"), "no such file or directory"},
	}
	for _, tt := range tests {
		f, _, err := OpenModel(tt.path)
		if err == nil {
			f.Close()
			t.Errorf("OpenModel(%s) succeeded", tt.path)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("OpenModel(%s) = %q, want one line containing %q", tt.path, err, tt.want)
		}
	}
	if _, err := ReadMetadata(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadMetadata(FIFO) = %v", err)
	}
	if _, err := ReadModel(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadModel(FIFO) = %v", err)
	}
	f, st, err := OpenModel(testmodels.Bundled(t, "external_data.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !st.Mode().IsRegular() || st.Size() == 0 {
		t.Errorf("OpenModel of a model: %v", st.Mode())
	}
}

func TestOpenExternal(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	for _, d := range []string{filepath.Join(dir, "sub"), filepath.Join(root, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "ok.bin"), filepath.Join(dir, "sub", "in.bin"), filepath.Join(root, "secret.bin"), filepath.Join(root, "outside", "x.bin")} {
		if err := os.WriteFile(p, []byte("12345678"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"escape.bin":   filepath.Join(root, "secret.bin"),
		"relative.bin": "../secret.bin",
		"inside.bin":   "sub/in.bin",
		"outdir":       filepath.Join(root, "outside"),
		"dangling.bin": filepath.Join(root, "nothing.bin"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo(t, filepath.Join(dir, "fifo.bin"))
	tests := []struct {
		loc     string
		problem ExternalProblem
		reason  string
	}{
		{"ok.bin", 0, ""},
		{"sub/in.bin", 0, ""},
		{"./ok.bin", 0, ""},
		{"inside.bin", 0, ""},
		{"missing.bin", ExternalMissing, "it does not exist"},
		{"ok.bin/x", ExternalMissing, "it does not exist"},
		{"../secret.bin", ExternalUnsafe, `it climbs out of the model's folder with ".."`},
		{filepath.Join(root, "secret.bin"), ExternalUnsafe, "it is an absolute path"},
		{"escape.bin", ExternalUnsafe, "it is a link that leads out of the model's folder"},
		{"relative.bin", ExternalUnsafe, "it is a link that leads out of the model's folder"},
		{"outdir/x.bin", ExternalUnsafe, "it is a link that leads out of the model's folder"},
		{"dangling.bin", ExternalUnsafe, "it is a link that leads out of the model's folder"},
		{"fifo.bin", ExternalNotRegular, "it is a named pipe (FIFO)"},
		{"sub", ExternalNotRegular, "it is a folder"},
	}
	for _, tt := range tests {
		check := func(op string, err error) {
			t.Helper()
			if tt.problem == 0 {
				if err != nil {
					t.Errorf("%s(%q) = %v", op, tt.loc, err)
				}
				return
			}
			var ee *ExternalError
			if !errors.As(err, &ee) {
				t.Errorf("%s(%q) = %v, want an *ExternalError", op, tt.loc, err)
				return
			}
			if ee.Problem != tt.problem || ee.Reason != tt.reason {
				t.Errorf("%s(%q) = problem %d %q, want %d %q", op, tt.loc, ee.Problem, ee.Reason, tt.problem, tt.reason)
			}
		}
		f, st, err := OpenExternal(dir, tt.loc)
		check("OpenExternal", err)
		if err == nil {
			if st.Size() != 8 {
				t.Errorf("OpenExternal(%q): size %d", tt.loc, st.Size())
			}
			f.Close()
		}
		_, err = StatExternal(dir, tt.loc)
		check("StatExternal", err)
	}
	m := &Model{External: []ExternalRef{{Tensor: "a", Location: "fifo.bin", Length: 4}}}
	files := m.ExternalFiles(dir)
	if len(files) != 1 || files[0].OK() || !files[0].Exists || files[0].Regular {
		t.Errorf("ExternalFiles of a FIFO: %+v", files)
	}
}
