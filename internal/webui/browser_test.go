package webui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trtbuild/trtbuild/internal/webui/webuitest"
)

// The browser tests run the page in headless Chromium against a stand-in API server: Handler
// mounted at / beside a fake of the HTTP API v1 (POST /v1/builds, GET /v1/builds[/<id>], the
// SSE event stream and POST cancel) that plays a recorded real build, testdata/convnet-sim.jsonl
// (trtbuild --backend sim --trace of testdata/models/convnet.onnx), event by event.

const (
	// browserToken has the characters that must be escaped in the page's meta tag; the fake
	// API refuses a POST whose X-Trtbuild-Token differs from it by a byte.
	browserToken   = `tok"<>&'en`
	browserTimeout = 60 * time.Second
)

// recordedEvent is one line of the recorded trace, or of a fake build's log.
type recordedEvent struct {
	typ   string
	data  []byte
	phase phaseEvent
}

func loadRecording(t *testing.T) []recordedEvent {
	t.Helper()
	f, err := os.Open("testdata/convnet-sim.jsonl")
	if err != nil {
		t.Fatalf("opening the recorded trace: %v", err)
	}
	defer f.Close()
	var evs []recordedEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e phaseEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type == "" {
			t.Fatalf("testdata/convnet-sim.jsonl line %d is not an event: %v", len(evs)+1, err)
		}
		evs = append(evs, recordedEvent{e.Type, bytes.Clone(sc.Bytes()), e})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the recorded trace: %v", err)
	}
	if len(evs) < 100 || evs[len(evs)-1].typ != "result" {
		t.Fatalf("the recorded trace has %d events and does not end in a result", len(evs))
	}
	return evs
}

// phaseEvent is the part of an event the tests look at.
type phaseEvent struct {
	Type, Name string
	ID, Parent int
	Steps      int
	Step       int
	Early      bool
}

// fakeAPI is the stand-in for internal/httpapi: the API's routes over builds that replay the
// recording, one event per delay, whether or not a client is listening (as a real build runs).
type fakeAPI struct {
	t         *testing.T
	recording []recordedEvent
	delay     time.Duration
	// holdResult: the build never plays the recording's result; it waits for a cancel (so a
	// slow test cannot miss the running build).
	holdResult bool
	// dropAfter: the first connection to a build's stream is broken after this many events
	// (0: never). overlap: a resumed stream starts this many events before Last-Event-ID, more
	// than the API does, to show that the page applies a replayed event once.
	dropAfter, overlap int
	// rename: phase names to replace in the recording, by phase id.
	rename map[int]string

	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu        sync.Mutex
	builds    map[string]*fakeBuild
	order     []string // ids, oldest first
	posts     []fakePost
	resumes   []string // the Last-Event-ID header of each stream request
	droppedAt int64    // the last event sent before the connection was dropped
}

type fakePost struct {
	path, token, contentType string
	body                     []byte
}

type fakeBuild struct {
	snap       snapshot
	log        []recordedEvent // the events so far; log[i] has Seq i+1
	changed    chan struct{}   // closed and replaced at each change
	ended      bool
	cancel     chan struct{}
	cancelOnce sync.Once
	streams    int
	where      *where // of the cancelled result
}

// snapshot is the API's Snapshot, as much as the page reads.
type snapshot struct {
	ID       string          `json:"id"`
	State    string          `json:"state"`
	Key      string          `json:"key"`
	Model    string          `json:"model"`
	Position int             `json:"position,omitempty"`
	Created  time.Time       `json:"created"`
	Result   json.RawMessage `json:"result,omitempty"`
	Where    *where          `json:"where,omitempty"`
	Hint     string          `json:"hint,omitempty"`
	Error    string          `json:"error,omitempty"`
	Engine   bool            `json:"engine_available"`
}

type where struct {
	ID    int      `json:"id"`
	Path  []string `json:"path"`
	Done  int      `json:"done"`
	Steps int      `json:"steps"`
	Node  string   `json:"node,omitempty"`
}

