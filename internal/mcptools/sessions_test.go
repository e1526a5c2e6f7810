package mcptools

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trtbuild/trtbuild/internal/service"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// post sends one JSON-RPC message to /mcp, in session id ("": none), and returns the response
// with its body read.
func post(t *testing.T, url, id, body string) (*http.Response, string) {
	t.Helper()
	resp, data, err := postErr(url, id, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// postErr is post for a goroutine other than the test's.
func postErr(url, id, body string) (*http.Response, string, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set(sessionHeader, id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, string(data), err
}

// open opens a session: initialize, then the initialized notification. It returns the id.
func open(t *testing.T, url string) string {
	t.Helper()
	resp, body := post(t, url, "", initializeBody)
	id := resp.Header.Get(sessionHeader)
	if resp.StatusCode != 200 || id == "" || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize: %d, session %q: %s", resp.StatusCode, id, body)
	}
	if resp, body := post(t, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	return id
}

// listTools is the status of tools/list in session id: 200 while it is open, 404 once closed.
func listTools(t *testing.T, url, id string) int {
	t.Helper()
	resp, _ := post(t, url, id, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	return resp.StatusCode
}

func newManager(t *testing.T) *service.Manager {
	t.Helper()
	m, err := service.New(service.Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// waitClosed waits until session id is closed: its requests are 404 (a session closed to make
// room is closed once its requests in flight have ended).
func waitClosed(t *testing.T, url, id string) {
	t.Helper()
	for listTools(t, url, id) != http.StatusNotFound {
		time.Sleep(10 * time.Millisecond)
	}
}

// waitOpen waits until the server has at most n sessions open (a closed session leaves the
// SDK's list when its connection has wound down).
func waitOpen(t *testing.T, l *sessionLimit, n int) {
	t.Helper()
	for {
		if _, open := l.live(); open <= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSessionCap: however many sessions clients open, at most MaxSessions are alive: each one
// beyond closes the session idle longest, whose client then gets 404, and the newest work.
func TestSessionCap(t *testing.T) {
	const max, opened = 4, 40
	h := HTTPHandler(newManager(t), "test", HTTPOptions{MaxSessions: max, SessionIdle: time.Hour})
	l := h.(*sessionLimit)
	srv := httptest.NewServer(h)
	defer srv.Close()
	var ids []string
	for i := 0; i < opened; i++ {
		ids = append(ids, open(t, srv.URL))
		if counted, _ := l.live(); counted > max {
			t.Fatalf("after %d sessions %d are counted, over the cap of %d", i+1, counted, max)
		}
		waitOpen(t, l, max)
	}
	if _, open := l.live(); open != max {
		t.Fatalf("%d sessions open after %d were opened, want %d", open, opened, max)
	}
	for i, id := range ids {
		if i < opened-max {
			waitClosed(t, srv.URL, id)
		} else if got := listTools(t, srv.URL, id); got != http.StatusOK {
			t.Errorf("session %d of %d, one of the newest: tools/list %d, want 200", i+1, opened, got)
		}
	}
	// The session used last is idle for the shortest time: it stays when another opens.
	oldest := ids[opened-max]
	listTools(t, srv.URL, oldest)
	open(t, srv.URL)
	waitOpen(t, l, max)
	if got := listTools(t, srv.URL, oldest); got != http.StatusOK {
		t.Errorf("the session used last was closed: %d", got)
	}
	waitClosed(t, srv.URL, ids[opened-max+1]) // the session idle longest
}

// TestSessionsBusyRefused: when every session has a request in flight, a new session is
// refused with 503, Retry-After and a JSON-RPC error that says why and what to do; once the
// call has ended, the new session closes the now idle one.
func TestSessionsBusyRefused(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	started, release := make(chan struct{}, 1), make(chan struct{})
	server.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	l := newSessionLimit(server, HTTPOptions{MaxSessions: 1})
	srv := httptest.NewServer(l)
	defer srv.Close()
	busy := open(t, srv.URL)
	called := make(chan string, 1)
	go func() {
		resp, body, err := postErr(srv.URL, busy, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
		if err != nil {
			called <- err.Error()
			return
		}
		called <- strconv.Itoa(resp.StatusCode) + " " + body
	}()
	<-started
	resp, body := post(t, srv.URL, "", initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, `"id":1`) || !strings.Contains(body, "the server has its most MCP sessions (1), each with a request in flight") || !strings.Contains(body, "--mcp-sessions") {
		t.Fatalf("a session beyond the cap while all are busy: %d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(release)
	if got := <-called; !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "done") {
		t.Fatalf("the call: %s", got)
	}
	open(t, srv.URL)
	waitClosed(t, srv.URL, busy) // idle now, it made room for the new one
}

// TestSessionIdleExpiry: a session without requests for SessionIdle is closed.
func TestSessionIdleExpiry(t *testing.T) {
	h := HTTPHandler(newManager(t), "test", HTTPOptions{SessionIdle: 50 * time.Millisecond})
	l := h.(*sessionLimit)
	srv := httptest.NewServer(h)
	defer srv.Close()
	id := open(t, srv.URL)
	waitOpen(t, l, 0)
	waitClosed(t, srv.URL, id)
	// The defaults apply when none are given.
	d := newSessionLimit(mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil), HTTPOptions{})
	if d.max != DefaultMaxSessions {
		t.Errorf("max %d, want %d", d.max, DefaultMaxSessions)
	}
}
