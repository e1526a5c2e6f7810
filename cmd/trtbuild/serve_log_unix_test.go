//go:build !windows

package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestServeLogJSON: with --log-format json every line trtbuild serve writes on stderr is one
// JSON record: its start, each build's start and end (id, state, duration), a request it
// refused and why, a build's warning (an engine cache entry that was not used) and a history
// write that failed (the history database locked past its busy timeout) — all of which it
// used to drop.
func TestServeLogJSON(t *testing.T) {
	t.Parallel()
	root, state := serveModelRoot(t), t.TempDir()
	s := startServe(t, root, state, "--log-format", "json")
	const options = `{"backend": "sim", "sim-speed": 100, "no-timing-cache": true}`
	first := s.submit(t, options)
	// Its record of the end comes once the build has done everything, storing its engine in
	// the cache too.
	s.waitLog(t, `"msg":"build ended","build":"`+first.ID+`"`)
	if code, _ := s.request(t, "GET", "/v1/builds/nope", ""); code != 404 {
		t.Fatalf("GET /v1/builds/nope: %d", code)
	}
	// A flipped byte in the engine the cache keeps: the next build of the key does not use
	// it, and says so as a warning.
	engines, _ := filepath.Glob(filepath.Join(state, "engines", "entries", "*", "engine"))
	if len(engines) != 1 {
		t.Fatalf("engine cache entries: %v", engines)
	}
	data, err := os.ReadFile(engines[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(engines[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	second := s.submit(t, options)
	s.waitLog(t, `"msg":"build ended","build":"`+second.ID+`"`)

	// The history database locked by another writer: the server's writes wait out their
	// busy timeout and fail.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(state, "history.db")+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	third := s.submit(t, `{"backend": "sim", "sim-speed": 100, "no-timing-cache": true, "opt-level": 2}`)
	s.waitLog(t, `"msg":"history:`)
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	s.waitLog(t, `"msg":"build ended","build":"`+third.ID+`"`)
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.exited // all of stderr read
	if code := waitExit(t, s.cmd, 60*time.Second); code != 143 {
		t.Fatalf("exit %d after SIGTERM, want 143\n%s", code, s.stderr)
	}

	type record struct {
		Level, Msg, Build, State, Error, Path, Method string
		Status                                        int
		Duration                                      *float64 `json:"duration_s"`
	}
	var records []record
	sc := bufio.NewScanner(strings.NewReader(s.stderr.String()))
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Level == "" || r.Msg == "" {
			t.Fatalf("stderr line %q is not a JSON record with level and msg: %v", sc.Text(), err)
		}
		records = append(records, r)
	}
	has := func(what string, ok func(r record) bool) {
		t.Helper()
		for _, r := range records {
			if ok(r) {
				return
			}
		}
		t.Errorf("no record of %s in:\n%s", what, s.stderr)
	}
	has("the start", func(r record) bool {
		return r.Level == "INFO" && strings.HasPrefix(r.Msg, "listening on http://127.0.0.1:")
	})
	for _, id := range []string{first.ID, second.ID, third.ID} {
		has("build "+id+"'s start", func(r record) bool { return r.Msg == "build started" && r.Build == id })
		has("build "+id+"'s end", func(r record) bool {
			return r.Msg == "build ended" && r.Build == id && r.State == "succeeded" && r.Duration != nil && *r.Duration > 0
		})
	}
	has("the refused request", func(r record) bool {
		return r.Msg == "request refused" && r.Level == "WARN" && r.Status == 404 && r.Method == "GET" && r.Path == "/v1/builds/nope" && strings.Contains(r.Error, "no build")
	})
	has("the warning of the engine cache entry not used", func(r record) bool {
		return r.Level == "WARN" && r.Build == second.ID && strings.Contains(r.Msg, "engine cache entry") && strings.Contains(r.Msg, "SHA-256 differs")
	})
	has("the history write that failed", func(r record) bool {
		return r.Level == "WARN" && r.Build == third.ID && strings.HasPrefix(r.Msg, "history:") && strings.Contains(r.Msg, "locked")
	})
	has("the stop", func(r record) bool { return r.Msg == "stopped" })
}