func newFakeAPI(t *testing.T, recording []recordedEvent) *fakeAPI {
	ctx, stop := context.WithCancel(context.Background())
	return &fakeAPI{t: t, recording: recording, delay: 20 * time.Millisecond, ctx: ctx, stop: stop,
		builds: map[string]*fakeBuild{}}
}

// start serves Handler and the fake API; the server and the builds stop when the test ends.
func (f *fakeAPI) start() *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/", Handler(browserToken))
	mux.HandleFunc("POST /v1/builds", f.submit)
	mux.HandleFunc("GET /v1/builds", f.list)
	mux.HandleFunc("GET /v1/builds/{id}", f.get)
	mux.HandleFunc("GET /v1/builds/{id}/events", f.events)
	mux.HandleFunc("POST /v1/builds/{id}/cancel", f.cancelBuild)
	srv := httptest.NewServer(mux)
	f.t.Cleanup(srv.Close)
	f.t.Cleanup(func() { f.stop(); f.wg.Wait() }) // runs first: ends the streams and the builds
	return srv
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeProblem(w http.ResponseWriter, status int, problem, hint string) {
	writeJSON(w, status, map[string]string{"error": problem, "hint": hint})
}

// checkPost records a POST and answers false (with the API's error) when it lacks the page
// token or a JSON content type.
func (f *fakeAPI) checkPost(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	p := fakePost{r.URL.RequestURI(), r.Header.Get("X-Trtbuild-Token"), r.Header.Get("Content-Type"), body.Bytes()}
	f.mu.Lock()
	f.posts = append(f.posts, p)
	f.mu.Unlock()
	if p.token != browserToken {
		writeProblem(w, http.StatusForbidden, fmt.Sprintf("X-Trtbuild-Token %q is not this server's page token", p.token),
			"reload the page")
		return nil, false
	}
	if mt, _, err := mime.ParseMediaType(p.contentType); err != nil || mt != "application/json" {
		writeProblem(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not application/json", p.contentType),
			"send the body as JSON")
		return nil, false
	}
	return p.body, true
}

