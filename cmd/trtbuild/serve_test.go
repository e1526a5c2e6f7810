package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server is a trtbuild serve process on a free loopback port.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
	exited chan struct{} // closed when stderr has ended: the server and its workers are gone
}

// listening finds the server's first record, in either log format: level=INFO msg="listening
// on http://…" models=… state=…, or the same as JSON.
var listening = regexp.MustCompile(`\blevel"?[=:]"?INFO\b.*"listening on (http://127\.0\.0\.1:\d+)".*\bmodels"?[=:].*\bstate"?[=:]`)

// startServe starts trtbuild serve over modelRoot and stateDir and waits for its listening line.
func startServe(t *testing.T, modelRoot, stateDir string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0", "--model-root", modelRoot, "--state-dir", stateDir}, args...)...)
	cmd.Env = testEnv(t)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			s.stderr.write(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
		close(s.exited)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	select {
	case u, ok := <-found:
		if !ok {
			cmd.Wait()
			t.Fatalf("trtbuild serve ended without listening:\n%s", s.stderr)
		}
		s.url = u
	case <-time.After(60 * time.Second):
		t.Fatalf("trtbuild serve did not say where it listens:\n%s", s.stderr)
	}
	return s
}

// waitLog waits until the server's stderr holds text.
func (s *server) waitLog(t *testing.T, text string) {
	t.Helper()
	for !strings.Contains(s.stderr.String(), text) {
		select {
		case <-s.exited:
			t.Fatalf("trtbuild serve ended without writing %q:\n%s", text, s.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// request sends one request and returns the status and body.
func (s *server) request(t *testing.T, method, path, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
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
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

type buildSnapshot struct {
	ID, State, Key string
	Engine         bool `json:"engine_available"`
}

func (s *server) submit(t *testing.T, options string) buildSnapshot {
	t.Helper()
	code, body := s.request(t, "POST", "/v1/builds", `{"model": "convnet.onnx", "options": `+options+`}`)
	var b buildSnapshot
	if code != 201 || json.Unmarshal([]byte(body), &b) != nil {
		t.Fatalf("POST /v1/builds: %d %s", code, body)
	}
	return b
}

func (s *server) build(t *testing.T, id string) buildSnapshot {
	t.Helper()
	code, body := s.request(t, "GET", "/v1/builds/"+id, "")
	var b buildSnapshot
	if code != 200 || json.Unmarshal([]byte(body), &b) != nil {
		t.Fatalf("GET /v1/builds/%s: %d %s", id, code, body)
	}
	return b
}

// waitBuild polls build id until its state is want.
func (s *server) waitBuild(t *testing.T, id, want string) buildSnapshot {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b := s.build(t, id)
		if b.State == want {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s is %s, not %s, after a minute\n%s", id, b.State, want, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// events reads build id's event stream to its end: the data lines, in order.
func (s *server) events(t *testing.T, id string, header ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/builds/"+id+"/events", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %v", resp.StatusCode, resp.Header)
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the event stream did not end")
	}
	return data
}

// shape is what two runs of one simulated build have in common: each event's type, and the
// phases' and steps' ids, parents, names and step numbers (not times or paths).
func shape(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		var e struct {
			Type        string
			ID, Parent  int
			Name        string
			Step, Steps int
			Status      string
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("event %q: %v", l, err)
		}
		out = append(out, fmt.Sprintf("%s id=%d parent=%d name=%q step=%d steps=%d status=%s", e.Type, e.ID, e.Parent, e.Name, e.Step, e.Steps, e.Status))
	}
	return out
}

func serveModelRoot(t *testing.T) string {
	return filepath.Dir(repoModel(t, "convnet.onnx"))
}

func TestServeStreamsTheCLIEvents(t *testing.T) {
	t.Parallel()
	root := serveModelRoot(t)
	s := startServe(t, root, t.TempDir())
	b := s.submit(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`)
	got := s.events(t, b.ID)
	cli := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "50", "--no-timing-cache", "--progress", "json", "-o", "/dev/null", filepath.Join(root, "convnet.onnx"))
	if cli.code != 0 {
		t.Fatalf("the CLI build: exit %d\n%s", cli.code, cli.stderr)
	}
	want := shape(t, strings.Split(strings.TrimSpace(cli.stdout), "\n"))
	have := shape(t, got)
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		for i := range min(len(have), len(want)) {
			if have[i] != want[i] {
				t.Fatalf("event %d over HTTP: %s\nwith --progress json: %s\n(%d and %d events)", i+1, have[i], want[i], len(have), len(want))
			}
		}
		t.Fatalf("%d events over HTTP, %d with --progress json", len(have), len(want))
	}
	// Last-Event-ID resumes with exactly the events after it.
	if rest := s.events(t, b.ID, "Last-Event-ID", "10"); strings.Join(rest, "\n") != strings.Join(got[10:], "\n") {
		t.Fatalf("after Last-Event-ID 10: %d events, want the %d after it", len(rest), len(got)-10)
	}
	s.waitBuild(t, b.ID, "succeeded")
	// The same build again is an engine-cache hit: succeeded at once.
	if again := s.submit(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`); again.State != "succeeded" || again.Key != b.Key {
		t.Fatalf("the second identical build: %+v", again)
	}
}

func TestServeRefuses(t *testing.T) {
	t.Parallel()
	root := serveModelRoot(t)
	outside := repoModel(t, "convnet.onnx")
	if err := os.Symlink(outside, filepath.Join(root, "out.onnx")); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("tok-123\n"), 0o600)
	s := startServe(t, root, t.TempDir(), "--token-file", token)
	auth := []string{"Authorization", "Bearer tok-123"}
	big := `{"model": "convnet.onnx", "options": {"shapes": "` + strings.Repeat("x", 2<<20) + `"}}`
	for _, tt := range []struct {
		name, method, path, body string
		header                   []string
		code                     int
	}{
		{"no token", "GET", "/v1/builds", "", nil, 401},
		{"wrong token", "GET", "/v1/builds", "", []string{"Authorization", "Bearer tok-124"}, 401},
		{"the token", "GET", "/v1/builds", "", auth, 200},
		{"healthz without the token", "GET", "/healthz", "", nil, 200},
		{"foreign Host", "GET", "/v1/builds", "", append([]string{"Host", "attacker.example:8470"}, auth...), 403},
		{"cross-site POST", "POST", "/v1/builds", `{"model": "convnet.onnx"}`, append([]string{"Origin", "http://attacker.example"}, auth...), 403},
		{"..", "POST", "/v1/builds", `{"model": "../convnet.onnx"}`, auth, 400},
		{"absolute", "POST", "/v1/builds", `{"model": "` + outside + `"}`, auth, 400},
		{"link out", "POST", "/v1/builds", `{"model": "out.onnx", "options": {"backend": "sim"}}`, auth, 400},
		{"malformed JSON", "POST", "/v1/builds", `{"model": `, auth, 400},
		{"oversized", "POST", "/v1/builds", big, auth, 413},
		{"a server file", "POST", "/v1/builds", `{"model": "convnet.onnx", "options": {"report": "/tmp/r.html"}}`, auth, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := s.request(t, tt.method, tt.path, tt.body, tt.header...)
			if code != tt.code {
				t.Fatalf("%d %s, want %d", code, body, tt.code)
			}
			if code >= 400 && !strings.Contains(body, `"error":`) {
				t.Fatalf("not a JSON error: %s", body)
			}
		})
	}
}

func TestServeRefusesToStart(t *testing.T) {
	t.Parallel()
	root := serveModelRoot(t)
	open := filepath.Join(t.TempDir(), "token")
	os.WriteFile(open, []byte("tok\n"), 0o644)
	os.Chmod(open, 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"non-loopback without a token", []string{"--listen", "0.0.0.0:0", "--model-root", root}, "--token-file"},
		{"a token others may read", []string{"--listen", "0.0.0.0:0", "--token-file", open, "--model-root", root}, "chmod 600"},
		{"no model root", nil, "--model-root"},
		{"bad gpus", []string{"--model-root", root, "--gpus", "0,0"}, "--gpus"},
		{"bad log format", []string{"--model-root", root, "--log-format", "xml"}, "--log-format xml: give text or json"},
		{"no MCP sessions", []string{"--model-root", root, "--mcp-sessions", "0"}, "--mcp-sessions 0: give at least 1"},
		{"no sim slots", []string{"--model-root", root, "--sim-slots", "0"}, "--sim-slots 0: give at least 1"},
		{"no room for a build", []string{"--model-root", root, "--max-runs", "0"}, "--max-runs 0: give at least 1"},
		{"no MCP idle time", []string{"--model-root", root, "--mcp-session-idle", "0s"}, "--mcp-session-idle 0s: give a time above 0"},
		{"a negative keep age", []string{"--model-root", root, "--keep-builds", "-1h"}, "--keep-builds -1h0m0s: give a time of 0 or more"},
		{"a keep size that is none", []string{"--model-root", root, "--keep-builds-size", "10Q"}, "invalid --keep-builds-size"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, append([]string{"serve", "--state-dir", t.TempDir()}, tt.args...)...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

// TestServeOnePerStateDir: a second trtbuild serve on the state dir of one that runs does not
// start: exit 2 and one line naming the state dir and what to do.
func TestServeOnePerStateDir(t *testing.T) {
	t.Parallel()
	root, state := serveModelRoot(t), t.TempDir()
	startServe(t, root, state)
	r := trtbuild(t, nil, "serve", "--listen", "127.0.0.1:0", "--model-root", root, "--state-dir", state)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	want := "is in use by another trtbuild serve; give another --state-dir, or stop the other process"
	if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, state) {
		t.Fatalf("exit %d, stderr %q; want exit 2 and one line with the state dir and %q", r.code, r.stderr, want)
	}
}

// slowBuild runs for minutes unless cancelled: 1 s steps.
const slowBuild = `{"backend": "sim", "sim-step": "1s", "no-timing-cache": true}`

func TestServeSIGTERMCancels(t *testing.T) {
	t.Parallel()
	root, state := serveModelRoot(t), t.TempDir()
	s := startServe(t, root, state)
	cancelled := s.submit(t, slowBuild)
	s.waitBuild(t, cancelled.ID, "running")
	if code, body := s.request(t, "POST", "/v1/builds/"+cancelled.ID+"/cancel", ""); code != 202 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	s.waitBuild(t, cancelled.ID, "cancelled")
	b := s.submit(t, `{"backend": "sim", "sim-step": "1s", "no-timing-cache": true, "opt-level": 2}`)
	s.waitBuild(t, b.ID, "running")
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, s.cmd, 60*time.Second); code != 143 {
		t.Fatalf("exit %d after SIGTERM, want 143\n%s", code, s.stderr)
	}
	again := startServe(t, root, state)
	for _, id := range []string{cancelled.ID, b.ID} {
		if got := again.build(t, id); got.State != "cancelled" || got.Engine {
			t.Fatalf("after the restart build %s is %+v, want cancelled without an engine", id, got)
		}
		if engines, _ := filepath.Glob(filepath.Join(state, "builds", id, "*.engine")); len(engines) > 0 {
			t.Fatalf("a cancelled build wrote %v", engines)
		}
	}
}

func TestServePage(t *testing.T) {
	t.Parallel()
	s := startServe(t, serveModelRoot(t), t.TempDir())
	code, body := s.request(t, "GET", "/", "")
	if code != 200 || !strings.Contains(body, `name="trtbuild-token"`) {
		t.Fatalf("GET /: %d %.300s", code, body)
	}
	if code, body := s.request(t, "POST", "/", "{}"); code != 405 {
		t.Fatalf("POST /: %d %s", code, body)
	}
}
