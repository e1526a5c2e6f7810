//go:build unix

package buildkey

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// TestHashCutShortWhileRead: a model truncated while its mapped bytes are hashed faults on the
// pages past its new end (SIGBUS); the hash fails with ErrCutShort instead of crashing.
func TestHashCutShortWhileRead(t *testing.T) {
	data, err := os.ReadFile(tm.Bundled(t, "bert_tiny.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapped, release, err := mapOpen(f)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := hashMapped(mapped, nil); err != nil {
		t.Fatalf("hashing the whole model: %v", err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := hashMapped(mapped, nil); !errors.Is(err, ErrCutShort) {
		t.Errorf("hashing a model cut short: %v, want ErrCutShort", err)
	}
}
