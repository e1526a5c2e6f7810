package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a buffer the server's goroutines write and the test reads.
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

// TestRefusalsLogged: each request answered with an error is one record (status, method,
// path, client, the error it was sent), warnings for 4xx; the query, which may hold the
// token, is never logged; answers that succeed and the frames of an event stream are not
// logged.
func TestRefusalsLogged(t *testing.T) {
	var out syncBuffer
	ts := newTestServer(t, withConfig(func(c *Config) {
		c.Log = slog.New(slog.NewJSONHandler(&out, nil))
		c.TokenFile = strongToken(t)
	}))
	auth := []string{"Authorization", "Bearer " + testToken}
	snap := ts.submit(t, fastSim, http.StatusCreated, auth...)
	_, events, _ := ts.stream(t, snap.ID, "", auth, nil)
	if len(events) < 3 {
		t.Fatalf("%d events", len(events))
	}
	for _, tt := range []struct {
		method, path string
		header       []string
		status       int
	}{
		{"GET", "/v1/builds/nope", auth, 404},
		{"GET", "/?token=guessed-secret-0123", nil, 401},
		{"POST", "/v1/builds/nope/cancel", append([]string{"Origin", "https://evil.example"}, auth...), 403},
		{"GET", "/v1/builds", []string{"Host", "evil.example"}, 403},
	} {
		if resp, body := ts.do(t, tt.method, tt.path, "", tt.header...); resp.StatusCode != tt.status {
			t.Fatalf("%s %s: %d %s", tt.method, tt.path, resp.StatusCode, body)
		}
	}
	text := out.String()
	if strings.Contains(text, "guessed-secret") || strings.Contains(text, testToken) {
		t.Fatalf("the log holds a token:\n%s", text)
	}
	type record struct {
		Level, Msg, Method, Path, Client, Error string
		Status                                  int
	}
	var records []record
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not a JSON record: %q: %v", sc.Text(), err)
		}
		records = append(records, r)
	}
	want := []record{
		{"WARN", "request refused", "GET", "/v1/builds/nope", "127.0.0.1", "no build nope", 404},
		{"WARN", "request refused", "GET", "/", "127.0.0.1", "the token in the address is not this server's", 401},
		{"WARN", "request refused", "POST", "/v1/builds/nope/cancel", "127.0.0.1", "Origin https://evil.example is not this server's", 403},
		{"WARN", "request refused", "GET", "/v1/builds", "127.0.0.1", "Host evil.example is not this server's address", 403},
	}
	if len(records) != len(want) {
		t.Fatalf("%d records, want %d (the refusals only):\n%s", len(records), len(want), text)
	}
	for i, w := range want {
		if records[i] != w {
			t.Errorf("record %d: %+v, want %+v", i, records[i], w)
		}
	}
}
