package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/service"
)

// TestDeleteBuild: DELETE removes an ended build (204), whose id is then unknown (404); a
// running one is 409, saying to cancel it first.
func TestDeleteBuild(t *testing.T) {
	ts := newTestServer(t)
	done := ts.submit(t, fastSim, http.StatusCreated)
	ts.waitState(t, done.ID, "succeeded")
	if resp, body := ts.do(t, "DELETE", "/v1/builds/"+done.ID, ""); resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("DELETE an ended build: %d %s", resp.StatusCode, body)
	}
	for _, method := range []string{"GET", "DELETE"} {
		if resp, body := ts.do(t, method, "/v1/builds/"+done.ID, ""); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s a deleted build: %d %s", method, resp.StatusCode, body)
		}
	}
	// Another engine than the first (another seed): no engine cache hit.
	running := ts.submit(t, strings.Replace(slowSim, "{", `{"sim-seed": 7, `, 1), http.StatusCreated)
	resp, body := ts.do(t, "DELETE", "/v1/builds/"+running.ID, "")
	if e := errorBody(t, body); resp.StatusCode != http.StatusConflict || !strings.Contains(e.Hint, "cancel it first") {
		t.Fatalf("DELETE a running build: %d %s", resp.StatusCode, body)
	}
}

// TestRemovedFilesAreGone: once the retention rule removed an ended build's files, the build
// is still listed, its engine_available false and files_removed saying why, and its files are
// 410 with that reason.
func TestRemovedFilesAreGone(t *testing.T) {
	ts := newTestServer(t, withService(func(c *service.Config) { c.Keep = service.Keep{Bytes: 1} }))
	snap := ts.submit(t, fastSim, http.StatusCreated)
	ts.waitState(t, snap.ID, "succeeded")
	var got service.Snapshot
	deadline := time.Now().Add(time.Minute)
	for got.FilesRemoved == "" {
		if time.Now().After(deadline) {
			t.Fatal("the build's files were not removed within a minute")
		}
		time.Sleep(10 * time.Millisecond)
		_, body := ts.do(t, "GET", "/v1/builds/"+snap.ID, "")
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
	}
	if got.Engine || got.State != "succeeded" || !strings.Contains(got.FilesRemoved, "--keep-builds-size") {
		t.Fatalf("the build after its files were removed: %+v", got)
	}
	for _, kind := range []string{"engine", "report", "trace"} {
		resp, body := ts.do(t, "GET", "/v1/builds/"+snap.ID+"/"+kind, "")
		e := errorBody(t, body)
		if resp.StatusCode != http.StatusGone || !strings.Contains(e.Error, "files were removed") || e.Hint == "" {
			t.Errorf("GET %s: %d %s", kind, resp.StatusCode, body)
		}
	}
}
