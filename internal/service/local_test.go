package service

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocalModelRewrittenWhileQueued: a local caller's model (trtbuild mcp on stdio: the file
// itself, not a copy) rewritten while its build waits in the queue is built as it is when the
// build starts, planned again: the build succeeds, as it did before builds were planned when
// submitted, instead of running to its end and being thrown away as "changed".
func TestLocalModelRewrittenWhileQueued(t *testing.T) {
	e := newEnv(t)
	data, err := os.ReadFile(filepath.Join(e.models, "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	busy, queued := filepath.Join(dir, "busy.onnx"), filepath.Join(dir, "queued.onnx")
	for _, p := range []string{busy, queued} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := e.manager(t, func(c *Config) { c.ModelRoot, c.SimSlots, c.KeepHistory = "", 1, false })
	first, _, err := m.Submit(Request{Model: busy, Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, first.ID, "step")
	second, _, err := m.Submit(Request{Model: queued, Options: opts(t, `{"backend": "sim", "sim-speed": 100, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := m.Get(second.ID); s.State != StateQueued {
		t.Fatalf("the second build is %s, want queued behind the first", s.State)
	}
	// The user writes the model again (an export does: a new file renamed over the old).
	tmp := queued + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, queued); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Cancel(first.ID, true); err != nil {
		t.Fatal(err)
	}
	end := wait(t, m, second.ID)
	if end.State != StateSucceeded || end.Key != second.Key {
		t.Fatalf("the build of the rewritten model: %+v; want succeeded with the key %s (the same bytes)", end, second.Key)
	}
}
