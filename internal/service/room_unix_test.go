//go:build unix

package service

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestCopyFillingTheDiskIs507: a copy that fills the state dir's file system (its model or
// external data grew after the copy was let in) is refused as 507, as a copy without the room
// is, in one line; other failures stay 500. The old code answered 500 to a full disk.
func TestCopyFillingTheDiskIs507(t *testing.T) {
	shown := func(s string) string { return s }
	full := &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	if re := copyError("m.onnx", fmt.Errorf("copying external data %q: %w", "w.bin", full), shown); re.Kind != KindNoRoom ||
		!strings.Contains(re.Problem, "filled up while the model m.onnx was copied") || strings.Contains(re.Error(), "\n") {
		t.Errorf("a full disk: %+v, want a one-line 507", re)
	}
	other := &os.PathError{Op: "write", Path: "x", Err: syscall.EIO}
	if re := copyError("m.onnx", other, shown); re.Kind != KindInternal {
		t.Errorf("an I/O error: %+v, want 500", re)
	}
}
