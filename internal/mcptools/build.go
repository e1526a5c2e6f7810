package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/service"
)

// buildArgs are the build tool's arguments.
type buildArgs struct {
	Model   string                     `json:"model"`
	Options map[string]json.RawMessage `json:"options"`
	Timeout string                     `json:"timeout"`
}

// BuildResult is the build tool's structured result: how the build ended.
type BuildResult struct {
	// ID is the build's ID in the Manager (the HTTP API's /v1/builds/{id}).
	ID string `json:"id"`
	// State is queued, running, succeeded, failed, cancelled, timed_out or interrupted.
	State string `json:"state"`
	// Engine is the engine's path (under trtbuild serve: the HTTP API's path of it), when one
	// was built.
	Engine string `json:"engine,omitempty"`
	Key    string `json:"key,omitempty"`
	// Where is the phase the build was in when it ended without an engine.
	Where *progress.Where `json:"where,omitempty"`
	Hint  string          `json:"hint,omitempty"`
	Error string          `json:"error,omitempty"`
}

// progressInterval is the least time between two progress notifications of one call: at most
// ten a second, the newest state each time.
const progressInterval = 100 * time.Millisecond

// cancelWait is how long a cancelled call waits for its build to stop at a step boundary
// before it asks for a hard stop, and then for the result again. The build's own kill-after
// (30 s by default) ends a worker that does not stop, so the first wait normally sees the result.
const cancelWait = time.Minute

func (t *tools) buildTool() *mcp.Tool {
	options := buildflags.Schema(t.refused)
	delete(options, "$schema") // a subschema of the tool's input schema
	options["description"] = "build options: trtbuild's long flag names as keys, values as on the command line (\"fp16\": true, \"shapes\": \"images:1x3x224x224\", \"backend\": \"sim\", \"sim-speed\": 20)"
	where := map[string]any{"type": "object", "description": "the phase the build was in when it ended without an engine", "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "path": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"done": map[string]any{"type": "integer"}, "steps": map[string]any{"type": "integer"}, "seconds": map[string]any{"type": "number"},
	}}
	return &mcp.Tool{
		Name:  "build",
		Title: "Build a TensorRT engine",
		Description: "Build a TensorRT engine from an ONNX model and wait for the result. With _meta.progressToken the call gets progress notifications " +
			"(progress and total in steps of the top phase, message the current phase path). Cancelling the call (notifications/cancelled) stops the build " +
			"at its next step boundary; timeout is a time budget after which the build ends timed_out, naming the stage it was in. " +
			"The result says the state (succeeded, failed, cancelled, timed_out), the engine, the build key, and for a build without engine where it stopped and what to do.",
		InputSchema: objectSchema(map[string]any{
			"model":   str("the ONNX model: its path" + t.modelRule()),
			"options": options,
			"timeout": str("the time budget of the build, a duration (\"90s\", \"10m\"): it ends timed_out after this long, as trtbuild --timeout does"),
		}, "model"),
		OutputSchema: map[string]any{"type": "object", "required": []string{"id", "state"}, "properties": map[string]any{
			"id":     str("the build's ID"),
			"state":  map[string]any{"type": "string", "enum": []string{"queued", "running", "succeeded", "failed", "cancelled", "timed_out", "interrupted"}},
			"engine": str("the engine's path" + t.engineRule()),
			"key":    str("the build key (what the engine cache keys the engine by)"),
			"where":  where,
			"hint":   str("what to do about a build that ended without an engine"),
			"error":  str("why the build ended without an engine"),
		}},
		Annotations: &mcp.ToolAnnotations{Title: "Build a TensorRT engine", OpenWorldHint: new(false)},
	}
}

// modelRule says how a model argument is named, for descriptions.
func (t *tools) modelRule() string {
	if t.m.Local() {
		return " (relative to this server's working folder, or absolute)"
	}
	return ", relative to the server's model root"
}

// missingModel is the usage error of a tool called without its model.
func (t *tools) missingModel(tool string) error {
	return usagef("%s needs a model; give \"model\", the ONNX file%s", tool, t.modelRule())
}

// modelPath is the path of a tool's model argument, as this server names models (see
// modelRule): under serve a private copy of the model in the root (service.OpenModel), which
// release removes; a missing one is missingModel's error.
func (t *tools) modelPath(tool, model string) (path string, release func(), err error) {
	if model == "" {
		return "", nil, t.missingModel(tool)
	}
	return t.m.OpenModel(model)
}

func (t *tools) engineRule() string {
	if t.m.Local() {
		return ""
	}
	return " in the HTTP API (GET it from this server)"
}

// build submits the build and follows it until its result.
func (t *tools) build(ctx context.Context, req *mcp.CallToolRequest, a buildArgs) (*mcp.CallToolResult, error) {
	if a.Model == "" {
		return nil, t.missingModel("build")
	}
	opts := maps.Clone(a.Options)
	if opts == nil {
		opts = map[string]json.RawMessage{}
	}
	if a.Timeout != "" {
		if _, dup := opts["timeout"]; dup {
			return nil, usagef("the time budget is given twice, as \"timeout\" and as options.timeout; give it once")
		}
		b, err := json.Marshal(a.Timeout)
		if err != nil {
			return nil, err
		}
		opts["timeout"] = b
	}
	snap, _, err := t.m.Submit(service.Request{Model: a.Model, Options: opts})
	if err != nil {
		return nil, err
	}
	var n *notifier
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		n = newNotifier(ctx, req.Session, tok)
	}
	snap = t.follow(ctx, snap, n)
	r := t.buildResult(snap)
	return result(r.line(), r, r.State != "succeeded"), nil
}

