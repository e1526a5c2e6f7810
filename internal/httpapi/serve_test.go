package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder/buildertest"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/service"
)

// TestMain lets the test binary be the build worker and the probe, as trtbuild is.
func TestMain(m *testing.M) { buildertest.Main(m) }

// testServer is a Server on a free loopback port over a Manager of simulated builds, with the
// bundled convnet in its model root.
type testServer struct {
	*Server
	url, addr, modelRoot, stateDir string
	m                              *service.Manager
}

// serverOption changes the Manager's Config before service.New, the Config before New, or the
// Server before it serves.
type serverOption struct {
	svc func(*service.Config)
	cfg func(*Config)
	srv func(*Server)
}

func withService(f func(*service.Config)) serverOption { return serverOption{svc: f} }
func withConfig(f func(*Config)) serverOption          { return serverOption{cfg: f} }
func withServer(f func(*Server)) serverOption          { return serverOption{srv: f} }

func newTestServer(t *testing.T, opts ...serverOption) *testServer {
	t.Helper()
	root, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	model, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "convnet.onnx"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := builder.DefaultOptions().EngineCache
	cache.Dir = filepath.Join(state, "engines")
	scfg := service.Config{StateDir: state, ModelRoot: root, SimSlots: 4, KeepHistory: true,
		Refused:     map[string]string{"save-engine": "the server keeps each build's engine"},
		EngineCache: cache}
	for _, o := range opts {
		if o.svc != nil {
			o.svc(&scfg)
		}
	}
	m, err := service.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Addr: l.Addr().String(), Manager: m, Version: "test"}
	for _, o := range opts {
		if o.cfg != nil {
			o.cfg(&cfg)
		}
	}
	s, err := New(cfg)
	if err != nil {
		l.Close()
		m.Close()
		t.Fatal(err)
	}
	for _, o := range opts {
		if o.srv != nil {
			o.srv(s)
		}
	}
	go s.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m.Shutdown(ctx)
		s.Close()
		m.Close()
	})
	return &testServer{Server: s, url: "http://" + l.Addr().String(), addr: l.Addr().String(), modelRoot: root, stateDir: state, m: m}
}

// do sends a request and returns the response with its body read.
func (ts *testServer) do(t *testing.T, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// submit posts a build of the convnet with options and returns its snapshot.
func (ts *testServer) submit(t *testing.T, options string, wantStatus int, header ...string) service.Snapshot {
	t.Helper()
	resp, body := ts.do(t, "POST", "/v1/builds", `{"model": "convnet.onnx", "options": `+options+`}`, header...)
	if resp.StatusCode != wantStatus {
		t.Fatalf("POST /v1/builds: %d, want %d: %s", resp.StatusCode, wantStatus, body)
	}
	var s service.Snapshot
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("the snapshot %s: %v", body, err)
	}
	return s
}

// sseEvent is one event of a stream.
type sseEvent struct {
	id        int64
	typ, data string
}

// stream reads build id's event stream (query added to its path) to its end: the server
// closes it after the result. each is called with every event as it comes; it may return false
// to stop reading.
func (ts *testServer) stream(t *testing.T, id, query string, header []string, each func(sseEvent) bool) (*http.Response, []sseEvent, []string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.url+"/v1/builds/"+id+"/events"+query, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", req.URL.Path, resp.StatusCode, body)
	}
	var events []sseEvent
	var comments []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.typ != "" {
				events = append(events, cur)
				if each != nil && !each(cur) {
					return resp, events, comments
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ":"):
			comments = append(comments, line)
		case strings.HasPrefix(line, "id: "):
			cur.id, err = strconv.ParseInt(line[4:], 10, 64)
			if err != nil {
				t.Fatalf("event id %q", line)
			}
		case strings.HasPrefix(line, "event: "):
			cur.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data += line[6:]
		default:
			t.Fatalf("a line of the stream that is no event field: %q", line)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the stream did not end within two minutes")
	}
	return resp, events, comments
}

// waitState polls build id until its state is want.
func (ts *testServer) waitState(t *testing.T, id, want string) service.Snapshot {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, ok := ts.m.Get(id)
		if ok && s.State == want {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s is %q, not %q, after a minute", id, s.State, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func errorBody(t *testing.T, body []byte) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("not an error body {\"error\", \"hint\"}: %s", body)
	}
	if strings.Contains(e.Error, "\n") {
		t.Fatalf("the error is not one line: %q", e.Error)
	}
	return e
}

const fastSim = `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`

