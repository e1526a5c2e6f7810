package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/history"
)

// TestOneServerPerStateDir: a second Manager that keeps the history (a second trtbuild serve)
// is refused on a state dir in use, with a one-line error that names it and what to do, and
// the first one's running build is left as it is; once the first closes, it may start.
func TestOneServerPerStateDir(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, s.ID, "step")
	for _, tt := range []struct {
		history bool
		want    string
	}{
		{true, "is in use by another trtbuild serve; give another --state-dir, or stop the other process"},
		{false, "is in use by a trtbuild serve; give another --state-dir, or stop that server"},
	} {
		_, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: tt.history})
		if err == nil || !strings.Contains(err.Error(), e.state) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("a second manager (history %v): %v, want one line with %q", tt.history, err, tt.want)
		}
	}
	if got, _ := m.Get(s.ID); got.State != StateRunning {
		t.Fatalf("the first server's build is %s after a second server was refused", got.State)
	}
	st, err := history.Open(filepath.Join(e.state, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	row, _, err := st.Get(s.ID)
	st.Close()
	if err != nil || row.State != StateRunning {
		t.Fatalf("the history has the first server's build %s (%v), want running", row.State, err)
	}
	if _, err := m.Cancel(s.ID, true); err != nil {
		t.Fatal(err)
	}
	wait(t, m, s.ID)
	m.Close()
	again, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: true})
	if err != nil {
		t.Fatalf("a server after the first closed: %v", err)
	}
	again.Close()
}

// TestManagersWithoutHistoryShareAStateDir: two Managers without a history (two trtbuild mcp,
// one per IDE window) work on one state dir at once, each cleaning up only what a dead
// process left; a server is refused meanwhile.
func TestManagersWithoutHistoryShareAStateDir(t *testing.T) {
	e := newEnv(t)
	local := func(c *Config) { c.KeepHistory = false }
	first := e.manager(t, local)
	// What a killed process left: its runs/ folder, and its lock file, which no one holds.
	dead := filepath.Join(e.state, "runs", "0123456789abcdef")
	if err := os.MkdirAll(filepath.Join(dead, "build"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dead+ownerSuffix, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	second := e.manager(t, local)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead process's runs/ folder is left: %v", err)
	}
	if _, err := os.Stat(first.owner.dir); err != nil {
		t.Errorf("the live first manager's runs/ folder was removed: %v", err)
	}
	var ids [2]string
	for i, m := range []*Manager{first, second} {
		s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 20, "no-timing-cache": true}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = s.ID
	}
	for i, m := range []*Manager{first, second} {
		if end := wait(t, m, ids[i]); end.State != StateSucceeded {
			t.Errorf("manager %d's build: %+v", i+1, end)
		}
	}
	_, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: true})
	if err == nil || !strings.Contains(err.Error(), "is in use by trtbuild mcp; give another --state-dir") {
		t.Errorf("a server on the state dir of two mcp: %v", err)
	}
}

// TestStateDirLockOutlivesItsFile: removing the state dir's lock file while a server holds it
// lets no second server (nor a trtbuild mcp) start on the state dir, where it would mark the
// first one's running builds interrupted.
func TestStateDirLockOutlivesItsFile(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	os.Remove(filepath.Join(e.state, stateLockName)) //nolint:errcheck // Windows refuses it while it is held
	for _, history := range []bool{true, false} {
		if other, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: history}); err == nil {
			other.Close()
			t.Fatalf("a second manager (history %v) started on a state dir in use once its lock file was removed", history)
		} else if !strings.Contains(err.Error(), "is in use by") {
			t.Errorf("a second manager (history %v): %v, want \"is in use by\"", history, err)
		}
	}
	m.Close()
	again, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: true})
	if err != nil {
		t.Fatalf("a server after the first closed: %v", err)
	}
	again.Close()
}