// follow follows the build's event log until its result, feeding n (nil: no progress
// notifications), and returns the build's final snapshot. When ctx ends (the client cancelled
// the call, or went away) it cancels the call's build and waits for its result: a build that
// shares its run with other requests leaves it at once, and the run goes on for them; the
// run's last follower cancels the run and ends when it has stopped.
func (t *tools) follow(ctx context.Context, snap service.Snapshot, n *notifier) service.Snapshot {
	log, ok := t.m.Events(snap.ID)
	if !ok {
		if s, ok := t.m.Get(snap.ID); ok {
			return s
		}
		return snap
	}
	followCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		readLog(followCtx, log, n)
	}()
	var ticking chan struct{}
	if n != nil {
		ticking = make(chan struct{})
		go func() {
			defer close(ticking)
			n.run(done)
		}()
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.m.Cancel(snap.ID, false) //nolint:errcheck // an ended build: nothing to cancel
		select {
		case <-done:
		case <-time.After(cancelWait):
			t.m.Cancel(snap.ID, true) //nolint:errcheck // as above
			select {
			case <-done:
			case <-time.After(cancelWait):
			}
		}
	}
	stop()
	<-done
	if n != nil {
		<-ticking
		n.send() // the last state
	}
	// The result event is in the log a moment before the build's state says it ended.
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer cancel()
	if s, err := t.m.Wait(wait, snap.ID); err == nil {
		return s
	}
	if s, ok := t.m.Get(snap.ID); ok {
		return s
	}
	return snap
}

// readLog reads the event log until the result event (or ctx ends), handing every event to n.
func readLog(ctx context.Context, log *service.Log, n *notifier) {
	var after int64
	for {
		events, ended, err := log.Next(ctx, after)
		for _, e := range events {
			after = e.Seq
			if n != nil {
				n.apply(e.Data)
			}
			if e.Type == string(progress.EventResult) {
				return
			}
		}
		if err != nil || (ended && len(events) == 0) {
			return
		}
	}
}

// buildResult is the tool's result of the build's snapshot.
func (t *tools) buildResult(s service.Snapshot) BuildResult {
	r := BuildResult{ID: s.ID, State: s.State, Key: s.Key, Error: s.Error}
	if s.Engine {
		if t.m.Local() {
			r.Engine = s.EnginePath
		} else {
			r.Engine = "/v1/builds/" + s.ID + "/engine"
		}
	}
	if r.State != "succeeded" {
		r.Where, r.Hint = s.Where, s.Hint
	}
	return r
}

// line is the result in one line of text: the state, then the engine and key, or where the
// build stopped, why, and what to do.
func (r BuildResult) line() string {
	var parts []string
	if r.Engine != "" {
		parts = append(parts, "engine "+pathtext.Q(r.Engine))
	}
	if r.Key != "" {
		parts = append(parts, "key "+pathtext.Line(r.Key))
	}
	if r.Error != "" {
		parts = append(parts, pathtext.Line(r.Error))
	}
	if w := r.Where; w != nil && len(w.Path) > 0 {
		parts = append(parts, fmt.Sprintf("in %s (%d/%d steps)", pathtext.Line(strings.Join(w.Path, " > ")), w.Done, w.Steps))
	}
	if w := r.Where; w != nil && w.Node != "" {
		parts = append(parts, "on node "+pathtext.Line(w.Node))
	}
	if r.Hint != "" {
		parts = append(parts, "hint: "+pathtext.Line(r.Hint))
	}
	parts = append(parts, "build "+r.ID)
	return r.State + ": " + strings.Join(parts, "; ")
}

// notifier sends a call's progress notifications: the newest progress of the build at most
// every progressInterval, only when it grew (a notification's progress must increase), and
// the last one when the build ends.
type notifier struct {
	ctx     context.Context // the call's: a cancelled call gets no more notifications
	session *mcp.ServerSession
	token   any

	mu sync.Mutex
	p  *phaseProgress

	sent float64 // the progress of the last notification sent; -1 before the first
}

func newNotifier(ctx context.Context, s *mcp.ServerSession, token any) *notifier {
	return &notifier{ctx: ctx, session: s, token: token, p: newPhaseProgress(), sent: -1}
}

func (n *notifier) apply(line []byte) {
	n.mu.Lock()
	n.p.apply(line)
	n.mu.Unlock()
}

// run sends notifications until done is closed.
func (n *notifier) run(done <-chan struct{}) {
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			n.send()
		}
	}
}

func (n *notifier) send() {
	n.mu.Lock()
	done, total, msg, ok := n.p.now()
	n.mu.Unlock()
	if !ok || done <= n.sent || n.ctx.Err() != nil {
		return
	}
	n.sent = done
	n.session.NotifyProgress(n.ctx, &mcp.ProgressNotificationParams{ProgressToken: n.token, Progress: done, Total: total, Message: msg}) //nolint:errcheck // a client gone is the call's end
}
