package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trtbuild/trtbuild/internal/webui/webuitest"
)

// The web page of the real `trtbuild serve`, driven in headless Chromium: the form starts a
// simulated build, the page follows its phase tree from the event stream, Stop cancels it, and
// the server agrees (over its API) with what the page shows.

// submitFromPage fills the form with the bundled model and options, submits it, and returns
// the id of the build the page then shows.
func submitFromPage(t *testing.T, br *webuitest.Browser, options string) string {
	t.Helper()
	br.WaitFor(t, "the form", `!document.getElementById('home-view').hidden`)
	br.Do(t, "submitting the build",
		chromedp.SetValue(chromedp.CSS("#model"), "convnet.onnx"),
		chromedp.SetValue(chromedp.CSS("#options"), options),
		chromedp.SetValue(chromedp.CSS("#backend"), "sim"),
		chromedp.Click(chromedp.CSS("#submit")))
	br.WaitFor(t, "the build's view", `location.hash.startsWith('#/builds/') && !document.getElementById('build-view').hidden`)
	return strings.TrimPrefix(webuitest.Eval[string](t, br, `location.hash`), "#/builds/")
}

// treeBars is every phase's progress bar in #tree, as value/max.
const treeBars = `Array.from(document.querySelectorAll('#tree progress')).map((p) => p.value + '/' + p.max).join(' ')`

// buildWhere is the API's Snapshot with the where of a build that ended without an engine.
type buildWhere struct {
	buildSnapshot
	Where *struct {
		Path []string `json:"path"`
	} `json:"where"`
}

// simulatedEngines lists the files under dir that hold a simulated engine.
func simulatedEngines(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		head := make([]byte, len("TRTBUILD-SIMULATED-PLAN"))
		n, _ := f.Read(head)
		if bytes.Equal(head[:n], []byte("TRTBUILD-SIMULATED-PLAN")) || strings.HasSuffix(path, ".engine") {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("looking for engines in %s: %v", dir, err)
	}
	return found
}

