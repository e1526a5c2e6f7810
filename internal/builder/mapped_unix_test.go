//go:build unix

package builder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/filestamp"
	"github.com/trtbuild/trtbuild/internal/onnx"
)

// TestMappedWriteKeepsNoEngine: a writer that changes the model through a shared mapping whose
// pages it dirtied before the build opened the model moves none of the file's times, so the
// pin sees nothing; with an engine cache, whose entries others take by the key, the model is
// hashed again before the engine is kept: the build fails, and nothing is written or stored.
func TestMappedWriteKeepsNoEngine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(model, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapped, err := syscall.Mmap(int(f.Fd()), 0, len(data), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapped)
	for i := 0; i < len(mapped); i += os.Getpagesize() {
		mapped[i] ^= noChange // every page dirty before the build opens the file
	}
	o := DefaultOptions()
	o.Model, o.Engine, o.Backend = model, filepath.Join(dir, "model.engine"), "sim"
	o.Sim.Speed, o.NoTimingCache = 1000, true
	cache := filepath.Join(dir, "cache")
	o.EngineCache = EngineCache{Dir: cache, Size: "1G"}
	o.ModelHashes = func(src *onnx.Source) (buildkey.ModelHashes, error) {
		h, err := buildkey.HashSource(src)
		// The writer: a weight's byte, through the dirty mapping, once the key is computed.
		mapped[len(mapped)/2] ^= 0x40
		return h, err
	}
	before, err := filestamp.Of(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), o, Frontend{})
	if exitcode.Of(err) == exitcode.OK || !strings.Contains(res.Error, "changed while it was being built") {
		t.Fatalf("build: %+v, %v; want it failed as the model changed", res, err)
	}
	// The times did not move (the case under test) unless the kernel wrote the dirty pages back
	// during the build, and the write then faulted and moved them: then the pin saw the change.
	after, err := filestamp.Of(f)
	if err != nil {
		t.Fatal(err)
	}
	unmoved := after == before
	if unmoved && !strings.Contains(res.Error, "though its file times did not move") {
		t.Errorf("the build failed with %q, with the file's times unmoved; want the second hash's refusal", res.Error)
	}
	if !unmoved {
		t.Logf("the file's stamp moved (%+v → %+v): the kernel wrote the pages back, and the pin saw the change", before, after)
	}
	if _, err := os.Lstat(o.Engine); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an engine was written: %v", err)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "entries", "*"))
	if len(entries) > 0 {
		t.Errorf("the engine cache holds %v", entries)
	}
}

// noChange is a byte that XOR leaves a byte as it is, in a variable, so that the compiler
// cannot drop the write that dirties a page.
var noChange byte
