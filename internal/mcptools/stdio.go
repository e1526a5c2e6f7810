package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is an MCP session on a reader and a writer (stdin and stdout of `trtbuild mcp`) that
// can end without losing a response: the SDK drops the response of a call that returns after
// the session began to close, so a server that ends on a signal first lets every call in
// flight answer (their builds cancelled), waits with Drain until each answer is written, and
// only then ends the session.
type Stdio struct {
	srv *mcp.Server
	in  io.Reader
	out io.Writer

	wmu sync.Mutex // one message written at a time: the SDK's and the parse errors

	mu      sync.Mutex
	pending int           // calls received whose response is not written yet
	idle    chan struct{} // closed while pending is 0; replaced when a call comes
}

// NewStdio prepares srv's session on in and out.
func NewStdio(srv *mcp.Server, in io.Reader, out io.Writer) *Stdio {
	st := &Stdio{srv: srv, in: in, out: out, idle: make(chan struct{})}
	close(st.idle)
	srv.AddReceivingMiddleware(st.count)
	return st
}

// Run serves the session until in ends (the client went away: the calls in flight are
// cancelled, and with them their builds) or ctx ends.
func (st *Stdio) Run(ctx context.Context) error {
	return st.srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(&lineFilter{st: st, in: bufio.NewReader(st.in)}), Writer: responseCounter{st}})
}

// The JSON-RPC answers to a line that is not JSON, and to one that is no JSON-RPC message.
var (
	parseError     = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not one JSON value (MCP over stdio sends each message on one line)"}}` + "\n")
	invalidRequest = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the line is not a JSON-RPC 2.0 message"}}` + "\n")
)

// isMessage reports whether msg, valid JSON, is a JSON-RPC message or a batch of them.
func isMessage(msg []byte) bool {
	if msg[0] != '[' {
		_, err := jsonrpc.DecodeMessage(msg)
		return err == nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(msg, &batch) != nil || len(batch) == 0 {
		return false
	}
	for _, m := range batch {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			return false
		}
	}
	return true
}

// lineFilter passes the session's input on line by line (MCP over stdio sends each message
// on a line of its own), answering a line that is not JSON, or not a JSON-RPC message, with
// an error instead: the SDK reads one stream of JSON values, and one bad line would end the
// session (and with it every build in flight).
type lineFilter struct {
	st   *Stdio
	in   *bufio.Reader
	rest []byte // the part of the current line not read yet
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		line, err := f.in.ReadBytes('\n')
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			answer := parseError
			if json.Valid(msg) {
				answer = invalidRequest
				if isMessage(msg) {
					answer, f.rest = nil, append(msg, '\n')
				}
			}
			if answer != nil {
				if werr := f.st.writeRaw(answer); werr != nil {
					return 0, werr
				}
			}
		}
		if err != nil {
			if len(f.rest) > 0 && errors.Is(err, io.EOF) {
				break // the last line, then EOF on the next Read
			}
			return 0, err
		}
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// writeRaw writes a message the SDK did not make (it is no response to a call counted).
func (st *Stdio) writeRaw(p []byte) error {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	_, err := st.out.Write(p)
	return err
}

// Drain waits until every call received has written its response, or ctx ends.
func (st *Stdio) Drain(ctx context.Context) {
	st.mu.Lock()
	idle := st.idle
	st.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// count counts the calls (requests with an ID: every method but notifications).
func (st *Stdio) count(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !strings.HasPrefix(method, "notifications/") {
			st.add(1)
		}
		return next(ctx, method, req)
	}
}

func (st *Stdio) add(d int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	was := st.pending
	// A response to a request the SDK refused before any handler saw it was never counted.
	st.pending = max(st.pending+d, 0)
	switch {
	case was == 0 && st.pending > 0:
		st.idle = make(chan struct{})
	case was > 0 && st.pending == 0:
		close(st.idle)
	}
}

// responseCounter is the session's writer: each message written that is a response (an id
// and no method) ends a call.
type responseCounter struct{ st *Stdio }

func (w responseCounter) Write(p []byte) (int, error) {
	w.st.wmu.Lock()
	n, err := w.st.out.Write(p)
	w.st.wmu.Unlock()
	if err == nil {
		if r := responses(p); r > 0 {
			w.st.add(-r)
		}
	}
	return n, err
}

func (responseCounter) Close() error { return nil } // stdout stays open for the exit

// responses counts the responses in one written message (or batch of them).
func responses(p []byte) int {
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	isResponse := func(m msg) bool { return len(m.ID) > 0 && m.Method == "" }
	p = bytes.TrimSpace(p)
	if len(p) > 0 && p[0] == '[' {
		var batch []msg
		if json.Unmarshal(p, &batch) != nil {
			return 0
		}
		n := 0
		for _, m := range batch {
			if isResponse(m) {
				n++
			}
		}
		return n
	}
	var m msg
	if json.Unmarshal(p, &m) != nil || !isResponse(m) {
		return 0
	}
	return 1
}