func (f *fakeAPI) submit(w http.ResponseWriter, r *http.Request) {
	body, ok := f.checkPost(w, r)
	if !ok {
		return
	}
	var req struct {
		Model   string                     `json:"model"`
		Options map[string]json.RawMessage `json:"options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeProblem(w, http.StatusBadRequest, "the body is not a build request: "+err.Error(), `send {"model": "...", "options": {...}}`)
		return
	}
	if req.Model != "convnet.onnx" {
		writeProblem(w, http.StatusNotFound, fmt.Sprintf("model %s: no such file in the model folder", req.Model),
			"name an .onnx file under the server's --model-root")
		return
	}
	b := f.newBuild(req.Model)
	writeJSON(w, http.StatusCreated, b)
}

// newBuild makes a queued build and starts playing it.
func (f *fakeAPI) newBuild(model string) snapshot {
	f.mu.Lock()
	id := fmt.Sprintf("b%03d", len(f.order)+1)
	b := &fakeBuild{
		snap:    snapshot{ID: id, State: "queued", Key: "k" + id, Model: model, Position: 1, Created: time.Now()},
		changed: make(chan struct{}),
		cancel:  make(chan struct{}),
	}
	f.builds[id] = b
	f.order = append(f.order, id)
	snap := b.snap
	f.mu.Unlock()
	f.wg.Add(1)
	go f.play(b)
	return snap
}

// addEnded adds a build that ended before the page opened.
func (f *fakeAPI) addEnded(model, state string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := fmt.Sprintf("b%03d", len(f.order)+1)
	f.builds[id] = &fakeBuild{snap: snapshot{ID: id, State: state, Key: "k" + id, Model: model, Created: time.Now()},
		changed: make(chan struct{}), cancel: make(chan struct{}), ended: true}
	f.order = append(f.order, id)
	return id
}

// appendEvent adds one event to the build's log and updates its state as the service does.
func (f *fakeAPI) appendEvent(b *fakeBuild, typ string, data []byte) {
	ev := recordedEvent{typ: typ, data: data}
	f.mu.Lock()
	defer f.mu.Unlock()
	b.log = append(b.log, ev)
	b.snap.State, b.snap.Position = "running", 0
	if typ == "result" {
		var res struct {
			Status string `json:"status"`
			Where  *where `json:"where"`
			Hint   string `json:"hint"`
			Error  string `json:"error"`
		}
		json.Unmarshal(data, &res)
		b.snap.State = map[string]string{"built": "succeeded"}[res.Status]
		if b.snap.State == "" {
			b.snap.State = res.Status
		}
		b.snap.Result, b.snap.Where, b.snap.Hint, b.snap.Error = data, res.Where, res.Hint, res.Error
		b.snap.Engine = res.Status == "built"
		b.ended = true
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// play replays the recording into the build's log. On a cancel it ends the build as trtbuild
// does: a warning, every open phase finished early (innermost first), a cancelled result.
func (f *fakeAPI) play(b *fakeBuild) {
	defer f.wg.Done()
	var stack []openPhase // outermost first
	t0 := time.Now()
	for _, ev := range f.recording {
		if ev.typ == "result" && f.holdResult {
			break
		}
		select {
		case <-f.ctx.Done():
			return
		case <-b.cancel:
			f.cancelled(b, stack, t0)
			return
		case <-time.After(f.delay):
		}
		data := ev.data
		e := ev.phase
		switch ev.typ {
		case "phase_start":
			if name, ok := f.rename[e.ID]; ok {
				var m map[string]any
				json.Unmarshal(data, &m)
				m["name"] = name
				data, _ = json.Marshal(m)
				e.Name = name
			}
			stack = append(stack, openPhase{id: e.ID, steps: e.Steps, name: e.Name})
		case "step":
			for i := range stack {
				if stack[i].id == e.ID {
					stack[i].done = min(stack[i].steps, e.Step+1)
				}
			}
		case "phase_finish":
			stack = slices.DeleteFunc(stack, func(o openPhase) bool { return o.id == e.ID })
		}
		f.appendEvent(b, ev.typ, data)
	}
	if !f.holdResult {
		return
	}
	select {
	case <-f.ctx.Done():
	case <-b.cancel:
		f.cancelled(b, stack, t0)
	}
}

// openPhase is a phase that started and has not finished.
type openPhase struct {
	id, done, steps int
	name            string
}

// cancelled ends the build with the open phases, outermost first, as trtbuild ends a cancelled
// build; the result's where names the innermost one.
func (f *fakeAPI) cancelled(b *fakeBuild, open []openPhase, t0 time.Time) {
	at := func() float64 { return time.Since(t0).Seconds() }
	f.appendEvent(b, "log", fmt.Appendf(nil, `{"v":1,"type":"log","t":%f,"severity":"warning","message":"Cancel requested: the builder stops at its next step boundary (this can take a while)."}`, at()))
	for _, o := range slices.Backward(open) {
		f.appendEvent(b, "phase_finish", fmt.Appendf(nil, `{"v":1,"type":"phase_finish","t":%f,"id":%d,"early":true}`, at(), o.id))
	}
	res := map[string]any{"v": 1, "type": "result", "t": at(), "status": "cancelled"}
	var w *where
	if len(open) > 0 {
		w = &where{}
		for _, o := range open {
			w.ID, w.Done, w.Steps = o.id, o.done, o.steps
			w.Path = append(w.Path, o.name)
		}
		res["where"] = w
	}
	data, _ := json.Marshal(res)
	f.mu.Lock()
	b.where = w
	f.mu.Unlock()
	f.appendEvent(b, "result", data)
}

func (f *fakeAPI) build(id string) (*fakeBuild, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.builds[id]
	return b, ok
}

func (f *fakeAPI) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	builds := []snapshot{}
	for _, id := range slices.Backward(f.order) {
		builds = append(builds, f.builds[id].snap)
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"builds": builds})
}

func (f *fakeAPI) get(w http.ResponseWriter, r *http.Request) {
	b, ok := f.build(r.PathValue("id"))
	if !ok {
		writeProblem(w, http.StatusNotFound, "no build "+r.PathValue("id"), "GET /v1/builds lists the builds")
		return
	}
	f.mu.Lock()
	snap := b.snap
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, snap)
}

func (f *fakeAPI) cancelBuild(w http.ResponseWriter, r *http.Request) {
	b, ok := f.build(r.PathValue("id"))
	if _, posted := f.checkPost(w, r); !posted {
		return
	}
	if !ok {
		writeProblem(w, http.StatusNotFound, "no build "+r.PathValue("id"), "GET /v1/builds lists the builds")
		return
	}
	b.cancelOnce.Do(func() { close(b.cancel) })
	f.mu.Lock()
	snap := b.snap
	f.mu.Unlock()
	writeJSON(w, http.StatusAccepted, snap)
}

// events is the SSE stream: it replays the build's log after Last-Event-ID (or ?after=), follows
// it live and returns after the result, as the API does.
func (f *fakeAPI) events(w http.ResponseWriter, r *http.Request) {
	b, ok := f.build(r.PathValue("id"))
	if !ok {
		writeProblem(w, http.StatusNotFound, "no build "+r.PathValue("id"), "GET /v1/builds lists the builds")
		return
	}
	resume := r.Header.Get("Last-Event-ID")
	after := r.URL.Query().Get("after")
	if resume != "" {
		after = resume
	}
	next := 0 // the number of log events already sent (= the last Seq sent)
	if after != "" {
		n, err := strconv.Atoi(after)
		if err != nil || n < 0 {
			writeProblem(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID %q is not an event number", after), "")
			return
		}
		next = max(0, n-f.overlap)
	}
	f.mu.Lock()
	f.resumes = append(f.resumes, resume)
	first := b.streams == 0
	b.streams++
	f.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	sent := 0
	for {
		f.mu.Lock()
		pending := b.log[min(next, len(b.log)):]
		ended, changed := b.ended, b.changed
		f.mu.Unlock()
		for _, ev := range pending {
			next++
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", next, ev.typ, ev.data)
			if err := rc.Flush(); err != nil {
				return
			}
			sent++
			if first && f.dropAfter > 0 && sent == f.dropAfter {
				f.mu.Lock()
				f.droppedAt = int64(next)
				f.mu.Unlock()
				panic(http.ErrAbortHandler) // breaks the connection, as a network failure does
			}
		}
		if len(pending) == 0 && ended {
			return
		}
		if len(pending) == 0 {
			select {
			case <-changed:
			case <-r.Context().Done():
				return
			case <-f.ctx.Done():
				return
			}
		}
	}
}

// ---- The page in the browser ----

// treeNode is one phase node of the page's #tree.
type treeNode struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Value    int    `json:"value"`
	Max      int    `json:"max"`
	Done     bool   `json:"done"`
	Early    bool   `json:"early"`
	ParentID string `json:"parentId"`
}

const readTree = `Array.from(document.querySelectorAll('#tree [data-phase-id]')).map((li) => {
	const parent = li.parentElement.closest('[data-phase-id]');
	const bar = li.querySelector(':scope > .row > progress');
	return {
		id: li.dataset.phaseId,
		name: li.querySelector(':scope > .row > .name').textContent,
		value: bar ? bar.value : -1,
		max: bar ? bar.max : -1,
		done: li.classList.contains('done'),
		early: li.classList.contains('early'),
		parentId: parent ? parent.dataset.phaseId : '0',
	};
})`

// TestBrowserSubmitFollowAndStop submits a build through the form, watches its tree grow from
// the stream, stops it, and checks that every POST carried the page token.
func TestBrowserSubmitFollowAndStop(t *testing.T) {
	f := newFakeAPI(t, loadRecording(t))
	f.holdResult = true
	old := f.addEnded("old/model.onnx", "succeeded")
	srv := f.start()
	br := webuitest.New(t, browserTimeout)

	br.Do(t, "opening the page", chromedp.Navigate(srv.URL+"/"))
	br.WaitFor(t, "the list of builds", fmt.Sprintf(`document.querySelector('#builds a[href="#/builds/%s"]') !== null`, old))
	if got := br.Text(t, "builds"); !strings.Contains(got, "old/model.onnx") || !strings.Contains(got, "succeeded") {
		t.Errorf("#builds = %q, want the old build's model and state", got)
	}
	if got := webuitest.Eval[string](t, br, `document.querySelector('meta[name="trtbuild-token"]').content`); got != browserToken {
		t.Errorf("the page reads the token %q from its meta tag, want %q", got, browserToken)
	}

	// Options that are not a JSON object: the page says so and sends nothing.
	br.Do(t, "submitting an options array",
		chromedp.SetValue(chromedp.CSS("#model"), "convnet.onnx"),
		chromedp.SetValue(chromedp.CSS("#options"), `[1]`),
		chromedp.Click(chromedp.CSS("#submit")))
	br.WaitFor(t, "the options error", `document.getElementById('error').textContent.includes('the options are not a JSON object')`)

	// A model the server does not have: the 404's error and hint are shown.
	br.Do(t, "submitting a missing model",
		chromedp.SetValue(chromedp.CSS("#model"), "missing.onnx"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('options').value = ''`), // SetValue refuses ""
		chromedp.Click(chromedp.CSS("#submit")))
	br.WaitFor(t, "the server's error", `document.getElementById('error').textContent.includes('model missing.onnx: no such file in the model folder')`)
	if got := br.Text(t, "error"); !strings.Contains(got, "name an .onnx file under the server's --model-root") {
		t.Errorf("#error = %q, want the server's hint too", got)
	}

	br.Do(t, "submitting the build",
		chromedp.SetValue(chromedp.CSS("#model"), "convnet.onnx"),
		chromedp.SetValue(chromedp.CSS("#options"), `{"shapes": "images:1x3x224x224"}`),
		chromedp.Click(chromedp.CSS("#fp16")),
		chromedp.SetValue(chromedp.CSS("#backend"), "sim"),
		chromedp.Click(chromedp.CSS("#submit")))
	br.WaitFor(t, "the build's view", `location.hash === '#/builds/b002' && !document.getElementById('build-view').hidden`)
	br.WaitFor(t, "phase nodes", `document.querySelectorAll('#tree [data-phase-id]').length >= 3`)
	bars := `Array.from(document.querySelectorAll('#tree progress')).map((p) => p.value + '/' + p.max).join(' ')`
	before := webuitest.Eval[string](t, br, bars)
	br.WaitFor(t, "the tree to change", fmt.Sprintf(`(%s) !== %s`, bars, webuitest.JS(before)))
	if got := br.Text(t, "state"); got != "running" {
		t.Errorf("#state = %q while the build runs, want running", got)
	}
	if got := br.Text(t, "build-model"); got != "convnet.onnx" {
		t.Errorf("#build-model = %q, want convnet.onnx", got)
	}

	br.Do(t, "stopping the build", chromedp.Click(chromedp.CSS("#stop")))
	br.WaitFor(t, "the cancelled state", `document.getElementById('state').textContent === 'cancelled'`)

	f.mu.Lock()
	w := f.builds["b002"].where
	posts := slices.Clone(f.posts)
	f.mu.Unlock()
	if w == nil {
		t.Fatal("the build was cancelled with no phase open")
	}
	if got, want := br.Text(t, "where"), strings.Join(w.Path, " › "); got != want {
		t.Errorf("#where = %q, want %q", got, want)
	}
	if webuitest.Eval[bool](t, br, `document.getElementById('where').hidden`) {
		t.Error("#where is hidden after a cancel in a phase")
	}
	if !webuitest.Eval[bool](t, br, `document.getElementById('stop').disabled`) {
		t.Error("#stop is still enabled after the build ended")
	}
	for _, l := range []struct{ id, href string }{
		{"report-link", "/v1/builds/b002/report"},
		{"trace-link", "/v1/builds/b002/trace"},
	} {
		href := webuitest.Eval[string](t, br, fmt.Sprintf(`document.getElementById(%s).getAttribute('href')`, webuitest.JS(l.id)))
		visible := webuitest.Eval[bool](t, br, fmt.Sprintf(`document.getElementById(%s).offsetParent !== null`, webuitest.JS(l.id)))
		if href != l.href || !visible {
			t.Errorf("#%s: href %q, visible %v; want %q, visible", l.id, href, visible, l.href)
		}
	}
	if webuitest.Eval[bool](t, br, `document.getElementById('engine-link').offsetParent !== null`) {
		t.Error("#engine-link is shown for a cancelled build")
	}
	nodes := webuitest.Eval[[]treeNode](t, br, readTree)
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n.ID] {
			t.Errorf("phase %s is in the tree twice", n.ID)
		}
		seen[n.ID] = true
		if !n.Done {
			t.Errorf("phase %s (%s) is not marked done after the build ended", n.ID, n.Name)
		}
	}
	whereNode := slices.IndexFunc(nodes, func(n treeNode) bool { return n.ID == strconv.Itoa(w.ID) })
	if whereNode < 0 || !nodes[whereNode].Early {
		t.Errorf("the phase the build stopped in (%d) is not in the tree marked early: %+v", w.ID, nodes)
	}
	if got := br.Text(t, "log"); !strings.Contains(got, "Cancel requested") {
		t.Errorf("#log = %q, want the cancel notice", got)
	}

	// Every POST carried the token and a JSON body; the build's carried the merged options.
	var paths []string
	for _, p := range posts {
		paths = append(paths, p.path)
		if p.token != browserToken || !strings.HasPrefix(p.contentType, "application/json") {
			t.Errorf("POST %s: X-Trtbuild-Token %q, Content-Type %q; want %q, application/json", p.path, p.token, p.contentType, browserToken)
		}
	}
	if want := []string{"/v1/builds", "/v1/builds", "/v1/builds/b002/cancel"}; !slices.Equal(paths, want) {
		t.Fatalf("POSTs %q, want %q", paths, want)
	}
	var req struct {
		Model   string         `json:"model"`
		Options map[string]any `json:"options"`
	}
	if err := json.Unmarshal(posts[1].body, &req); err != nil {
		t.Fatalf("the build's POST body %s: %v", posts[1].body, err)
	}
	wantOptions := map[string]any{"shapes": "images:1x3x224x224", "fp16": true, "backend": "sim"}
	if req.Model != "convnet.onnx" || fmt.Sprint(req.Options) != fmt.Sprint(wantOptions) {
		t.Errorf("the build's POST body %s, want model convnet.onnx and options %v", posts[1].body, wantOptions)
	}
	br.CheckConsole(t)
}

