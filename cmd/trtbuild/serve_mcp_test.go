package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP over streamable HTTP at /mcp of the real `trtbuild serve`, with the Go SDK's client:
// the same tools as `trtbuild mcp`, models named inside the model root, the builds those of the
// HTTP API, and /mcp behind the same Host, Origin and token checks as the API.

// bearer adds the Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connectMCP connects the SDK's client to s's /mcp; token "" sends none.
func connectMCP(t *testing.T, s *server, token string) (*mcpClient, error) {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}
	if token != "" {
		transport.HTTPClient = &http.Client{Transport: bearer{token, http.DefaultTransport}}
	}
	return connectMCPClient(t, transport, s.stderr)
}

// initialize is an MCP initialize request's body, for requests sent without the SDK.
const initialize = `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}}`

// TestServeMCPOverHTTP lists the tools, builds with a progress token, cancels a build by
// cancelling its call, and has requests the server refuses answered as tool errors.
func TestServeMCPOverHTTP(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	s := startServe(t, serveModelRoot(t), state)
	c, err := connectMCP(t, s, "")
	if err != nil {
		t.Fatalf("connecting to %s/mcp: %v\n%s", s.url, err, s.stderr)
	}

	tools, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	var build *mcp.Tool
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Name == "build" {
			build = tool
		}
	}
	if got := strings.Join(names, " "); len(names) != 5 || build == nil {
		t.Fatalf("tools %q, want build, inspect, convert, key and engine_inspect", got)
	}
	schema, _ := json.Marshal(build.InputSchema)
	if !strings.Contains(string(schema), "relative to the server's model root") {
		t.Errorf("build's input schema does not say models are named in the model root: %s", schema)
	}
	if strings.Contains(string(schema), `"report"`) || strings.Contains(string(schema), `"save-engine"`) {
		t.Errorf("build's options offer server files: %s", schema)
	}

	// A build with a progress token, its model named inside the model root.
	res := c.call(t, context.Background(), &mcp.CallToolParams{
		Meta: mcp.Meta{"progressToken": "http-1"},
		Name: "build",
		Arguments: map[string]any{"model": "convnet.onnx", "options": map[string]any{
			"backend": "sim", "sim-speed": 5, "no-timing-cache": true,
		}},
	})
	var r buildOutcome
	structured(t, res, &r)
	if text := resultText(t, res); res.IsError || r.State != "succeeded" || !strings.HasPrefix(text, "succeeded: ") {
		t.Fatalf("build result %q (IsError %v), want succeeded", text, res.IsError)
	}
	if r.Engine != "/v1/builds/"+r.ID+"/engine" {
		t.Errorf("the engine is %q, want the HTTP API's /v1/builds/%s/engine", r.Engine, r.ID)
	}
	if code, body := s.request(t, "GET", r.Engine, ""); code != 200 || !strings.HasPrefix(body, "TRTBUILD-SIMULATED-PLAN") {
		t.Errorf("GET %s: %d %.100q, want the engine", r.Engine, code, body)
	}
	if b := s.build(t, r.ID); b.State != "succeeded" || b.Key != r.Key || !b.Engine {
		t.Errorf("over the API the MCP build is %+v, the tool said %+v", b, r)
	}
	notes := c.notifications()
	if len(notes) < 3 {
		t.Fatalf("%d progress notifications, want several", len(notes))
	}
	last := -1.0
	for i, n := range notes {
		if n.ProgressToken != "http-1" {
			t.Errorf("notification %d has token %v, want http-1", i, n.ProgressToken)
		}
		if n.Progress <= last || n.Total <= 0 || n.Progress > n.Total || !strings.HasPrefix(n.Message, "Building engine") {
			t.Errorf("notification %d: progress %v of %v after %v, message %q", i, n.Progress, n.Total, last, n.Message)
		}
		last = n.Progress
	}

	// A slow build (another key than the first: not an engine-cache hit), its call cancelled
	// after its first progress notification.
	c.mu.Lock()
	c.progress = nil
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := c.session.CallTool(ctx, &mcp.CallToolParams{
			Meta:      mcp.Meta{"progressToken": 7},
			Name:      "build",
			Arguments: map[string]any{"model": "convnet.onnx", "options": map[string]any{"backend": "sim", "sim-speed": 0.1, "no-timing-cache": true, "opt-level": 2}},
		})
		called <- err
	}()
	c.waitProgress(t, 1)
	code, body := s.request(t, "GET", "/v1/builds?state=running", "")
	var running struct{ Builds []buildSnapshot }
	if code != 200 || json.Unmarshal([]byte(body), &running) != nil || len(running.Builds) != 1 {
		t.Fatalf("GET /v1/builds?state=running: %d %s; want the one build of the call", code, body)
	}
	id := running.Builds[0].ID
	cancel()
	if err := <-called; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	if b := waitState(t, s, id, nil); b.State != "cancelled" || b.Engine {
		t.Fatalf("after its call was cancelled the build is %+v, want cancelled without an engine", b)
	}
	if engines, _ := filepath.Glob(filepath.Join(state, "builds", id, "*.engine")); len(engines) > 0 {
		t.Errorf("the cancelled build wrote %v", engines)
	}
	if n := c.notifications()[0]; n.ProgressToken != float64(7) {
		t.Errorf("progress token %v (%T), want 7", n.ProgressToken, n.ProgressToken)
	}

	// Requests the server refuses are one-line tool errors.
	outside := repoModel(t, "convnet.onnx")
	for _, tt := range []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"an absolute model", "build", map[string]any{"model": outside, "options": map[string]any{"backend": "sim"}}, []string{"model"}},
		{"a model above the root", "build", map[string]any{"model": "../convnet.onnx", "options": map[string]any{"backend": "sim"}}, []string{"model"}},
		{"a report file", "build", map[string]any{"model": "convnet.onnx", "options": map[string]any{"backend": "sim", "report": "/tmp/r.html"}}, []string{"report", "/v1/builds/{id}/report"}},
		{"an engine file", "build", map[string]any{"model": "convnet.onnx", "options": map[string]any{"backend": "sim", "save-engine": "/tmp/e.engine"}}, []string{"save-engine"}},
		{"inspect outside the root", "inspect", map[string]any{"model": outside}, []string{"model"}},
		// Under serve the tools name no file of the server's by its path.
		{"engine_inspect of a server file", "engine_inspect", map[string]any{"engine": filepath.Join(state, "history.db")}, []string{`no argument "engine"`, "build"}},
		{"convert to a server file", "convert", map[string]any{"model": "convnet.onnx", "fp16": true, "output": filepath.Join(state, "x.onnx")}, []string{`no argument "output"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := c.call(t, context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			wantToolError(t, res, tt.want...)
		})
	}
	code, body = s.request(t, "GET", "/v1/builds", "")
	var all struct{ Builds []buildSnapshot }
	if code != 200 || json.Unmarshal([]byte(body), &all) != nil || len(all.Builds) != 2 {
		t.Errorf("GET /v1/builds: %d %s; want the two builds of the calls, none of the refused ones", code, body)
	}
}

// TestServeMCPGuarded: /mcp is behind the API's checks: a foreign Host or Origin is refused,
// and with --token-file so is a request without the token; a name given by --allow-host and
// the token are let through to the MCP handler.
func TestServeMCPGuarded(t *testing.T) {
	t.Parallel()
	root := serveModelRoot(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("mcp-tok-9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := startServe(t, root, t.TempDir(), "--allow-host", "builds.example")
	guarded := startServe(t, root, t.TempDir(), "--token-file", tokenFile)
	port := open.url[strings.LastIndex(open.url, ":")+1:]
	accept := []string{"Accept", "application/json, text/event-stream"}
	for _, tt := range []struct {
		name   string
		s      *server
		header []string
		code   int
	}{
		{"foreign Host", open, []string{"Host", "attacker.example:" + port}, 403},
		{"foreign Origin", open, []string{"Origin", "http://attacker.example"}, 403},
		{"an allowed Host", open, []string{"Host", "builds.example:" + port}, 200},
		{"loopback", open, nil, 200},
		{"no token", guarded, nil, 401},
		{"a wrong token", guarded, []string{"Authorization", "Bearer mcp-tok-8"}, 401},
		{"the token", guarded, []string{"Authorization", "Bearer mcp-tok-9"}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := tt.s.request(t, "POST", "/mcp", initialize, append(accept, tt.header...)...)
			if code != tt.code {
				t.Fatalf("POST /mcp: %d %.300s, want %d", code, body, tt.code)
			}
			if code == 200 && !strings.Contains(body, `"serverInfo"`) {
				t.Errorf("POST /mcp: no initialize result: %.300s", body)
			}
			if code >= 400 && !strings.Contains(body, `"error":`) {
				t.Errorf("POST /mcp: not the API's JSON error: %.300s", body)
			}
		})
	}
	if _, err := connectMCP(t, guarded, ""); err == nil {
		t.Error("the SDK's client connected to a server with --token-file without the token")
	}
	c, err := connectMCP(t, guarded, "mcp-tok-9")
	if err != nil {
		t.Fatalf("connecting with the token: %v\n%s", err, guarded.stderr)
	}
	res := c.call(t, context.Background(), &mcp.CallToolParams{Name: "key", Arguments: map[string]any{
		"model": "convnet.onnx", "options": map[string]any{"backend": "sim"},
	}})
	if res.IsError {
		t.Errorf("key with the token: %s", resultText(t, res))
	}
}

// TestServeShowsNoServerPaths: what the tools and the API show a client of `trtbuild serve`
// names the model as the client did and the server's files relative to its state dir; the
// model root's and the state dir's paths show only with --expose-paths.
func TestServeShowsNoServerPaths(t *testing.T) {
	t.Parallel()
	for _, expose := range []bool{false, true} {
		root := t.TempDir()
		data, err := os.ReadFile(repoModel(t, "convnet.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "convnet.onnx"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		state := t.TempDir()
		var args []string
		if expose {
			args = append(args, "--expose-paths")
		}
		s := startServe(t, root, state, args...)
		c, err := connectMCP(t, s, "")
		if err != nil {
			t.Fatalf("connecting to %s/mcp: %v\n%s", s.url, err, s.stderr)
		}
		var seen strings.Builder
		for _, call := range []mcp.CallToolParams{
			{Name: "inspect", Arguments: map[string]any{"model": "convnet.onnx"}},
			{Name: "key", Arguments: map[string]any{"model": "convnet.onnx", "options": map[string]any{"backend": "sim"}}},
			{Name: "convert", Arguments: map[string]any{"model": "convnet.onnx", "fp16": true}},
			{Name: "build", Arguments: map[string]any{"model": "convnet.onnx", "options": map[string]any{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}}},
			{Name: "inspect", Arguments: map[string]any{"model": "missing.onnx"}},
		} {
			res := c.call(t, context.Background(), &call)
			for _, content := range res.Content {
				if text, ok := content.(*mcp.TextContent); ok {
					seen.WriteString(text.Text + "\n")
				}
			}
			data, _ := json.Marshal(res.StructuredContent)
			seen.Write(data)
		}
		b := s.submit(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true, "opt-level": 2}`)
		seen.WriteString(strings.Join(s.events(t, b.ID), "\n"))
		_, body := s.request(t, "GET", "/v1/builds/"+b.ID+"/report", "")
		seen.WriteString(body)
		shows := strings.Contains(seen.String(), root) || strings.Contains(seen.String(), state)
		if shows != expose {
			t.Errorf("with --expose-paths %v a client is shown the server's folders: %v\n%s", expose, shows, seen.String())
		}
		if !expose && !strings.Contains(seen.String(), `"convnet.onnx"`) {
			t.Errorf("the model is not named as the client named it:\n%s", seen.String())
		}
	}
}
