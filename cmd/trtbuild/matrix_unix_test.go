//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMatrixOutputsKeepInputs: what `matrix emit` writes never destroys an input or goes
// through what another user may have planted. -o naming the matrix file or a model (or a link
// to one) is refused, as a build refuses -o naming its model; a link or a FIFO where a Slurm
// script goes is refused before anything is made (no log folder, no other script). Each exits
// 2 with one line, and every file is left as it was.
func TestMatrixOutputsKeepInputs(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	k8s := func(out string) []string {
		return []string{"matrix", "emit", "k8s", "matrix.yaml", "--image", "registry.example/trtbuild:cuda", "-o", out}
	}
	slurm := []string{"matrix", "emit", "slurm", "matrix.yaml", "--trtbuild", "/usr/local/bin/trtbuild"}
	cases := []struct {
		name  string
		plant func(dir string) error
		args  []string
		want  string
	}{
		{"k8s -o the matrix file", nil, k8s("matrix.yaml"), "-o matrix.yaml is the matrix file matrix.yaml; writing it would destroy it"},
		{"k8s -o a model", nil, k8s("models/convnet.onnx"), "is the model"},
		{"k8s -o a link to the matrix file", func(dir string) error { return os.Symlink("matrix.yaml", filepath.Join(dir, "jobs.yaml")) },
			k8s("jobs.yaml"), "is the matrix file"},
		{"slurm script a FIFO", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "trtbuild-l4.sbatch"), 0o644) },
			slurm, "trtbuild-l4.sbatch is a named pipe (FIFO)"},
		{"slurm script a link", func(dir string) error { return os.Symlink("matrix.yaml", filepath.Join(dir, "trtbuild-l4.sbatch")) },
			slurm, "trtbuild-l4.sbatch is a symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := matrixDir(t)
			writeMatrix(t, dir, testMatrix)
			if c.plant != nil {
				if err := c.plant(dir); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, dir)
			r := trtbuildIn(t, dir, c.args...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line containing %q", r.code, r.stderr, c.want)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
}
