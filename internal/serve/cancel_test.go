package serve

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowSim is a build that runs for minutes unless cancelled.
const slowSim = `{"backend": "sim", "sim-step": "1s", "no-timing-cache": true}`

func TestCancelAndShare(t *testing.T) {
	ts := newTestServer(t)
	first := ts.submit(t, slowSim, http.StatusCreated, "Idempotency-Key", "k1")
	// The same key and request: the same build; another request with that key: 409.
	if again := ts.submit(t, slowSim, http.StatusOK, "Idempotency-Key", "k1"); again.ID != first.ID {
		t.Fatalf("the Idempotency-Key's replay is build %s, not %s", again.ID, first.ID)
	}
	resp, body := ts.do(t, "POST", "/v1/builds", `{"model": "convnet.onnx", "options": {"backend": "sim"}}`, "Idempotency-Key", "k1")
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("the key with another request: %d %s", resp.StatusCode, body)
	}
	// The same build without a key shares the queued or running one.
	if shared := ts.submit(t, slowSim, http.StatusOK); shared.ID != first.ID {
		t.Fatalf("the same build is %s, not the running %s", shared.ID, first.ID)
	}
	var types []string
	_, events, _ := ts.stream(t, first.ID, "", nil, func(ev sseEvent) bool {
		if ev.typ == "step" && len(types) > 0 && types[len(types)-1] != "step" {
			resp, body := ts.do(t, "POST", "/v1/builds/"+first.ID+"/cancel", "")
			if resp.StatusCode != http.StatusAccepted {
				t.Errorf("cancel: %d %s", resp.StatusCode, body)
			}
		}
		types = append(types, ev.typ)
		return true
	})
	last := events[len(events)-1]
	if last.typ != "result" || !strings.Contains(last.data, `"status":"cancelled"`) {
		t.Fatalf("the stream ended with %+v", last)
	}
	snap := ts.waitState(t, first.ID, "cancelled")
	if snap.Engine {
		t.Fatal("a cancelled build has an engine")
	}
	if resp, body := ts.do(t, "GET", "/v1/builds/"+first.ID+"/engine", ""); resp.StatusCode != 404 {
		t.Fatalf("engine of a cancelled build: %d %s", resp.StatusCode, body)
	}
	matches, _ := filepath.Glob(filepath.Join(ts.stateDir, "builds", first.ID, "*.engine"))
	if len(matches) != 0 {
		t.Fatalf("engine files of a cancelled build: %v", matches)
	}
	// Cancelling an ended build changes nothing.
	if resp, body := ts.do(t, "POST", "/v1/builds/"+first.ID+"/cancel?hard=true", ""); resp.StatusCode != 202 || !strings.Contains(string(body), `"cancelled"`) {
		t.Fatalf("cancel of an ended build: %d %s", resp.StatusCode, body)
	}
}

// TestStreamOutlivesReadTimeout: a stream that waits longer than the server's ReadTimeout
// gets keepalive comments and stays open for the build's events.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	ts := newTestServer(t, withServer(func(s *Server) {
		s.keepalive = 100 * time.Millisecond
		s.http.ReadTimeout = 300 * time.Millisecond
	}))
	// 1.5 s of silence before the first phase (the simulated silence is not sped up), longer than the
	// ReadTimeout.
	snap := ts.submit(t, `{"backend": "sim", "sim-speed": 50, "sim-pre-silent": "1500ms", "no-timing-cache": true}`, http.StatusCreated)
	_, events, comments := ts.stream(t, snap.ID, "", nil, nil)
	if len(comments) < 3 || comments[0] != ": keepalive" {
		t.Fatalf("comments %q", comments)
	}
	if events[len(events)-1].typ != "result" || !strings.Contains(events[len(events)-1].data, `"built"`) {
		t.Fatalf("the stream ended with %+v", events[len(events)-1])
	}
}
