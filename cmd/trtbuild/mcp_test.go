package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trtbuild/trtbuild/internal/builder"
)

// mcpServer is `trtbuild mcp` started by the Go SDK's client over stdin and stdout.
type mcpServer struct {
	*mcpClient
	cmd      *exec.Cmd
	stateDir string
	stderr   *lockedBuffer
}

func startMCP(t *testing.T) *mcpServer {
	t.Helper()
	s := &mcpServer{stateDir: filepath.Join(t.TempDir(), "state"), stderr: &lockedBuffer{}}
	s.cmd = exec.Command(binary, "mcp", "--state-dir", s.stateDir)
	s.cmd.Env = testEnv(t)
	s.cmd.Stderr = s.stderr
	// Registered before the session's Close, so it runs after it: the log is complete.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("trtbuild mcp's stderr:\n%s", s.stderr)
		}
	})
	// Close waits this long for the server to end on its own after stdin closes (its builds
	// cancelled) before it signals it; the tests that check the exit never get there.
	transport := &mcp.CommandTransport{Command: s.cmd, TerminateDuration: 2 * time.Minute}
	c, err := connectMCPClient(t, transport, s.stderr)
	if err != nil {
		t.Fatalf("connecting to trtbuild mcp: %v", err)
	}
	s.mcpClient = c
	return s
}

// buildFolder waits for the one build of the server to end (its events.jsonl is written when
// it ends) and returns its folder and last event line.
func (s *mcpServer) buildFolder(t *testing.T) (dir string, result map[string]any) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		matches, _ := filepath.Glob(filepath.Join(s.stateDir, "builds", "*", "events.jsonl"))
		if len(matches) == 1 {
			data, err := os.ReadFile(matches[0])
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &result); err != nil {
				t.Fatalf("last event line %q: %v", lines[len(lines)-1], err)
			}
			return filepath.Dir(matches[0]), result
		}
		if len(matches) > 1 {
			t.Fatalf("%d builds in the state dir, want 1: %v", len(matches), matches)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no build ended within a minute; stderr:\n%s", s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d contents, want 1: %+v", len(res.Content), res.Content)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result content is %T, want text", res.Content[0])
	}
	return text.Text
}

// structured decodes the result's structured content.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

type buildOutcome struct {
	ID, State, Engine, Key, Hint, Error string
	Where                               *struct {
		Path  []string
		Done  int
		Steps int
	}
}

