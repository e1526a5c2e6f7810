package service

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/manifest"
)

// swaps are what another user who may write in the model root does to a model's name: each
// leaves at the name something that is not the file the request named when it was opened.
var swaps = []struct {
	name string
	swap func(t *testing.T, e env, victim, outside string)
}{
	{"a link out of the root renamed over the name", func(t *testing.T, e env, victim, outside string) {
		link := victim + ".new"
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(link, victim); err != nil {
			t.Fatal(err)
		}
	}},
	{"the outside model's bytes renamed over the name", func(t *testing.T, e env, victim, outside string) {
		copyFile(t, outside, victim+".new")
		if err := os.Rename(victim+".new", victim); err != nil {
			t.Fatal(err)
		}
	}},
	{"the folder replaced by a link out of the root", func(t *testing.T, e env, victim, outside string) {
		dir := filepath.Dir(victim)
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Dir(outside), dir); err != nil {
			t.Fatal(err)
		}
	}},
}

// placeVictim puts the bundled convnet model into the root as sub/victim.onnx and a different
// model (whose inputs are x and cond) outside the root as sub/victim.onnx of another folder,
// and returns both paths and the victim's hashes.
func placeVictim(t *testing.T, e env) (victim, outside string, want buildkey.ModelHashes) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(e.models, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	victim = filepath.Join(e.models, "sub", "victim.onnx")
	copyFile(t, filepath.Join(e.models, "convnet.onnx"), victim)
	outside = filepath.Join(t.TempDir(), "victim.onnx")
	copyFile(t, "../../testdata/models/control_flow.onnx", outside)
	want, err := buildkey.HashModel(victim)
	if err != nil {
		t.Fatal(err)
	}
	return victim, outside, want
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// builtHashes are the model hashes the manifest of build s's engine records.
func builtHashes(t *testing.T, e env, s Snapshot) buildkey.Parts {
	t.Helper()
	m, err := manifest.Read(filepath.Join(e.state, "builds", s.ID, "victim.engine.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Key != s.Key {
		t.Errorf("the manifest's key %s is not the build's %s", m.Key, s.Key)
	}
	return m.Parts
}

// TestModelSwappedAfterOpen: the model is opened once, inside the root, and everything is read
// from what was opened: a name swapped at the worst moment, just after the open (a test hook),
// changes nothing that is built, keyed or cached. The old code opened the model by its path
// several times (the key's hash, the preflight, the worker), and built a model from outside the
// root under the key of the one inside it.
func TestModelSwappedAfterOpen(t *testing.T) {
	for _, tc := range swaps {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			victim, outside, want := placeVictim(t, e)
			m := e.manager(t, nil)
			swapped := false
			m.hooks.opened = func(name string) {
				if name == "sub/victim.onnx" && !swapped {
					swapped = true
					tc.swap(t, e, victim, outside)
				}
			}
			s, _, err := m.Submit(Request{Model: "sub/victim.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`)})
			if err != nil {
				t.Fatal(err)
			}
			if !swapped {
				t.Fatal("the hook did not run")
			}
			end := wait(t, m, s.ID)
			if end.State != StateSucceeded {
				t.Fatalf("the build: %s %q", end.State, end.Error)
			}
			if got := builtHashes(t, e, end); got.Graph != want.Graph || got.Weights != want.Weights {
				t.Errorf("built graph %s weights %s, want the model in the root's %s %s", got.Graph, got.Weights, want.Graph, want.Weights)
			}
			// The plan the stand-in TensorRT wrote names the model it read (its size) and the
			// layers it timed, after that model's nodes: the model in the root's (convnet's),
			// none of the outside model's (an If node).
			plan, err := os.ReadFile(filepath.Join(e.state, "builds", s.ID, "victim.engine"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(plan), fmt.Sprintf("\nmodel_bytes %d\n", want.Bytes)) || !strings.Contains(string(plan), "stem/conv1") || strings.Contains(string(plan), "\tIf") {
				t.Errorf("the engine is not of the model in the root:\n%s", plan)
			}
			// A later request for the model in the root, put back, is answered from the cache
			// with that same engine.
			if err := os.RemoveAll(filepath.Dir(victim)); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Dir(victim), 0o755); err != nil {
				t.Fatal(err)
			}
			copyFile(t, filepath.Join(e.models, "convnet.onnx"), victim)
			again, _, err := m.Submit(Request{Model: "sub/victim.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`)})
			if err != nil {
				t.Fatal(err)
			}
			if again.Key != end.Key || again.State != StateSucceeded {
				t.Errorf("the model in the root again: %s %s, want a cache hit of key %s", again.State, again.Key, end.Key)
			}
		})
	}
}

// TestRefusalQuotesOnlyTheRootsModel: a refused request's message (here the inputs a shapes
// option could name) is of the model opened inside the root, never of a file a swap put at its
// name afterwards. The old code quoted the outside file's input names.
func TestRefusalQuotesOnlyTheRootsModel(t *testing.T) {
	e := newEnv(t)
	victim, outside, _ := placeVictim(t, e)
	m := e.manager(t, nil)
	m.hooks.opened = func(string) { swaps[0].swap(t, e, victim, outside) }
	_, _, err := m.Submit(Request{Model: "sub/victim.onnx", Options: opts(t, `{"backend": "sim", "shapes": "nope:1x2"}`)})
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != KindInvalid {
		t.Fatalf("%v, want a refusal", err)
	}
	if msg := re.Error(); !strings.Contains(msg, `"images"`) || strings.Contains(msg, `"cond"`) {
		t.Errorf("the refusal %q does not name the inputs of the model in the root (images)", msg)
	}
}

// TestQueuedBuildBuildsTheSubmittedModel: a build waiting in the queue builds the model as it
// was when it was submitted (its private copy), whatever is put at the name in the meantime.
func TestQueuedBuildBuildsTheSubmittedModel(t *testing.T) {
	for _, tc := range swaps {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			victim, outside, want := placeVictim(t, e)
			m := e.manager(t, func(c *Config) { c.SimSlots = 1 })
			first, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`)})
			if err != nil {
				t.Fatal(err)
			}
			queued, _, err := m.Submit(Request{Model: "sub/victim.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50, "sim-seed": 7}`)})
			if err != nil || queued.State != StateQueued {
				t.Fatalf("%s %v", queued.State, err)
			}
			tc.swap(t, e, victim, outside)
			if _, err := m.Cancel(first.ID, true); err != nil {
				t.Fatal(err)
			}
			end := wait(t, m, queued.ID)
			if end.State != StateSucceeded {
				t.Fatalf("the queued build: %s %q", end.State, end.Error)
			}
			if got := builtHashes(t, e, end); got.Graph != want.Graph {
				t.Errorf("built graph %s, want the submitted model's %s", got.Graph, want.Graph)
			}
			// Its copy of the model is gone with its run: no victim.onnx is left in the state dir.
			filepath.WalkDir(e.state, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.Name() == "victim.onnx" {
					t.Errorf("a copy of the model is still there: %s", path)
				}
				return nil
			})
		})
	}
}

