package service

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a buffer the service's goroutines write and the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestBuildStartAndEndLogged: Config.Logger gets one record when a build starts (where it
// runs, how long it was queued) and one when it ends (its state, the time since it was
// submitted, whether the engine cache answered it, its error); an engine cache hit ends
// without having started.
func TestBuildStartAndEndLogged(t *testing.T) {
	e := newEnv(t)
	var out syncBuffer
	m := e.manager(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&out, nil)) })
	submit := func(options string) string {
		t.Helper()
		s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, options)})
		if err != nil {
			t.Fatal(err)
		}
		wait(t, m, s.ID)
		return s.ID
	}
	built := submit(`{"backend": "sim", "sim-speed": 100}`)
	hit := submit(`{"backend": "sim", "sim-speed": 100}`)
	failed := submit(`{"backend": "sim", "sim-speed": 100, "opt-level": 2, "sim-fail-phase": "Building engine"}`)

	type record struct {
		Level, Msg, Build, Model, On, State, Error string
		Cached                                     bool
		Queued                                     *float64 `json:"queued_s"`
		Duration                                   *float64 `json:"duration_s"`
	}
	var records []record
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not a JSON record: %q: %v", sc.Text(), err)
		}
		records = append(records, r)
	}
	find := func(msg, id string) *record {
		for i := range records {
			if records[i].Msg == msg && records[i].Build == id {
				return &records[i]
			}
		}
		return nil
	}
	for _, id := range []string{built, failed} {
		if r := find("build started", id); r == nil || r.Level != "INFO" || r.Model != "convnet.onnx" || r.On != "sim" || r.Queued == nil {
			t.Errorf("build %s's start: %+v\n%s", id, r, out.String())
		}
	}
	if r := find("build started", hit); r != nil {
		t.Errorf("the cache hit started: %+v", r)
	}
	for _, tt := range []struct {
		id, state string
		cached    bool
		error     string
	}{
		{built, StateSucceeded, false, ""},
		{hit, StateSucceeded, true, ""},
		{failed, StateFailed, false, "Building engine"},
	} {
		r := find("build ended", tt.id)
		if r == nil || r.State != tt.state || r.Cached != tt.cached || r.Duration == nil || *r.Duration < 0 || !strings.Contains(r.Error, tt.error) || (tt.error == "") != (r.Error == "") {
			t.Errorf("build %s's end: %+v, want state %s, cached %v, error with %q\n%s", tt.id, r, tt.state, tt.cached, tt.error, out.String())
		}
	}
}
