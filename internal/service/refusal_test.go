package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// refused submits model with options and returns its refusal, failing the test when it is
// accepted or fails otherwise.
func refused(t *testing.T, m *Manager, model, options string) *RequestError {
	t.Helper()
	s, _, err := m.Submit(Request{Model: model, Options: opts(t, options)})
	var re *RequestError
	if !errors.As(err, &re) {
		t.Fatalf("%s: %+v, %v; want a refusal", model, s, err)
	}
	return re
}

// entries are the names in dir (none when it is missing).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

// TestRefusedSubmitsLeaveNoFolder: a request refused after its model was copied (its key
// cannot be computed: dynamic inputs without shapes; its external data is missing) leaves
// neither its build's folder nor its run's folder with the copy. The old code left the run's
// folder in runs/ until the server restarted, one per refused request.
func TestRefusedSubmitsLeaveNoFolder(t *testing.T) {
	e := newEnv(t)
	copyFile(t, "../../testdata/models/bert_tiny.onnx", filepath.Join(e.models, "bert_tiny.onnx"))
	copyFile(t, "../../testdata/models/external_data.onnx", filepath.Join(e.models, "external_data.onnx"))
	m := e.manager(t, nil)
	for i := 0; i < 3; i++ {
		if re := refused(t, m, "bert_tiny.onnx", `{"backend": "sim"}`); !strings.Contains(re.Problem, "no shapes were given") {
			t.Fatalf("refusal %d: %v", i, re)
		}
		refused(t, m, "external_data.onnx", `{"backend": "sim"}`)
	}
	if left := entries(t, m.owner.dir); len(left) > 0 {
		t.Errorf("refused requests left %v in %s", left, m.owner.dir)
	}
	if left := entries(t, filepath.Join(e.state, "builds")); len(left) > 0 {
		t.Errorf("refused requests left build folders %v", left)
	}
}

// TestSweepRunsRemovesLeftovers: the retention rule's sweep removes the folders in this
// Manager's runs/ that no request or run uses, and leaves a running build's.
func TestSweepRunsRemovesLeftovers(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, s.ID, "step")
	stray := m.owner.runDir(newID(time.Now()))
	if err := os.MkdirAll(filepath.Join(stray, modelDir), 0o700); err != nil {
		t.Fatal(err)
	}
	m.sweepRuns()
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("a folder no run uses is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(m.owner.runDir(s.ID), modelDir, "convnet.onnx")); err != nil {
		t.Errorf("the running build's copy of its model was removed: %v", err)
	}
	if _, err := m.Cancel(s.ID, true); err != nil {
		t.Fatal(err)
	}
	wait(t, m, s.ID)
}

// TestRefusalsShowNoServerPaths: no refusal of a bad model name (one through a file, one that
// climbs out, a link, a link out of the root on the way, a FIFO, a folder, a missing file) nor
// of a model whose copy came out truncated shows the model root's or the state dir's path, or
// where the copy was made; the truncated one is named as the client named it. The old code
// showed the model root in the first ("open /ROOT/convnet.onnx: not a directory") and the
// copy's path in the last ("/STATE/runs/OWNER/ID/model/big/huge.onnx is truncated").
func TestRefusalsShowNoServerPaths(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.models, "big", "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(e.models, "convnet.onnx"), filepath.Join(e.models, "big", "huge.onnx"))
	if err := os.Symlink("convnet.onnx", filepath.Join(e.models, "link.onnx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(e.models, "out")); err != nil {
		t.Fatal(err)
	}
	names := []string{"convnet.onnx/x", "a/../../x", "link.onnx", "out/x.onnx", "big/folder", "big", "nope.onnx", "big/huge.onnx"}
	if made, err := makeFIFO(filepath.Join(e.models, "fifo.onnx")); err != nil {
		t.Fatal(err)
	} else if made {
		names = append(names, "fifo.onnx")
	}
	m := e.manager(t, nil)
	// What a model that shrank while it was copied leaves: a copy shorter than the model.
	m.hooks.copied = func(path string) {
		if filepath.Base(path) == "huge.onnx" {
			if err := os.Truncate(path, 100); err != nil {
				t.Error(err)
			}
		}
	}
	hidden := append(serverPaths(e), m.cfg.StateDir, m.models.dir, "runs"+string(filepath.Separator))
	for _, name := range names {
		re := refused(t, m, name, `{"backend": "sim"}`)
		_, _, toolErr := m.OpenModel(name)
		for _, msg := range []string{re.Error(), fmt.Sprint(toolErr)} {
			for _, p := range hidden {
				if strings.Contains(msg, p) {
					t.Errorf("%s: the refusal shows %s: %s", name, p, msg)
				}
			}
		}
		if name == "big/huge.onnx" && !strings.HasPrefix(re.Problem, "big/huge.onnx is truncated") {
			t.Errorf("the truncated copy's refusal: %s; want it named big/huge.onnx", re.Problem)
		}
	}
}

// TestExternalDataRefusalHint: a model whose external data is missing, or shorter than the
// model needs, is refused with a hint about its external data, not the options' hint the old
// code gave.
func TestExternalDataRefusalHint(t *testing.T) {
	e := newEnv(t)
	for _, dir := range []string{"missing", "short"} {
		if err := os.Mkdir(filepath.Join(e.models, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, "../../testdata/models/external_data.onnx", filepath.Join(e.models, dir, "model.onnx"))
	}
	if err := os.WriteFile(filepath.Join(e.models, "short", "external_data.bin"), make([]byte, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, nil)
	for _, tt := range []struct{ model, problem string }{
		{"missing/model.onnx", `external data file "external_data.bin" cannot be read`},
		{"short/model.onnx", `external data file "external_data.bin" is 10 bytes`},
	} {
		re := refused(t, m, tt.model, `{"backend": "sim"}`)
		if re.Kind != KindInvalid || !strings.Contains(re.Problem, tt.problem) || re.Hint != externalHint {
			t.Errorf("%s: %d %q, hint %q; want KindInvalid, %q and the external data's hint", tt.model, re.Kind, re.Problem, re.Hint, tt.problem)
		}
	}
}

// TestNegativeTimeoutRefused: a request's negative time budget is refused, as the command
// line refuses it, where the old code ran the build with no budget at all.
func TestNegativeTimeoutRefused(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	re := refused(t, m, "convnet.onnx", `{"backend": "sim", "timeout": "-5s"}`)
	if re.Kind != KindInvalid || !strings.Contains(re.Problem, `option "timeout": -5s is negative`) {
		t.Errorf("%d %q; want KindInvalid naming the negative timeout", re.Kind, re.Problem)
	}
}