func TestMCPToolsList(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	res, err := s.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	tests := []struct {
		tool  string
		props []string // input properties that must be there
	}{
		{"build", []string{"model", "options", "timeout"}},
		{"inspect", []string{"model"}},
		{"convert", []string{"model", "fp16", "bf16", "output", "keep-fp32"}},
		{"key", []string{"model", "options"}},
		{"engine_inspect", []string{"engine", "build", "expect-tensorrt", "expect-key"}},
	}
	if len(res.Tools) != len(tests) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(tests))
	}
	for _, tt := range tests {
		tool := got[tt.tool]
		if tool == nil {
			t.Errorf("no tool %s", tt.tool)
			continue
		}
		var in struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &in); err != nil || in.Type != "object" {
			t.Errorf("%s: input schema %s is no object schema", tt.tool, b)
		}
		for _, p := range tt.props {
			if _, ok := in.Properties[p]; !ok {
				t.Errorf("%s: input schema has no property %q: %s", tt.tool, p, b)
			}
		}
		if tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: no output schema or description", tt.tool)
		}
	}
	// The options are the HTTP API's: buildflags' names, with the flags' usage lines.
	var build struct {
		Properties struct {
			Options struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"options"`
		} `json:"properties"`
	}
	b, _ := json.Marshal(got["build"].InputSchema)
	json.Unmarshal(b, &build)
	for _, name := range []string{"fp16", "shapes", "backend", "sim-speed", "timeout", "profiles"} {
		if build.Properties.Options.Properties[name].Description == "" {
			t.Errorf("build's options have no %q with a description", name)
		}
	}
	var out struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	b, _ = json.Marshal(got["build"].OutputSchema)
	json.Unmarshal(b, &out)
	for _, name := range []string{"state", "engine", "key", "where", "hint", "error", "id"} {
		if _, ok := out.Properties[name]; !ok {
			t.Errorf("build's output schema has no %q: %s", name, b)
		}
	}
}

// TestMCPBuildProgress builds with a progress token: notifications carry the token, their
// progress grows, each has a total and the phase path; the result says succeeded, with the
// engine and its key, and the other tools describe the same model and engine.
func TestMCPBuildProgress(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	model := repoModel(t, "convnet.onnx")
	res := s.call(t, context.Background(), &mcp.CallToolParams{
		Meta: mcp.Meta{"progressToken": "convnet-1"},
		Name: "build",
		Arguments: map[string]any{"model": model, "options": map[string]any{
			"backend": "sim", "sim-speed": 5, "no-timing-cache": true,
		}},
	})
	text := resultText(t, res)
	var r buildOutcome
	structured(t, res, &r)
	if res.IsError || r.State != "succeeded" || !strings.HasPrefix(text, "succeeded: ") || strings.Contains(text, "\n") {
		t.Fatalf("result %q (IsError %v), state %q; want one line of a succeeded build", text, res.IsError, r.State)
	}
	if !strings.HasPrefix(r.Key, builder.KeyPrefix) || !strings.Contains(text, r.Key) || r.ID == "" {
		t.Errorf("key %q, id %q, text %q", r.Key, r.ID, text)
	}
	if data, err := os.ReadFile(r.Engine); err != nil || !bytes.HasPrefix(data, []byte("TRTBUILD-SIMULATED-PLAN")) {
		t.Errorf("engine %q: %v", r.Engine, err)
	}

	notes := s.notifications()
	if len(notes) < 3 {
		t.Fatalf("%d progress notifications, want several", len(notes))
	}
	last := -1.0
	for i, n := range notes {
		if n.ProgressToken != "convnet-1" {
			t.Errorf("notification %d has token %v", i, n.ProgressToken)
		}
		if n.Progress <= last || n.Total <= 0 || n.Progress > n.Total {
			t.Errorf("notification %d: progress %v of %v after %v", i, n.Progress, n.Total, last)
		}
		if !strings.HasPrefix(n.Message, "Building engine") {
			t.Errorf("notification %d: message %q, want the phase path", i, n.Message)
		}
		last = n.Progress
	}
	if final := notes[len(notes)-1]; final.Progress != final.Total {
		t.Errorf("last notification %v of %v, want all done", final.Progress, final.Total)
	}
	deep := false
	for _, n := range notes {
		deep = deep || strings.Count(n.Message, " > ") >= 2
	}
	if !deep {
		t.Errorf("no notification names a nested phase: %+v", notes)
	}

	// The other tools, on the same model and engine.
	tests := []struct {
		tool string
		args map[string]any
		want string // in the structured content's JSON
	}{
		{"inspect", map[string]any{"model": model}, `"images"`},
		{"key", map[string]any{"model": model, "options": map[string]any{"backend": "sim", "sim-speed": 5, "no-timing-cache": true}}, `"key":"` + r.Key + `"`},
		{"engine_inspect", map[string]any{"engine": r.Engine, "expect-key": r.Key}, `"key":"` + r.Key + `"`},
		{"engine_inspect", map[string]any{"build": r.ID}, `"simulated"`},
		{"convert", map[string]any{"model": model, "fp16": true, "output": filepath.Join(t.TempDir(), "convnet.fp16.onnx")}, `"target":"fp16"`},
	}
	for _, tt := range tests {
		res := s.call(t, context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		b, _ := json.Marshal(res.StructuredContent)
		if res.IsError || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s %v: IsError %v, %s; text %q; want %s in it", tt.tool, tt.args, res.IsError, b, resultText(t, res), tt.want)
		}
	}
}

// TestMCPCancel cancels a build call's context: the SDK sends notifications/cancelled, and
// the build ends cancelled with no engine.
func TestMCPCancel(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	model := repoModel(t, "convnet.onnx")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := s.session.CallTool(ctx, &mcp.CallToolParams{
			Meta: mcp.Meta{"progressToken": 7},
			Name: "build",
			// Minutes long unless cancelled.
			Arguments: map[string]any{"model": model, "options": map[string]any{"backend": "sim", "sim-speed": 0.1, "no-timing-cache": true}},
		})
		called <- err
	}()
	s.waitProgress(t, 1)
	cancel()
	if err := <-called; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call returned %v", err)
	}
	dir, result := s.buildFolder(t)
	if result["type"] != "result" || result["status"] != "cancelled" {
		t.Fatalf("the build ended %v, want cancelled", result)
	}
	if engines, _ := filepath.Glob(filepath.Join(dir, "*.engine")); len(engines) > 0 {
		t.Errorf("a cancelled build left %v", engines)
	}
	if n := s.notifications()[0]; n.ProgressToken != float64(7) {
		t.Errorf("progress token %v (%T), want 7", n.ProgressToken, n.ProgressToken)
	}
}

// TestMCPTimeout gives a slow build a 2 s budget: it ends timed_out, naming the stage, with
// no engine, as a tool error.
func TestMCPTimeout(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	model := repoModel(t, "convnet.onnx")
	res := s.call(t, context.Background(), &mcp.CallToolParams{Name: "build", Arguments: map[string]any{
		"model": model, "timeout": "2s", "options": map[string]any{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true},
	}})
	text := resultText(t, res)
	var r buildOutcome
	structured(t, res, &r)
	if !res.IsError || r.State != "timed_out" || !strings.HasPrefix(text, "timed_out: ") || strings.Contains(text, "\n") || r.Where == nil {
		t.Fatalf("result %q (IsError %v), state %q; want a one-line timed_out tool error", text, res.IsError, r.State)
	}
	named := false // the stage the budget ran out in is one of the phases open at the end
	for _, p := range r.Where.Path {
		named = named || strings.Contains(r.Error, `in "`+p+`"`)
	}
	if r.Engine != "" || len(r.Where.Path) == 0 || !strings.Contains(r.Error, "timeout 2s") || !named {
		t.Errorf("engine %q, where %+v, error %q: want no engine and the stage named", r.Engine, r.Where, r.Error)
	}
	dir, _ := s.buildFolder(t)
	if engines, _ := filepath.Glob(filepath.Join(dir, "*.engine")); len(engines) > 0 {
		t.Errorf("a timed-out build left %v", engines)
	}
}

// TestMCPRefused: requests the server refuses are tool errors of one line that say what to
// change, never protocol errors.
func TestMCPRefused(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	model := repoModel(t, "convnet.onnx")
	tests := []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"unknown option", "build", map[string]any{"model": model, "options": map[string]any{"backend": "sim", "fp61": true}}, []string{`"fp61"`, `did you mean "fp16"`}},
		{"option of the wrong type", "build", map[string]any{"model": model, "options": map[string]any{"backend": "sim", "fp16": "yes"}}, []string{"fp16", "true or false"}},
		{"bad option value", "build", map[string]any{"model": model, "options": map[string]any{"backend": "sim", "opt-level": 9}}, []string{"opt-level", "0 to 5"}},
		{"bad budget", "build", map[string]any{"model": model, "timeout": "soon", "options": map[string]any{"backend": "sim"}}, []string{`"timeout"`, "not a duration", "like 90s"}},
		{"budget twice", "build", map[string]any{"model": model, "timeout": "1m", "options": map[string]any{"backend": "sim", "timeout": "2m"}}, []string{"given twice", "give it once"}},
		{"no model", "build", map[string]any{"options": map[string]any{"backend": "sim"}}, []string{"needs a model", `"model"`}},
		{"missing model", "build", map[string]any{"model": filepath.Join(t.TempDir(), "nope.onnx"), "options": map[string]any{"backend": "sim"}}, []string{"nope.onnx", "does not exist"}},
		{"unknown argument", "build", map[string]any{"modle": model}, []string{`no argument "modle"`, "model, options, timeout"}},
		{"argument of the wrong type", "build", map[string]any{"model": model, "timeout": 5}, []string{`"timeout"`, "a JSON string"}},
		{"convert without a type", "convert", map[string]any{"model": model}, []string{"target type", `"fp16": true`}},
		{"inspect without a model", "inspect", map[string]any{}, []string{"inspect needs a model", `"model"`}},
		{"key without a model", "key", map[string]any{"options": map[string]any{"backend": "sim"}}, []string{"key needs a model", `"model"`}},
		{"convert without a model", "convert", map[string]any{"fp16": true}, []string{"convert needs a model", `"model"`}},
		{"engine_inspect of a model", "engine_inspect", map[string]any{"engine": model}, []string{"convnet.onnx", "give a file that trtbuild or TensorRT built"}},
		{"engine_inspect of no build", "engine_inspect", map[string]any{"build": "0123"}, []string{"no such build"}},
		{"inspect of a folder", "inspect", map[string]any{"model": t.TempDir()}, []string{"is a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.call(t, context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			wantToolError(t, res, tt.want...)
		})
	}
	if builds, _ := filepath.Glob(filepath.Join(s.stateDir, "builds", "*")); len(builds) > 0 {
		t.Errorf("refused requests left builds: %v", builds)
	}
}

// TestMCPEndsOnEOF closes the server's stdin while a build runs (the client went away): the
// server cancels the build, waits for it, and exits 0.
func TestMCPEndsOnEOF(t *testing.T) {
	t.Parallel()
	stateDir := filepath.Join(t.TempDir(), "state")
	cmd := exec.Command(binary, "mcp", "--state-dir", stateDir)
	cmd.Env = testEnv(t)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	progressed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "trtbuild-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		},
	})
	// The client's own Close would wait for the call; this stdin is closed under it.
	session, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: nopWriteCloser{stdin}}, nil)
	if err != nil {
		t.Fatalf("connecting: %v; stderr:\n%s", err, stderr)
	}
	model := repoModel(t, "convnet.onnx")
	go session.CallTool(context.Background(), &mcp.CallToolParams{ //nolint:errcheck // ends with the server
		Meta:      mcp.Meta{"progressToken": "eof"},
		Name:      "build",
		Arguments: map[string]any{"model": model, "options": map[string]any{"backend": "sim", "sim-speed": 0.1, "no-timing-cache": true}},
	})
	select {
	case <-progressed:
	case <-time.After(time.Minute):
		t.Fatalf("no progress notification within a minute; stderr:\n%s", stderr)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("trtbuild mcp after stdin closed: %v, want exit 0; stderr:\n%s", err, stderr)
	}
	s := &mcpServer{stateDir: stateDir, stderr: stderr}
	if _, result := s.buildFolder(t); result["status"] != "cancelled" {
		t.Fatalf("the build ended %v, want cancelled", result)
	}
}

// TestMCPSignal sends SIGTERM while a build runs: the build is cancelled and the server exits
// 143 with one line on stderr.
func TestMCPSignal(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	model := repoModel(t, "convnet.onnx")
	type call struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan call, 1)
	go func() {
		res, err := s.session.CallTool(context.Background(), &mcp.CallToolParams{
			Meta:      mcp.Meta{"progressToken": "term"},
			Name:      "build",
			Arguments: map[string]any{"model": model, "options": map[string]any{"backend": "sim", "sim-speed": 0.1, "no-timing-cache": true}},
		})
		called <- call{res, err}
	}()
	s.waitProgress(t, 1)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The call still gets its result: the build cancelled.
	if c := <-called; c.err != nil || !strings.HasPrefix(resultText(t, c.res), "cancelled: ") {
		t.Errorf("call result %+v, %v; want cancelled", c.res, c.err)
	}
	s.session.Close()
	if code := s.cmd.ProcessState.ExitCode(); code != 143 {
		t.Fatalf("exit status %d after SIGTERM, want 143; stderr:\n%s", code, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "SIGTERM") {
		t.Errorf("stderr does not say SIGTERM:\n%s", s.stderr)
	}
	if _, result := s.buildFolder(t); result["status"] != "cancelled" {
		t.Fatalf("the build ended %v, want cancelled", result)
	}
}

// nopWriteCloser is a writer the MCP client's transport may close without closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