// waitState polls build id (with the request's header) until it ended, and returns it.
func waitState(t *testing.T, s *server, id string, header []string) buildSnapshot {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := s.request(t, "GET", "/v1/builds/"+id, "", header...)
		var b buildSnapshot
		if code != 200 || json.Unmarshal([]byte(body), &b) != nil {
			t.Fatalf("GET /v1/builds/%s: %d %s", id, code, body)
		}
		if b.State != "queued" && b.State != "running" {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s is still %s after a minute", id, b.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServePageBuildAndStop starts a slow simulated build from the page of a real server,
// watches its tree change, presses Stop and sees cancelled; the API says the same, and no
// engine was written.
func TestServePageBuildAndStop(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	s := startServe(t, serveModelRoot(t), state)
	br := webuitest.New(t, 2*time.Minute)

	br.Do(t, "opening the page", chromedp.Navigate(s.url+"/"))
	// sim-speed 0.25: about 50 s unless cancelled, time enough to watch and stop it.
	id := submitFromPage(t, br, `{"sim-speed": 0.25, "no-timing-cache": true}`)
	if got := s.build(t, id); got.ID != id {
		t.Fatalf("the page shows build %q, the API knows %+v", id, got)
	}
	br.WaitFor(t, "phase nodes", `document.querySelectorAll('#tree [data-phase-id]').length >= 2`)
	before := webuitest.Eval[string](t, br, treeBars)
	br.WaitFor(t, "the tree to change", fmt.Sprintf(`(%s) !== %q`, treeBars, before))
	if got := br.Text(t, "state"); got != "running" {
		t.Errorf("#state = %q while the build runs, want running", got)
	}
	if got := br.Text(t, "build-model"); got != "convnet.onnx" {
		t.Errorf("#build-model = %q, want convnet.onnx", got)
	}

	br.Do(t, "stopping the build", chromedp.Click(chromedp.CSS("#stop")))
	br.WaitFor(t, "the cancelled state", `document.getElementById('state').textContent === 'cancelled'`)

	// The result event reaches the page a moment before the build's state says it ended.
	waitState(t, s, id, nil)
	code, body := s.request(t, "GET", "/v1/builds/"+id, "")
	var b buildWhere
	if code != 200 || json.Unmarshal([]byte(body), &b) != nil {
		t.Fatalf("GET /v1/builds/%s: %d %s", id, code, body)
	}
	if b.State != "cancelled" || b.Engine {
		t.Fatalf("over the API the build is %s, engine_available %v; want cancelled without an engine", b.State, b.Engine)
	}
	if b.Where == nil || len(b.Where.Path) == 0 {
		t.Errorf("the cancelled build says no phase it stopped in: %s", body)
	} else if got, want := br.Text(t, "where"), strings.Join(b.Where.Path, " › "); got != want {
		t.Errorf("#where = %q, the API's where is %q", got, want)
	}
	if code, body := s.request(t, "GET", "/v1/builds/"+id+"/engine", ""); code != 404 {
		t.Errorf("GET the cancelled build's engine: %d %.200s, want 404", code, body)
	}
	if engines := simulatedEngines(t, state); len(engines) > 0 {
		t.Errorf("the cancelled build wrote %v", engines)
	}
	if !webuitest.Eval[bool](t, br, `document.getElementById('stop').disabled`) {
		t.Error("#stop is still enabled after the build ended")
	}
	br.CheckConsole(t)
}

// TestServePageTokenLogin opens the page of a server with --token-file through /?token=T: the
// cookie it sets lets the page start a build and follow it to its engine; a POST from the page
// without the cookie, or without the page token, is refused.
func TestServePageTokenLogin(t *testing.T) {
	t.Parallel()
	const token = "page-tok-42"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, serveModelRoot(t), t.TempDir(), "--token-file", tokenFile)
	br := webuitest.New(t, 2*time.Minute)

	// Without the token the page is refused.
	if code, body := s.request(t, "GET", "/", ""); code != 401 {
		t.Fatalf("GET / without the token: %d %.200s, want 401", code, body)
	}
	br.Do(t, "logging in", chromedp.Navigate(s.url+"/?token="+token))
	br.WaitFor(t, "the page after the login", `location.search === '' && location.pathname === '/' && document.querySelector('meta[name="trtbuild-token"]') !== null`)
	br.WaitFor(t, "the list of builds", `document.getElementById('builds-error').hidden`)

	post := func(credentials string, pageToken bool) int {
		headers := `{'Content-Type': 'application/json'}`
		if pageToken {
			headers = `{'Content-Type': 'application/json', 'X-Trtbuild-Token': document.querySelector('meta[name="trtbuild-token"]').content}`
		}
		return webuitest.Eval[int](t, br, fmt.Sprintf(`fetch('/v1/builds', {method: 'POST', credentials: %q, headers: %s,
			body: JSON.stringify({model: 'convnet.onnx', options: {backend: 'sim'}})}).then((r) => r.status)`, credentials, headers))
	}
	if code := post("omit", true); code != 401 {
		t.Errorf("a POST from the page without the cookie: %d, want 401", code)
	}
	if code := post("same-origin", false); code != 403 {
		t.Errorf("a POST from the page without the page token: %d, want 403", code)
	}
	auth := []string{"Authorization", "Bearer " + token}
	if code, body := s.request(t, "GET", "/v1/builds", "", auth...); code != 200 || strings.Contains(body, `"id"`) {
		t.Fatalf("the refused POSTs left builds: %d %s", code, body)
	}

	id := submitFromPage(t, br, `{"sim-speed": 50, "no-timing-cache": true}`)
	br.WaitFor(t, "the build's result", `document.getElementById('state').textContent === 'succeeded'`)
	if br.Text(t, "tree") == "" {
		t.Error("#tree is empty after the build")
	}
	if b := waitState(t, s, id, auth); b.State != "succeeded" || !b.Engine {
		t.Fatalf("over the API the page's build is %+v; want succeeded with its engine", b)
	}
	// The engine link works with the cookie alone.
	n := webuitest.Eval[int](t, br, `fetch(document.getElementById('engine-link').getAttribute('href')).then((r) => r.ok ? r.arrayBuffer().then((b) => b.byteLength) : -r.status)`)
	if n <= 0 {
		t.Errorf("fetching the engine from the page: %d, want its bytes", n)
	}
	br.CheckConsole(t)
}