// TestOpenModelForTools: a tool's model (MCP inspect, convert, key under serve) is a private
// copy of the file opened inside the root, with its external data, removed on release.
func TestOpenModelForTools(t *testing.T) {
	e := newEnv(t)
	victim, outside, _ := placeVictim(t, e)
	copyFile(t, "../../testdata/models/external_data.onnx", filepath.Join(e.models, "ext.onnx"))
	copyFile(t, "../../testdata/models/external_data.bin", filepath.Join(e.models, "external_data.bin"))
	m := e.manager(t, nil)
	m.hooks.opened = func(name string) {
		if name == "sub/victim.onnx" {
			swaps[0].swap(t, e, victim, outside)
		}
	}
	path, release, err := m.OpenModel("sub/victim.onnx")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(e.models, "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the tool's copy is not the model opened in the root")
	}
	if rel, err := filepath.Rel(e.state, path); err != nil || !filepath.IsLocal(rel) {
		t.Errorf("the copy %s is not in the state dir", path)
	}
	release()
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("release left the copy's folder: %v", err)
	}

	path, release, err = m.OpenModel("ext.onnx")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	h, err := buildkey.HashModel(path)
	if err != nil {
		t.Fatalf("the copy with external data: %v", err)
	}
	if orig, err := buildkey.HashModel(filepath.Join(e.models, "ext.onnx")); err != nil || orig != h {
		t.Errorf("the copy hashes %+v, the original %+v (%v)", h, orig, err)
	}
}