func TestBuildOverHTTP(t *testing.T) {
	ts := newTestServer(t)
	snap := ts.submit(t, fastSim, http.StatusCreated)
	if snap.ID == "" || snap.Key == "" || snap.Model != "convnet.onnx" {
		t.Fatalf("snapshot %+v", snap)
	}
	resp, events, _ := ts.stream(t, snap.ID, "", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("stream answer %d %v", resp.StatusCode, resp.Header)
	}
	if len(events) < 10 || events[0].typ != "build" || events[len(events)-1].typ != "result" {
		t.Fatalf("%d events, first %+v", len(events), events[0])
	}
	for i, ev := range events {
		if ev.id != int64(i+1) {
			t.Fatalf("event %d has id %d", i, ev.id)
		}
		var line struct{ Type string }
		if err := json.Unmarshal([]byte(ev.data), &line); err != nil || line.Type != ev.typ {
			t.Fatalf("event %d: data %q is not a %s line", ev.id, ev.data, ev.typ)
		}
	}
	if !strings.Contains(events[len(events)-1].data, `"status":"built"`) {
		t.Fatalf("result %s", events[len(events)-1].data)
	}
	done := ts.waitState(t, snap.ID, "succeeded")
	if !done.Engine || done.Result == nil {
		t.Fatalf("snapshot after the build %+v", done)
	}

	resp, body := ts.do(t, "GET", "/v1/builds/"+snap.ID, "")
	var got service.Snapshot
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.State != "succeeded" {
		t.Fatalf("GET the build: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "GET", "/v1/builds/"+snap.ID+"/engine", "")
	if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte("TRTBUILD-SIMULATED-PLAN")) || resp.Header.Get("ETag") != `"`+snap.Key+`"` {
		t.Fatalf("engine: %d %v %.40q", resp.StatusCode, resp.Header, body)
	}
	resp, _ = ts.do(t, "GET", "/v1/builds/"+snap.ID+"/engine", "", "If-None-Match", `"`+snap.Key+`"`)
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("engine with its ETag: %d, want 304", resp.StatusCode)
	}
	resp, body = ts.do(t, "GET", "/v1/builds/"+snap.ID+"/report", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !bytes.Contains(body, []byte("<html")) {
		t.Fatalf("report: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = ts.do(t, "GET", "/v1/builds/"+snap.ID+"/trace", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" || bytes.Count(body, []byte("\n")) != len(events) {
		t.Fatalf("trace: %d %v, %d lines for %d events", resp.StatusCode, resp.Header, bytes.Count(body, []byte("\n")), len(events))
	}
	resp, body = ts.do(t, "GET", "/v1/builds?state=succeeded", "")
	var list struct{ Builds []service.Snapshot }
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list.Builds) != 1 || list.Builds[0].ID != snap.ID {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "GET", "/v1/builds?state=running", "")
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"builds":[]}` {
		t.Fatalf("list of running builds: %d %s", resp.StatusCode, body)
	}

	// The same build again is the engine cache's: succeeded at once.
	again := ts.submit(t, fastSim, http.StatusCreated)
	if again.ID == snap.ID || again.State != "succeeded" || again.Key != snap.Key {
		t.Fatalf("the second identical build %+v, want succeeded from the cache", again)
	}
	st := ts.m.Stats()
	if st.EventsStreamed < uint64(len(events)) || st.SSEClients != 0 {
		t.Fatalf("stats %+v after streaming %d events", st, len(events))
	}
}

func TestResume(t *testing.T) {
	ts := newTestServer(t)
	snap := ts.submit(t, fastSim, http.StatusCreated)
	_, all, _ := ts.stream(t, snap.ID, "", nil, nil)
	n := int64(len(all))
	for _, tt := range []struct {
		name   string
		header []string
		query  string
		after  int64
	}{
		{"Last-Event-ID", []string{"Last-Event-ID", "7"}, "", 7},
		{"after", nil, "?after=3", 3},
		{"Last-Event-ID over after", []string{"Last-Event-ID", "5"}, "?after=2", 5},
		{"the last but one", []string{"Last-Event-ID", strconv.FormatInt(n-1, 10)}, "", n - 1},
		{"zero", []string{"Last-Event-ID", "0"}, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, events, _ := ts.stream(t, snap.ID, tt.query, tt.header, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			want := all[tt.after:]
			if len(events) != len(want) {
				t.Fatalf("%d events, want %d", len(events), len(want))
			}
			for i := range want {
				if events[i] != want[i] {
					t.Fatalf("event %d: %+v, want %+v", i, events[i], want[i])
				}
			}
		})
	}
	resp, body := ts.do(t, "GET", "/v1/builds/"+snap.ID+"/events", "", "Last-Event-ID", strconv.FormatInt(n, 10))
	if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("after the last event of an ended build: %d %q, want 204", resp.StatusCode, body)
	}
	for _, bad := range []string{"x", "-1", strconv.FormatInt(n+1, 10), "1.5"} {
		resp, body := ts.do(t, "GET", "/v1/builds/"+snap.ID+"/events", "", "Last-Event-ID", bad)
		if resp.StatusCode != 400 {
			t.Fatalf("Last-Event-ID %q: %d %s, want 400", bad, resp.StatusCode, body)
		}
		errorBody(t, body)
	}
}
