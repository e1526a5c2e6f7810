package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/service"
)

// route is one method and path the server answers; Path uses ServeMux's {name} wildcards,
// as the OpenAPI document does.
type route struct {
	Method, Path string
	handler      http.HandlerFunc
}

// routeTable is every route, the one list the mux is made from and the OpenAPI document is
// checked against.
func (s *Server) routeTable() []route {
	rs := []route{
		{"POST", "/v1/builds", s.submit},
		{"GET", "/v1/builds", s.list},
		{"GET", "/v1/builds/{id}", s.get},
		{"DELETE", "/v1/builds/{id}", s.delete},
		{"GET", "/v1/builds/{id}/events", s.events},
		{"POST", "/v1/builds/{id}/cancel", s.cancel},
		{"GET", "/v1/builds/{id}/engine", s.file("engine", "application/octet-stream")},
		{"GET", "/v1/builds/{id}/report", s.file("report", "text/html; charset=utf-8")},
		{"GET", "/v1/builds/{id}/trace", s.file("trace", "application/x-ndjson")},
		{"GET", "/v1/openapi.json", s.openAPI},
		{"GET", "/healthz", s.healthz},
		{"GET", "/metrics", s.metrics},
		{"GET", "/", s.page()},
	}
	mcp := s.cfg.MCP
	if mcp == nil {
		mcp = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "this server has no MCP endpoint", "run trtbuild mcp for MCP over stdio")
		})
	}
	for _, m := range []string{"POST", "GET", "DELETE"} {
		rs = append(rs, route{m, "/mcp", mcp.ServeHTTP})
	}
	return rs
}

// mux routes the table. A path's other methods get 405 with Allow, paths under /v1/ that are
// no route 404, both as JSON errors. "/" is a subtree: the page's GETs (/static/...).
func (s *Server) mux() *http.ServeMux {
	mux := http.NewServeMux()
	allow := map[string][]string{}
	var page http.HandlerFunc
	for _, rt := range s.routes {
		if rt.Path == "/" {
			page = rt.handler // below: a pattern "GET /" would conflict with "/v1/"
			continue
		}
		mux.HandleFunc(rt.Method+" "+rt.Path, rt.handler)
		allow[rt.Path] = append(allow[rt.Path], rt.Method)
	}
	for p, methods := range allow {
		mux.HandleFunc(p, methodNotAllowed(methods))
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no API route "+quoteHeader(r.URL.Path), "see GET /v1/openapi.json for the routes")
	})
	notAllowed := methodNotAllowed([]string{"GET"})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			notAllowed(w, r)
			return
		}
		page(w, r)
	})
	return mux
}

// methodNotAllowed answers 405 with the methods the path takes (GET's HEAD too).
func methodNotAllowed(methods []string) http.HandlerFunc {
	list := append([]string(nil), methods...)
	for _, m := range methods {
		if m == "GET" {
			list = append(list, "HEAD")
		}
	}
	sort.Strings(list)
	allow := strings.Join(list, ", ")
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not a method of "+quoteHeader(r.URL.Path), "use "+allow)
	}
}

// page is the web page's handler, or a 404 when the server has none.
func (s *Server) page() http.HandlerFunc {
	if s.cfg.Page == nil {
		return func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "this server has no web page", "use the API: GET /v1/openapi.json")
		}
	}
	return s.cfg.Page(s.pageToken).ServeHTTP
}

// submitBody is POST /v1/builds's body.
type submitBody struct {
	Model   string                     `json:"model"`
	Options map[string]json.RawMessage `json:"options"`
}

const submitExample = `send {"model": "path/in/the/model/root.onnx", "options": {"backend": "sim"}}`

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down and takes no new builds", "submit it to the server once it has restarted")
		return
	}
	var body submitBody
	if !decodeBody(w, r, &body, submitExample) {
		return
	}
	if body.Model == "" {
		writeError(w, http.StatusBadRequest, `the request names no "model"`, submitExample)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	snap, created, err := s.m.Submit(service.Request{Model: body.Model, Options: body.Options, IdempotencyKey: key})
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/builds/"+snap.ID)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, snap)
}

// decodeBody reads r's body, one JSON object, into v: no unknown fields, nothing after it.
// A bad body is answered (400, or 413 over the limit) and decodeBody returns false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, example string) bool {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "the request body is over 1 MiB", "send a smaller request")
		} else {
			writeError(w, http.StatusBadRequest, "reading the request body: "+err.Error(), "send the whole body")
		}
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "the request body is not the JSON object expected: "+jsonProblem(err, data), example)
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "the request body holds more than one JSON value", example)
		return false
	}
	return true
}

