//go:build !windows

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMatrixCellAsPID1: every emitted Kubernetes pod runs `trtbuild matrix cell` as PID 1.
func TestMatrixCellAsPID1(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	dir := matrixDir(t)
	cmd := unsharePID1(t, "matrix", "cell", filepath.Join(dir, "matrix.yaml"), "--index", "0", "--backend", "sim", "--sim-speed", "100", "--progress", "plain")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "Built ") {
		t.Fatalf("matrix cell as PID 1: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
	}
}

// TestHeldOutputFolderDoesNotHang: another process holding a lock on the output folder (any
// user who can read a shared folder can) delays the commit at most outpath.FolderLockWait:
// the build ends, its engine and manifest in place and agreeing.
func TestHeldOutputFolderDoesNotHang(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	engine := filepath.Join(dir, "m.engine")
	simBuild(t, model, "-o", engine)
	if r := trtbuild(t, nil, "engine", "inspect", engine); r.code != 0 {
		t.Fatalf("engine and manifest after a held folder lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
