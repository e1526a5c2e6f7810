// Package webui is the web page of trtbuild serve: one HTML page, a script and a style sheet,
// embedded in the binary, with which a person submits builds through the server's HTTP API
// (POST /v1/builds), sees the list of builds (GET /v1/builds), and follows one build's live
// phase tree from its event stream (GET /v1/builds/<id>/events), stops it, and opens its
// engine, report and trace.
//
// The page loads nothing from anywhere else and runs under a Content-Security-Policy that
// allows scripts, styles and connections to the server's own origin only, with no inline
// script or style. Its POST requests carry the page token that Handler writes into the page's
// <meta name="trtbuild-token"> tag, in the X-Trtbuild-Token header, which is how the server
// tells its own page from another site's form. The page draws every name that comes from a
// model or a build as text, never as HTML.
//
// Handler serves the page only; the caller mounts the API routes beside it.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"time"
)

// ContentSecurityPolicy is the Content-Security-Policy header of every response of Handler:
// the page may load scripts, styles and images from its own origin only, connect only to it,
// run no inline script or style, and be framed by no page.
const ContentSecurityPolicy = "default-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

//go:embed page
var pageFiles embed.FS

// indexTemplate is the page; its one value is the page token, which html/template escapes for
// the attribute it stands in.
var indexTemplate = template.Must(template.ParseFS(pageFiles, "page/index.html"))

// staticFiles are the files served under /static/: the URL path, the embedded file and its
// content type.
var staticFiles = []struct{ path, file, contentType string }{
	{"/static/app.js", "page/app.js", "text/javascript; charset=utf-8"},
	{"/static/app.css", "page/app.css", "text/css; charset=utf-8"},
}

// asset is one response body Handler serves.
type asset struct {
	body         []byte
	contentType  string
	cacheControl string
	etag         string // "" for none
}

type handler struct {
	assets map[string]asset // by URL path
}

// Handler returns the handler of the web page: GET / is the page with pageToken in its
// <meta name="trtbuild-token"> tag, GET /static/app.js and /static/app.css its script and
// style sheet. Every other path is 404 and every method but GET and HEAD is 405, each with a
// JSON {"error", "hint"} body as the API's errors have. Every response carries the
// Content-Security-Policy above, X-Content-Type-Options: nosniff and Referrer-Policy:
// no-referrer; the page itself is never cached (its token changes with each server process),
// and the script and style sheet are revalidated by their ETag.
func Handler(pageToken string) http.Handler {
	var page bytes.Buffer
	if err := indexTemplate.Execute(&page, pageToken); err != nil {
		// The template is embedded and takes one string: it cannot fail but by a change to it.
		panic(fmt.Sprintf("webui: rendering the embedded index.html: %v", err))
	}
	h := &handler{assets: map[string]asset{
		"/": {body: page.Bytes(), contentType: "text/html; charset=utf-8", cacheControl: "no-store"},
	}}
	for _, f := range staticFiles {
		body, err := pageFiles.ReadFile(f.file)
		if err != nil {
			panic(fmt.Sprintf("webui: reading the embedded %s: %v", f.file, err))
		}
		sum := sha256.Sum256(body)
		h.assets[f.path] = asset{
			body:         body,
			contentType:  f.contentType,
			cacheControl: "no-cache",
			etag:         `"` + hex.EncodeToString(sum[:8]) + `"`,
		}
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")

	a, ok := h.assets[r.URL.Path]
	if !ok {
		writeError(w, http.StatusNotFound,
			fmt.Sprintf("there is nothing at %s", r.URL.Path),
			"the web page is at /, the API under /v1/ (GET /v1/openapi.json describes it)")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed,
			fmt.Sprintf("%s %s is not allowed: the web page's files are only read", r.Method, r.URL.Path),
			"use GET or HEAD")
		return
	}
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Cache-Control", a.cacheControl)
	if a.etag != "" {
		hdr.Set("ETag", a.etag)
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// writeError writes the API's error shape, {"error": "...", "hint": "..."}.
func writeError(w http.ResponseWriter, status int, problem, hint string) {
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
		Hint  string `json:"hint"`
	}{problem, hint})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
