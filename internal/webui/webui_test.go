package webui

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// serve serves one request through Handler(token).
func serve(t *testing.T, token, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(token).ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

var metaToken = regexp.MustCompile(`<meta name="trtbuild-token" content="([^"]*)">`)

func TestIndexCarriesTheTokenEscaped(t *testing.T) {
	tests := []struct {
		name, token, attr string
	}{
		{"hex", "0123abcd", "0123abcd"},
		{"html characters", `a"<>&'b`, "a&#34;&lt;&gt;&amp;&#39;b"},
		{"markup", `"><script>alert(1)</script>`, "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := serve(t, tt.token, http.MethodGet, "/")
			page := body(t, res)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET /: status %d, want 200", res.StatusCode)
			}
			m := metaToken.FindAllStringSubmatch(page, -1)
			if len(m) != 1 {
				t.Fatalf("GET /: %d trtbuild-token meta tags, want 1:\n%s", len(m), page)
			}
			if m[0][1] != tt.attr {
				t.Errorf("meta content = %q, want %q", m[0][1], tt.attr)
			}
			if got := html.UnescapeString(m[0][1]); got != tt.token {
				t.Errorf("meta content unescapes to %q, want the token %q", got, tt.token)
			}
			if strings.Count(page, "<script") != 1 {
				t.Errorf("the token added a script element:\n%s", page)
			}
		})
	}
}

func TestResponses(t *testing.T) {
	tests := []struct {
		method, path string
		status       int
		contentType  string
		cache        string
		contains     string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", "no-store", `<ul id="tree"`},
		{"HEAD", "/", 200, "text/html; charset=utf-8", "no-store", ""},
		{"GET", "/static/app.js", 200, "text/javascript; charset=utf-8", "no-cache", "new EventSource("},
		{"GET", "/static/app.css", 200, "text/css; charset=utf-8", "no-cache", "prefers-color-scheme"},
		{"HEAD", "/static/app.css", 200, "text/css; charset=utf-8", "no-cache", ""},
		{"GET", "/index.html", 404, "application/json", "no-store", `"error":"there is nothing at /index.html"`},
		{"GET", "/static/", 404, "application/json", "no-store", `"hint":`},
		{"GET", "/static/index.html", 404, "application/json", "no-store", `"error"`},
		{"GET", "/static/app.js/", 404, "application/json", "no-store", `"error"`},
		{"GET", "/v1/builds", 404, "application/json", "no-store", `"error"`},
		{"GET", "/page/app.js", 404, "application/json", "no-store", `"error"`},
		{"POST", "/", 405, "application/json", "no-store", `"error":"POST / is not allowed`},
		{"PUT", "/static/app.js", 405, "application/json", "no-store", `"hint":"use GET or HEAD"`},
		{"DELETE", "/static/app.css", 405, "application/json", "no-store", `"error"`},
		{"POST", "/nothing", 404, "application/json", "no-store", `"error"`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			res := serve(t, "tok", tt.method, tt.path)
			b := body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (body %q)", res.StatusCode, tt.status, b)
			}
			h := res.Header
			for name, want := range map[string]string{
				"Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
				"Content-Type":            tt.contentType,
				"Cache-Control":           tt.cache,
			} {
				if got := h.Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if tt.status == 405 && h.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q, want %q", h.Get("Allow"), "GET, HEAD")
			}
			if tt.status >= 400 {
				var e struct{ Error, Hint string }
				if err := json.Unmarshal([]byte(b), &e); err != nil || e.Error == "" || e.Hint == "" {
					t.Errorf("error body %q is not {\"error\", \"hint\"} (%v)", b, err)
				}
			}
			if tt.method == "HEAD" && b != "" {
				t.Errorf("HEAD has a body of %d bytes", len(b))
			}
			if !strings.Contains(b, tt.contains) {
				t.Errorf("body does not contain %q:\n%s", tt.contains, b)
			}
		})
	}
}

func TestStaticFilesRevalidateByETag(t *testing.T) {
	h := Handler("tok")
	for _, path := range []string{"/static/app.js", "/static/app.css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		etag := rec.Header().Get("ETag")
		if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(etag) {
			t.Fatalf("GET %s: ETag %q, want a quoted hash", path, etag)
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("If-None-Match", etag)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %s: status %d, want 304", path, etag, rec.Code)
		}
	}
}

// TestPageHasNoInlineCodeOrExternalAssets checks the page against its own CSP: no inline script,
// style or event handler attribute, every asset served by Handler, and no script that parses
// text as HTML.
func TestPageHasNoInlineCodeOrExternalAssets(t *testing.T) {
	page := body(t, serve(t, "tok", "GET", "/"))
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script[^>]*>[^<]`), // a script with a body
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`(?i)(src|href)="(https?:)?//`),
		regexp.MustCompile(`(?i)javascript:`),
	} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("index.html has %q (matches %s)", m, bad)
		}
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
		if !strings.Contains(tag, ` src="/static/`) {
			t.Errorf("index.html has the script %s, which is not a file of /static/", tag)
		}
	}
	refs := regexp.MustCompile(`(?:src|href)="(/[^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 2 {
		t.Fatalf("index.html refers to %d local files, want the script and the style sheet", len(refs))
	}
	for _, ref := range refs {
		if res := serve(t, "tok", "GET", ref[1]); res.StatusCode != http.StatusOK {
			t.Errorf("index.html refers to %s, which Handler answers with %d", ref[1], res.StatusCode)
		}
	}
	js := body(t, serve(t, "tok", "GET", "/static/app.js"))
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(js, bad) {
			t.Errorf("app.js uses %s; the page must set text with textContent", bad)
		}
	}
}