// TestBrowserStreamReconnects breaks the event stream mid-build: EventSource reconnects with
// Last-Event-ID, the server (this one) replays some events the page already has, and the page
// ends with the same tree as the recording, each phase once, and the build's result.
func TestBrowserStreamReconnects(t *testing.T) {
	recording := loadRecording(t)
	f := newFakeAPI(t, recording)
	f.delay = 5 * time.Millisecond
	// Break the first connection a few events after the recording's log line, and resume 10
	// events early: the replay holds that log line and phase starts the page has drawn.
	logSeq := slices.IndexFunc(recording, func(e recordedEvent) bool { return e.typ == "log" }) + 1
	f.dropAfter, f.overlap = logSeq+4, 10
	replayed := recording[f.dropAfter-f.overlap : f.dropAfter]
	if logSeq <= 0 || !slices.ContainsFunc(replayed, func(e recordedEvent) bool { return e.typ == "phase_start" }) {
		t.Fatalf("the recording has no log line followed by phase starts to replay (log at %d)", logSeq)
	}
	// A phase name with markup: the page must show it as text.
	const markupName = `<img src=x id=injected> & "quoted" </li>`
	f.rename = map[int]string{2: markupName}
	srv := f.start()
	id := f.newBuild("convnet.onnx").ID
	br := webuitest.New(t, browserTimeout)

	br.Do(t, "opening the build's page", chromedp.Navigate(srv.URL+"/#/builds/"+id))
	br.WaitFor(t, "the build's result", `document.getElementById('state').textContent === 'succeeded'`)

	f.mu.Lock()
	resumes, droppedAt := slices.Clone(f.resumes), f.droppedAt
	f.mu.Unlock()
	if droppedAt != int64(f.dropAfter) {
		t.Fatalf("the stream was dropped after event %d, want %d", droppedAt, f.dropAfter)
	}
	// The browser resumes after the last event it took in; one still in flight when the
	// connection broke is lost with it, so the resume may come a little before droppedAt.
	if len(resumes) < 2 || resumes[0] != "" {
		t.Fatalf("the stream requests carried Last-Event-ID %q, want none and then a number", resumes)
	}
	if n, err := strconv.ParseInt(resumes[1], 10, 64); err != nil || n <= 0 || n > droppedAt {
		t.Errorf("the stream was resumed with Last-Event-ID %q, want the number of an event sent before the drop (1..%d)", resumes[1], droppedAt)
	}

	// The tree the recording describes: each phase's name, parent and steps done.
	want := map[string]treeNode{}
	var order []string
	for _, ev := range recording {
		e := ev.phase
		key := strconv.Itoa(e.ID)
		switch ev.typ {
		case "phase_start":
			name := e.Name
			if n, ok := f.rename[e.ID]; ok {
				name = n
			}
			want[key] = treeNode{ID: key, Name: name, Max: e.Steps, ParentID: strconv.Itoa(e.Parent)}
			order = append(order, key)
		case "step":
			n := want[key]
			n.Value = max(n.Value, min(n.Max, e.Step+1))
			want[key] = n
		case "phase_finish":
			n := want[key]
			n.Done, n.Early = true, e.Early
			want[key] = n
		}
	}
	nodes := webuitest.Eval[[]treeNode](t, br, readTree)
	var got []string
	for _, n := range nodes {
		got = append(got, n.ID)
		if n != want[n.ID] {
			t.Errorf("phase %s: the page shows %+v, the recording says %+v", n.ID, n, want[n.ID])
		}
	}
	slices.Sort(got)
	slices.Sort(order)
	if !slices.Equal(got, order) {
		t.Errorf("the tree has the phases %v, want each of %v once", got, order)
	}
	if n := webuitest.Eval[int](t, br, `document.querySelectorAll('#tree img, #injected').length`); n != 0 {
		t.Errorf("a phase name's markup became %d elements", n)
	}
	if n := webuitest.Eval[int](t, br, `document.querySelectorAll('#log li').length`); n != 1 {
		t.Errorf("the log has %d lines, want the recording's one (a replayed event is applied once)", n)
	}
	for _, l := range []struct{ id, href string }{
		{"engine-link", "/v1/builds/" + id + "/engine"},
		{"report-link", "/v1/builds/" + id + "/report"},
		{"trace-link", "/v1/builds/" + id + "/trace"},
	} {
		href := webuitest.Eval[string](t, br, fmt.Sprintf(`document.getElementById(%s).getAttribute('href')`, webuitest.JS(l.id)))
		visible := webuitest.Eval[bool](t, br, fmt.Sprintf(`document.getElementById(%s).offsetParent !== null`, webuitest.JS(l.id)))
		if href != l.href || !visible {
			t.Errorf("#%s: href %q, visible %v; want %q, visible", l.id, href, visible, l.href)
		}
	}
	if got := br.Text(t, "where"); got != "" {
		t.Errorf("#where = %q for a build that succeeded, want empty", got)
	}
	br.CheckConsole(t)
}
