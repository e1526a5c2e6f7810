//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNamedPipesAreRefused checks that a FIFO given as the model, or as a
// model's external data, is refused at once with one line and exit 2 by
// every command that reads models, and by serve as its token file: reading
// one with no writer would block forever, so a missing check hangs this test.
func TestNamedPipesAreRefused(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.onnx")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	// A model whose external data file is a FIFO.
	ext := repoModel(t, "external_data.onnx")
	data := filepath.Join(filepath.Dir(ext), "external_data.bin")
	if err := syscall.Mkfifo(data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"build", []string{"--backend", "sim", fifo}, "is a named pipe (FIFO), not a regular file"},
		{"build without preflight", []string{"--backend", "sim", "--no-preflight", fifo}, "is a named pipe (FIFO), not a regular file"},
		{"inspect", []string{"inspect", fifo}, "is a named pipe (FIFO), not a regular file"},
		{"convert", []string{"convert", "--fp16", fifo, "-o", filepath.Join(dir, "out.onnx")}, "is a named pipe (FIFO), not a regular file"},
		{"build with FIFO data", []string{"--backend", "sim", ext}, "is not a regular file"},
		{"build with FIFO data without preflight", []string{"--backend", "sim", "--no-preflight", ext}, "is not a regular file"},
		{"convert with FIFO data", []string{"convert", "--fp16", ext, "-o", filepath.Join(dir, "ext.onnx")}, "is not a regular file"},
		// serve reads its token before it listens: a FIFO held it there, deaf to signals.
		{"serve's token file", []string{"serve", "--model-root", dir, "--state-dir", filepath.Join(dir, "state1"), "--token-file", fifo}, "--token-file " + fifo + " is a named pipe (FIFO), not a regular file"},
		{"serve's token file a device", []string{"serve", "--model-root", dir, "--state-dir", filepath.Join(dir, "state2"), "--token-file", "/dev/zero"}, "--token-file /dev/zero is a character device, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, tt.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr should be one line containing %q; got:\n%s", tt.want, r.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out.onnx")); err == nil {
		t.Error("convert wrote a file")
	}
}

// TestNoPreflightKeepsExternalDataInTheModelFolder checks that
// --no-preflight, which skips the model checks, still refuses external
// data outside the model's folder.
func TestNoPreflightKeepsExternalDataInTheModelFolder(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	ext := repoModel(t, "external_data.onnx")
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "external_data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.bin")
	if err := os.WriteFile(outside, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(filepath.Dir(ext), "external_data.bin")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--backend", "sim", ext}, {"--backend", "sim", "--no-preflight", ext}} {
		r := trtbuild(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "is a link that leads out of the model's folder") {
			t.Errorf("%v: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
}

// TestMatrixFileNotRegular: every subcommand that reads a matrix file opens it as every input
// is opened: a FIFO (which used to hang them: a missing check hangs this test), a device
// (/dev/zero used to be read until memory ran out) and a file larger than 16 MiB are refused
// at once with one line that names the problem and the fix, exit 2, and nothing written.
func TestMatrixFileNotRegular(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(testMatrix+"#"+strings.Repeat("x", 16<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"FIFO", fifo, "is a named pipe (FIFO), not a regular file; save the matrix to a regular file"},
		{"device", "/dev/zero", "is a character device, not a regular file; save the matrix to a regular file"},
		{"too large", big, "is larger than 16 MiB"},
	} {
		for _, c := range matrixCommands(dir) {
			t.Run(tc.name+" "+c.name, func(t *testing.T) {
				r := trtbuild(t, nil, c.args(tc.path)...)
				wantRefused(t, r, "matrix file "+tc.path+" ", tc.want)
				for _, made := range []string{"engines", "cache", "repo", "trtbuild-l4.sbatch"} {
					if _, err := os.Stat(filepath.Join(dir, made)); err == nil {
						t.Fatalf("a refused run wrote %s", made)
					}
				}
			})
		}
	}
}
