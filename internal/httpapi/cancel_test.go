package httpapi

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
	// The same build without a key is a build of its own, which follows the same run.
	shared := ts.submit(t, slowSim, http.StatusCreated)
	if shared.ID == first.ID {
		t.Fatalf("the same build without the key is build %s too", first.ID)
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
	// The other client's build went on; its cancel, the last, cancels the run.
	if s, _ := ts.m.Get(shared.ID); s.State != "running" {
		t.Fatalf("the other client's build is %s after the first cancelled, want running", s.State)
	}
	if resp, body := ts.do(t, "POST", "/v1/builds/"+shared.ID+"/cancel", ""); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	_, events, _ = ts.stream(t, shared.ID, "", nil, nil)
	if last := events[len(events)-1]; last.typ != "result" || !strings.Contains(last.data, `"status":"cancelled"`) {
		t.Fatalf("the last client's stream ended with %+v", last)
	}
	noticed := false
	for _, ev := range events {
		noticed = noticed || ev.typ == "log" && strings.Contains(ev.data, "Cancel requested")
	}
	if !noticed {
		t.Error("the run was not cancelled at a step boundary: no cancel notice")
	}
}

// sharedSim is a build of a few seconds that two clients share.
const sharedSim = `{"backend": "sim", "sim-speed": 5, "sim-post-silent": "3s", "no-timing-cache": true}`

// TestSharersKeepTheirOwnBudgetAndCancel: of three clients of one build, the one with a short
// time budget times out alone and the one that cancels leaves alone; the third, without a
// budget, gets the engine.
func TestSharersKeepTheirOwnBudgetAndCancel(t *testing.T) {
	ts := newTestServer(t)
	stays := ts.submit(t, sharedSim, http.StatusCreated)
	budget := ts.submit(t, strings.Replace(sharedSim, "{", `{"timeout": "1s", `, 1), http.StatusCreated)
	cancels := ts.submit(t, sharedSim, http.StatusCreated)
	_, events, _ := ts.stream(t, budget.ID, "", nil, nil)
	if last := events[len(events)-1]; last.typ != "result" || !strings.Contains(last.data, `"status":"timed_out"`) || !strings.Contains(last.data, "build exceeded --timeout 1s") {
		t.Fatalf("the stream of the build with a budget ended with %+v", last)
	}
	_, _, _ = ts.stream(t, cancels.ID, "", nil, func(ev sseEvent) bool {
		if ev.typ == "step" {
			if resp, body := ts.do(t, "POST", "/v1/builds/"+cancels.ID+"/cancel?hard=true", ""); resp.StatusCode != http.StatusAccepted || !strings.Contains(string(body), `"cancelled"`) {
				t.Fatalf("cancel: %d %s", resp.StatusCode, body)
			}
			return false
		}
		return true
	})
	if s, _ := ts.m.Get(stays.ID); s.State != "running" {
		t.Fatalf("the build without a budget is %s, want running", s.State)
	}
	_, events, _ = ts.stream(t, stays.ID, "", nil, nil)
	if last := events[len(events)-1]; !strings.Contains(last.data, `"status":"built"`) {
		t.Fatalf("the build without a budget ended with %+v", last)
	}
	ts.waitState(t, stays.ID, "succeeded")
	resp, body := ts.do(t, "GET", "/v1/builds/"+stays.ID+"/engine", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "TRTBUILD-SIMULATED-PLAN") {
		t.Fatalf("engine: %d", resp.StatusCode)
	}
	for _, id := range []string{budget.ID, cancels.ID} {
		if resp, body := ts.do(t, "GET", "/v1/builds/"+id+"/engine", ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("the engine of build %s, which left: %d %s", id, resp.StatusCode, body)
		}
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
