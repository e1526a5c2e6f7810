package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
)

// maxWhy is how much of an error response's body logErrors keeps to say why.
const maxWhy = 512

// logErrors logs each request answered with an error status (400 and above), one record after
// the answer: the status, method, path (never the query, which may hold the token), the client
// and why, the error the client was sent. 5xx are errors, the rest warnings. Answers that
// succeed, and the frames of event streams, are not logged.
func (s *Server) logErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status < 400 {
			return
		}
		level := slog.LevelWarn
		if rec.status >= 500 {
			level = slog.LevelError
		}
		p := s.peerFrom(r)
		attrs := []slog.Attr{slog.Int("status", rec.status), slog.String("method", r.Method), slog.String("path", r.URL.Path)}
		if p.addr.IsValid() {
			attrs = append(attrs, slog.String("client", p.addr.String()))
		}
		attrs = append(attrs, slog.String("error", rec.why()))
		s.log.LogAttrs(r.Context(), level, "request refused", attrs...)
	})
}

// statusRecorder is a ResponseWriter that keeps the status, and the start of an error's body.
type statusRecorder struct {
	http.ResponseWriter
	status int
	body   []byte // the first maxWhy bytes of an error's body
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.status >= 400 && len(r.body) < maxWhy {
		r.body = append(r.body, p[:min(len(p), maxWhy-len(r.body))]...)
	}
	return r.ResponseWriter.Write(p)
}

// Flush passes a flush on: event streams and the MCP handler flush what they write.
func (r *statusRecorder) Flush() {
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap is the writer below, for http.ResponseController.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// why is the error the body says: the API's {"error": …}, a JSON-RPC error's message, or
// the first line of a text body.
func (r *statusRecorder) why() string {
	body := bytes.TrimSpace(r.body)
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var text string
		if json.Unmarshal(e.Error, &text) == nil {
			return text
		}
		var rpc struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &rpc) == nil && rpc.Message != "" {
			return rpc.Message
		}
	}
	line, _, _ := strings.Cut(string(body), "\n")
	return strings.TrimSpace(line)
}