// jsonProblem says what is wrong with a body encoding/json refused, with the byte offset.
func jsonProblem(err error, data []byte) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "it is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends in the middle"
	case errors.As(err, &syn):
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("%q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
		}
		return fmt.Sprintf("it must be an object, not %s", typ.Value)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return "unknown field " + f + ` (the fields are "model" and "options"; build options go inside "options")`
	}
	return msg
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "bool":
		return "true or false"
	}
	return goKind
}

// maxList is the most builds one list answers: a whole history of ten thousand at once.
const maxList = 10000

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state != "" && !contains(service.States, state) {
		writeError(w, http.StatusBadRequest, "state "+quoteHeader(state)+" is not a build state", "use one of "+strings.Join(service.States, ", "))
		return
	}
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxList {
			writeError(w, http.StatusBadRequest, "limit "+quoteHeader(v)+" is not a number from 1 to "+strconv.Itoa(maxList), "give ?limit=100, say")
			return
		}
		limit = n
	}
	before := q.Get("before")
	if before != "" {
		if _, ok := s.m.Get(before); !ok {
			writeError(w, http.StatusBadRequest, "before "+quoteHeader(before)+" names no build", "give the id of the last build of the page before")
			return
		}
	}
	// An ended build's snapshot is encoded once (Snapshot.AppendJSON): a list of thousands is
	// mostly copied, not encoded again.
	builds := s.m.List(state, limit, before)
	buf := make([]byte, 0, 64+700*len(builds))
	buf = append(buf, `{"builds":[`...)
	for i, b := range builds {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = b.AppendJSON(buf)
	}
	buf = append(buf, "]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	snap, ok := s.m.Get(r.PathValue("id"))
	if !ok {
		s.writeServiceError(w, r, service.ErrNotFound)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// delete removes an ended build, its files and its record: 204; a queued or running one is
// 409 (cancel it first).
func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	if err := s.m.Delete(r.PathValue("id")); err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cancelBody is POST .../cancel's optional body.
type cancelBody struct {
	Hard *bool `json:"hard"`
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	hard := false
	if v := r.URL.Query().Get("hard"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "hard="+quoteHeader(v)+" is not true or false", "POST /v1/builds/{id}/cancel?hard=true stops the build at once")
			return
		}
		hard = b
	}
	if r.ContentLength != 0 {
		var body cancelBody
		if !decodeBody(w, r, &body, `send no body, or {"hard": true}`) {
			return
		}
		if body.Hard != nil {
			hard = hard || *body.Hard
		}
	}
	snap, err := s.m.Cancel(r.PathValue("id"), hard)
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, snap)
}

// file serves one of a build's files (kind engine, report or trace) as contentType; the
// engine with its build key as ETag, so that a client with it gets 304.
func (s *Server) file(kind, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		snap, ok := s.m.Get(id)
		if !ok {
			s.writeServiceError(w, r, service.ErrNotFound)
			return
		}
		f, err := s.m.File(id, kind)
		if err != nil {
			var gone *service.GoneError
			if errors.As(err, &gone) {
				writeError(w, http.StatusGone, gone.Problem, gone.Hint)
				return
			}
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, service.ErrNotFound) {
				writeError(w, http.StatusNotFound, "build "+quoteHeader(id)+" has no "+kind+" (it is "+snap.State+")",
					"a build's "+kind+" is there once it has ended with one; GET /v1/builds/"+id+" says its state")
				return
			}
			s.writeServiceError(w, r, err)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			s.writeServiceError(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		switch kind {
		case "engine":
			if snap.Key != "" {
				h.Set("ETag", `"`+snap.Key+`"`)
			}
			h.Set("Content-Disposition", `attachment; filename="`+downloadName(snap.Model, id)+`"`)
		case "report":
			// The report runs in an origin of its own: its scripts cannot call this API with the
			// browser's session.
			h.Set("Content-Security-Policy", "sandbox allow-scripts")
		}
		http.ServeContent(w, r, "", st.ModTime(), f)
	}
}

// downloadName is the engine's file name for a download: the model's, with .engine.
func downloadName(model, id string) string {
	base := strings.TrimSuffix(path.Base(strings.ReplaceAll(model, `\`, "/")), path.Ext(model))
	ok := base != "" && base != "." && base != "/"
	for _, c := range base {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			ok = false
		}
	}
	if !ok {
		base = id
	}
	return base + ".engine"
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "draining\n")
		return
	}
	io.WriteString(w, "ok\n")
}
