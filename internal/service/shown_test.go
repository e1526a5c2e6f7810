package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seenByClients is every byte a client of the builds ids can be shown: their snapshots, event
// logs, traces and reports.
func seenByClients(t *testing.T, m *Manager, ids ...string) string {
	t.Helper()
	var all bytes.Buffer
	for _, id := range ids {
		s, ok := m.Get(id)
		if !ok {
			t.Fatalf("no build %s", id)
		}
		all.Write(s.AppendJSON(nil))
		log, _ := m.Events(id)
		all.Write(log.Lines())
		for _, kind := range []string{"trace", "report", "engine"} {
			f, err := m.File(id, kind)
			if err != nil {
				continue
			}
			if kind != "engine" {
				io.Copy(&all, f)
			}
			f.Close()
		}
	}
	return all.String()
}

// serverPaths are the spellings of the server's own folders, as text and inside JSON strings.
func serverPaths(e env) []string {
	var out []string
	for _, p := range []string{e.state, e.models} {
		q, _ := json.Marshal(p)
		out = append(out, p, string(q[1:len(q)-1]))
	}
	return out
}

// TestClientsSeeNoServerPaths: the events, results, traces and reports of a build that
// succeeds, one answered from the engine cache, one that fails, and a refused request name the
// model as the client did and the build's files relative to the state dir; the server's own
// folders are nowhere, unless the server was started to show them (ExposePaths). The old code
// showed the model root's and the state dir's absolute paths in each.
func TestClientsSeeNoServerPaths(t *testing.T) {
	for _, expose := range []bool{false, true} {
		t.Run(map[bool]string{false: "hidden", true: "exposed"}[expose], func(t *testing.T) {
			e := newEnv(t)
			if err := os.Mkdir(filepath.Join(e.models, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			copyFile(t, filepath.Join(e.models, "convnet.onnx"), filepath.Join(e.models, "sub", "net.onnx"))
			m := e.manager(t, func(c *Config) { c.ExposePaths = expose })
			fast := `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`
			built, _, err := m.Submit(Request{Model: "sub/net.onnx", Options: opts(t, fast)})
			if err != nil {
				t.Fatal(err)
			}
			if end := wait(t, m, built.ID); end.State != StateSucceeded {
				t.Fatalf("the build: %s %q", end.State, end.Error)
			}
			hit, _, err := m.Submit(Request{Model: "sub/net.onnx", Options: opts(t, fast)})
			if err != nil || hit.State != StateSucceeded {
				t.Fatalf("the cache hit: %s %v", hit.State, err)
			}
			failed, _, err := m.Submit(Request{Model: "sub/net.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true, "opt-level": 2, "sim-scenario": "fail"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if end := wait(t, m, failed.ID); end.State != StateFailed {
				t.Fatalf("the failing build: %s", end.State)
			}
			seen := seenByClients(t, m, built.ID, hit.ID, failed.ID)
			_, _, refused := m.Submit(Request{Model: "sub/net.onnx", Options: opts(t, `{"backend": "sim", "shapes": "nope:1x2"}`)})
			var re *RequestError
			if !errors.As(refused, &re) {
				t.Fatalf("%v, want a refusal", refused)
			}
			seen += re.Error()
			if !strings.Contains(seen, `"model":"sub/net.onnx"`) && !expose {
				t.Errorf("the events do not name the model as the client did:\n%s", seen)
			}
			found := ""
			for _, p := range serverPaths(e) {
				if strings.Contains(seen, p) {
					found = p
				}
			}
			switch {
			case !expose && found != "":
				t.Errorf("a client is shown the server's folder %s:\n%s", found, seen)
			case expose && found == "":
				t.Errorf("with ExposePaths a client is not shown the server's folders:\n%s", seen)
			}
		})
	}
}
