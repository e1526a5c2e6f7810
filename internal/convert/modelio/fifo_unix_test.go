//go:build unix

package modelio

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadRefusesFIFOs checks that neither a model nor its external data is
// read from a named pipe: with no writer, a read would block forever.
func TestLoadRefusesFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.onnx")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	if _, err := Load(fifo); err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") {
		t.Errorf("Load(FIFO) = %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "w.bin"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.onnx")
	writeProto(t, path, externalModel("w.bin", "0", "64"))
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "w.bin is not a regular file (it is a named pipe (FIFO))") {
		t.Errorf("Load(model with FIFO data) = %v", err)
	}
}
