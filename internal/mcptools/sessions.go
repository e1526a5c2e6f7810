package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The limits of the streamable HTTP handler's sessions, unless HTTPOptions say otherwise.
const (
	// DefaultMaxSessions is the most sessions alive at once: each holds a few tens of KiB.
	DefaultMaxSessions = 100
	// DefaultSessionIdle is how long a session may go without a request before it is
	// closed, so that clients that vanish leave nothing behind for long.
	DefaultSessionIdle = 10 * time.Minute
)

// sessionHeader is the streamable HTTP transport's session id header.
const sessionHeader = "Mcp-Session-Id"

// HTTPOptions are the limits of HTTPHandler's sessions, and its log.
type HTTPOptions struct {
	// MaxSessions is the most sessions alive at once (0: DefaultMaxSessions). A client that
	// opens one more closes the session idle longest (one without a request in flight; its
	// client's next request is 404, on which MCP clients start a new session); when every
	// session has a request in flight, the new one is refused with 503 and Retry-After.
	MaxSessions int
	// SessionIdle is how long a session may go without a request before it is closed
	// (0: DefaultSessionIdle). A request in flight keeps its session alive.
	SessionIdle time.Duration
	// Log receives the SDK's errors and the sessions closed to make room (nil: none).
	Log *slog.Logger
}

// sessionLimit keeps the streamable HTTP handler next under max live sessions of server: it
// follows which sessions have requests in flight (POSTs, as the SDK's idle timer does) and when
// each was last used, and before a request without a session id (which the SDK opens a new
// session for) it makes room by closing the one idle longest, or refuses.
type sessionLimit struct {
	server *mcp.Server
	next   http.Handler
	max    int
	log    *slog.Logger

	mu       sync.Mutex
	sessions map[string]*sessionUse // by id: the sessions opened through this handler
	opening  int                    // requests without a session id in flight: sessions to be
}

// sessionUse is what sessionLimit knows of one session.
type sessionUse struct {
	inFlight int       // POSTs being answered
	last     time.Time // when the last one began or ended
}

func newSessionLimit(server *mcp.Server, o HTTPOptions) *sessionLimit {
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &sessionLimit{
		server: server, max: o.MaxSessions, log: o.Log, sessions: map[string]*sessionUse{},
		next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
			DisableLocalhostProtection:   true,
			SessionTimeout:               o.SessionIdle,
			MaxRequestBodyBytes:          maxRequestBody,
			PropagateRequestCancellation: true,
			Logger:                       o.Log,
		}),
	}
}

func (l *sessionLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		l.next.ServeHTTP(w, r)
		return
	}
	if id := r.Header.Get(sessionHeader); id != "" {
		l.begin(id)
		defer l.end(id)
		l.next.ServeHTTP(w, r)
		return
	}
	if !l.admit(w, r) {
		return
	}
	sw := &sessionWriter{ResponseWriter: w, l: l}
	defer sw.done()
	l.next.ServeHTTP(sw, r)
}

// admit makes room for one more session, closing the session idle longest if it must; with
// no room to make it answers 503 and returns false.
func (l *sessionLimit) admit(w http.ResponseWriter, r *http.Request) bool {
	l.mu.Lock()
	// The server's sessions, seen under l.mu: every session counted in l.sessions by then
	// was opened before, and is among them unless it has been closed since.
	live := map[string]*mcp.ServerSession{}
	for ss := range l.server.Sessions() {
		live[ss.ID()] = ss
	}
	for id := range l.sessions {
		if live[id] == nil {
			delete(l.sessions, id) // closed: timed out, deleted by its client, or never initialized
		}
	}
	var victim string
	if len(l.sessions)+l.opening >= l.max {
		var oldest time.Time
		for id, u := range l.sessions {
			if u.inFlight == 0 && (victim == "" || u.last.Before(oldest)) {
				victim, oldest = id, u.last
			}
		}
		if victim == "" {
			l.mu.Unlock()
			refuseSession(w, r, l.max)
			return false
		}
		delete(l.sessions, victim)
		l.log.Info("closed the MCP session idle longest to open another", "sessions", l.max, "idle_s", time.Since(oldest).Round(time.Second).Seconds())
	}
	l.opening++
	l.mu.Unlock()
	if ss := live[victim]; ss != nil {
		// Close waits for the session's requests in flight: one its client sent just now
		// ends first, and the new session does not wait for it.
		go ss.Close()
	}
	return true
}

// begin and end count a POST of session id in flight; a session this handler does not know
// (closed, or not opened here) is left to the SDK, which answers 404.
func (l *sessionLimit) begin(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.sessions[id]; u != nil {
		u.inFlight++
		u.last = time.Now()
	}
}

func (l *sessionLimit) end(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.sessions[id]; u != nil && u.inFlight > 0 {
		u.inFlight--
		u.last = time.Now()
	}
}

// live is the number of sessions the handler counts, and of the server's sessions.
func (l *sessionLimit) live() (counted, open int) {
	for range l.server.Sessions() {
		open++
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sessions) + l.opening, open
}

// refuseSession answers a request for a new session when every session is busy: 503 with
// Retry-After, and a JSON-RPC error that says why and what to do.
func refuseSession(w http.ResponseWriter, r *http.Request, max int) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if json.Unmarshal(bytes.TrimSpace(body), &req) != nil || len(req.ID) == 0 {
		req.ID = json.RawMessage("null")
	}
	msg := fmt.Sprintf("the server has its most MCP sessions (%d), each with a request in flight; try again when a call has ended, or start the server with a higher --mcp-sessions", max)
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32000, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(1))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(append(resp, '\n'))
}

// sessionWriter is the ResponseWriter of a request that may open a session: when the SDK
// answers with the new session's id, the session is counted (with this request in flight),
// no longer as opening.
type sessionWriter struct {
	http.ResponseWriter
	l      *sessionLimit
	id     string
	looked bool
}

func (sw *sessionWriter) opened() {
	if sw.looked {
		return
	}
	sw.looked = true
	id := sw.Header().Get(sessionHeader)
	sw.l.mu.Lock()
	defer sw.l.mu.Unlock()
	sw.l.opening--
	if id != "" {
		sw.id = id
		sw.l.sessions[id] = &sessionUse{inFlight: 1, last: time.Now()}
	}
}

// done ends the request: the session it opened is idle from now.
func (sw *sessionWriter) done() {
	sw.opened()
	if sw.id != "" {
		sw.l.end(sw.id)
	}
}

func (sw *sessionWriter) WriteHeader(status int) {
	sw.opened()
	sw.ResponseWriter.WriteHeader(status)
}

func (sw *sessionWriter) Write(p []byte) (int, error) {
	sw.opened()
	return sw.ResponseWriter.Write(p)
}

// Flush passes a flush on: the SDK flushes the events it streams.
func (sw *sessionWriter) Flush() {
	sw.opened()
	_ = http.NewResponseController(sw.ResponseWriter).Flush()
}

// Unwrap is the writer below, for http.ResponseController.
func (sw *sessionWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }
