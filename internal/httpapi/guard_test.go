package httpapi

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/progress"
)

func TestRefusedRequests(t *testing.T) {
	ts := newTestServer(t)
	outside := filepath.Join(t.TempDir(), "outside.onnx")
	data, _ := os.ReadFile(filepath.Join(ts.modelRoot, "convnet.onnx"))
	os.WriteFile(outside, data, 0o644)
	if err := os.Symlink(outside, filepath.Join(ts.modelRoot, "link.onnx")); err != nil {
		t.Fatal(err)
	}
	origin := "http://" + ts.addr
	build := `{"model": "convnet.onnx", "options": {"backend": "sim"}}`
	big := `{"model": "convnet.onnx", "options": {"backend": "sim", "shapes": "` + strings.Repeat("x", 1<<20) + `"}}`
	tests := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		want                     string // in the error
	}{
		{"foreign Host", "GET", "/v1/builds", "", []string{"Host", "evil.example:8470"}, 403, "is not this server's address"},
		{"foreign Host on healthz", "GET", "/healthz", "", []string{"Host", "rebound.example"}, 403, "is not this server's address"},
		{"cross-site Origin", "POST", "/v1/builds", build, []string{"Origin", "http://evil.example"}, 403, "Origin"},
		{"cross-site GET", "GET", "/v1/builds", "", []string{"Origin", "http://evil.example"}, 403, "Origin"},
		{"same origin without the page token", "POST", "/v1/builds", build, []string{"Origin", origin}, 403, "page's token"},
		{"cross-site fetch without Origin", "POST", "/v1/builds", build, []string{"Sec-Fetch-Site", "cross-site"}, 403, "page's token"},
		{"wrong page token", "POST", "/v1/builds", build, []string{"Origin", origin, PageTokenHeader, "00"}, 403, "page's token"},
		{"form body", "POST", "/v1/builds", "model=x", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "not JSON"},
		{"text body", "POST", "/v1/builds/x/cancel", "{}", []string{"Content-Type", "text/plain"}, 415, "not JSON"},
		{"oversized body", "POST", "/v1/builds", big, nil, 413, "over 1 MiB"},
		{"malformed JSON", "POST", "/v1/builds", `{"model": "convnet.onnx",}`, nil, 400, "not the JSON object expected"},
		{"not an object", "POST", "/v1/builds", `["convnet.onnx"]`, nil, 400, "must be an object"},
		{"empty body", "POST", "/v1/builds", ` `, nil, 400, "empty"},
		{"two values", "POST", "/v1/builds", `{"model": "convnet.onnx"} {}`, nil, 400, "more than one JSON value"},
		{"unknown field", "POST", "/v1/builds", `{"model": "convnet.onnx", "fp16": true}`, nil, 400, `unknown field "fp16"`},
		{"no model", "POST", "/v1/builds", `{"options": {}}`, nil, 400, `no "model"`},
		{"..", "POST", "/v1/builds", `{"model": "../outside.onnx"}`, nil, 400, "leads out of the model root"},
		{"absolute path", "POST", "/v1/builds", `{"model": "` + outside + `"}`, nil, 400, "absolute path"},
		{"link out of the root", "POST", "/v1/builds", `{"model": "link.onnx", "options": {"backend": "sim"}}`, nil, 400, "link"},
		{"missing model", "POST", "/v1/builds", `{"model": "nope.onnx"}`, nil, 404, "no model"},
		{"unknown option", "POST", "/v1/builds", `{"model": "convnet.onnx", "options": {"fp17": true}}`, nil, 400, "fp17"},
		{"refused option", "POST", "/v1/builds", `{"model": "convnet.onnx", "options": {"save-engine": "/etc/x"}}`, nil, 400, "save-engine"},
		{"idempotency key with a space", "POST", "/v1/builds", build, []string{"Idempotency-Key", "a b"}, 400, "idempotency key"},
		{"wrong method", "DELETE", "/v1/builds", "", nil, 405, "not a method"},
		{"wrong method on the page", "POST", "/", "{}", nil, 405, "not a method"},
		{"no such route", "GET", "/v1/nothing", "", nil, 404, "no API route"},
		{"no such build", "GET", "/v1/builds/nope", "", nil, 404, "no build"},
		{"no such build's events", "GET", "/v1/builds/nope/events", "", nil, 404, "no build"},
		{"cancel of no build", "POST", "/v1/builds/nope/cancel", "", nil, 404, "no build"},
		{"bad state", "GET", "/v1/builds?state=done", "", nil, 400, "not a build state"},
		{"bad limit", "GET", "/v1/builds?limit=0", "", nil, 400, "limit"},
		{"bad hard", "POST", "/v1/builds/nope/cancel?hard=yes", "", nil, 400, "hard"},
		{"no page", "GET", "/", "", nil, 404, "no web page"},
		{"no MCP", "POST", "/mcp", "{}", nil, 404, "no MCP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.do(t, tt.method, tt.path, tt.body, tt.header...)
			if resp.StatusCode != tt.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tt.status)
			}
			e := errorBody(t, body)
			if !strings.Contains(e.Error, tt.want) {
				t.Fatalf("error %q lacks %q", e.Error, tt.want)
			}
			if e.Hint == "" && tt.status != 404 && tt.name != "refused option" {
				t.Errorf("no hint: %s", body)
			}
			if tt.status == 405 && resp.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
	// The page's own POST, with its token, goes through.
	resp, body := ts.do(t, "POST", "/v1/builds", build, "Origin", origin, PageTokenHeader, ts.PageToken(), "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode != 201 {
		t.Fatalf("the page's POST: %d %s", resp.StatusCode, body)
	}
	resp, _ = ts.do(t, "GET", "/healthz", "", "Host", "localhost:"+ts.addr[strings.LastIndex(ts.addr, ":")+1:])
	if resp.StatusCode != 200 {
		t.Fatalf("Host localhost:PORT: %d", resp.StatusCode)
	}
}

// TestImpossibleShapesOverHTTP: a shape TensorRT cannot build for is a 400 whose error and hint
// are the preflight's one line, as the CLI prints it, and the build never starts.
func TestImpossibleShapesOverHTTP(t *testing.T) {
	ts := newTestServer(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "dynamic_batch.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ts.modelRoot, "dynamic_batch.onnx"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ shapes, want string }{
		{"images:0x3x64x64", `input "images": the shape 0x3x64x64 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; give sizes of 1 or more`},
		{"images:9223372036854775807x3x64x64", `input "images": the shape 9223372036854775807x3x64x64 is more than 2^63-1 elements, more than TensorRT's 64-bit sizes can count; check the shape flags for a typo`},
	} {
		t.Run(tt.shapes, func(t *testing.T) {
			resp, body := ts.do(t, "POST", "/v1/builds", `{"model": "dynamic_batch.onnx", "options": {"backend": "sim", "shapes": "`+tt.shapes+`"}}`)
			if resp.StatusCode != 400 {
				t.Fatalf("%d %s, want 400", resp.StatusCode, body)
			}
			if e := errorBody(t, body); e.Error+"; "+e.Hint != tt.want {
				t.Errorf("error %q, hint %q; want %q", e.Error, e.Hint, tt.want)
			}
		})
	}
	resp, body := ts.do(t, "GET", "/v1/builds", "")
	if resp.StatusCode != 200 || strings.Contains(string(body), "dynamic_batch") {
		t.Errorf("the refused builds are listed: %d %s", resp.StatusCode, body)
	}
}

func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	good := file("token", "s3cret-token\n", 0o600)
	for _, tt := range []struct {
		name, addr, token, want string
	}{
		{"non-loopback without a token", "0.0.0.0:0", "", "--token-file"},
		{"no host", ":8470", "", "not a loopback address"},
		{"readable by others", "127.0.0.1:0", file("open", "tok\n", 0o644), "chmod 600"},
		{"empty", "127.0.0.1:0", file("empty", "\n", 0o600), "empty"},
		{"two words", "127.0.0.1:0", file("words", "a b\n", 0o600), "one word"},
		{"missing", "127.0.0.1:0", filepath.Join(dir, "none"), "no such file"},
		{"a folder", "127.0.0.1:0", dir, "not a regular file"},
		{"bad address", "localhost", "", "not host:port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Config{Addr: tt.addr, TokenFile: tt.token, Manager: newTestServer(t).m})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("New: %v, want one line with %q", err, tt.want)
			}
		})
	}

	ts := newTestServer(t, withConfig(func(c *Config) { c.TokenFile = good }))
	for _, tt := range []struct {
		name   string
		header []string
		status int
	}{
		{"no token", nil, 401},
		{"wrong token", []string{"Authorization", "Bearer s3cret-tokeN"}, 401},
		{"basic auth", []string{"Authorization", "Basic czNjcmV0LXRva2Vu"}, 401},
		{"bearer", []string{"Authorization", "Bearer s3cret-token"}, 200},
		{"wrong cookie", []string{"Cookie", SessionCookie + "=s3cret-token"}, 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.do(t, "GET", "/v1/builds", "", tt.header...)
			if resp.StatusCode != tt.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tt.status)
			}
		})
	}
	if resp, _ := ts.do(t, "GET", "/healthz", ""); resp.StatusCode != 200 {
		t.Fatalf("healthz needs no token: %d", resp.StatusCode)
	}
	if resp, _ := ts.do(t, "GET", "/metrics", ""); resp.StatusCode != 401 {
		t.Fatalf("metrics without the token: %d", resp.StatusCode)
	}
	// A browser logs in with /?token=: a cookie, and a redirect to /.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(ts.url + "/?token=wrong")
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("/?token=wrong: %v %v", resp.StatusCode, err)
	}
	resp, err = noRedirect.Get(ts.url + "/?token=s3cret-token")
	if err != nil || resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("/?token=TOKEN: %v %v", resp, err)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != SessionCookie || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" || strings.Contains(cookies[0].Value, "s3cret") {
		t.Fatalf("cookie %+v", cookies)
	}
	if resp, body := ts.do(t, "GET", "/v1/builds", "", "Cookie", SessionCookie+"="+cookies[0].Value); resp.StatusCode != 200 {
		t.Fatalf("with the session cookie: %d %s", resp.StatusCode, body)
	}
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	ts := newTestServer(t)
	resp, body := ts.do(t, "GET", "/v1/openapi.json", "")
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Info       struct{ Version string }  `json:"info"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "test" {
		t.Fatalf("openapi %q, version %q", doc.OpenAPI, doc.Info.Version)
	}
	props, _ := doc.Components.Schemas["Options"]["properties"].(map[string]any)
	if props["fp16"] == nil || props["shapes"] == nil || props["profiles"] == nil {
		t.Fatalf("the options schema lacks fp16, shapes or profiles: %v", doc.Components.Schemas["Options"])
	}
	var inDoc, served []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if m == "parameters" {
				continue
			}
			inDoc = append(inDoc, strings.ToUpper(m)+" "+p)
		}
	}
	for _, r := range ts.routes {
		served = append(served, r.Method+" "+r.Path)
	}
	sort.Strings(inDoc)
	sort.Strings(served)
	if strings.Join(inDoc, "\n") != strings.Join(served, "\n") {
		t.Fatalf("the document's routes:\n%s\nthe served routes:\n%s", strings.Join(inDoc, "\n"), strings.Join(served, "\n"))
	}
	// Every route in the document is answered by its handler, not as an unknown route or
	// method.
	wild := regexp.MustCompile(`\{[a-z]+\}`)
	for _, r := range inDoc {
		method, path, _ := strings.Cut(r, " ")
		resp, body := ts.do(t, method, wild.ReplaceAllString(path, "nope"), "")
		if resp.StatusCode == 405 || strings.Contains(string(body), "no API route") {
			t.Errorf("%s: %d %s", r, resp.StatusCode, body)
		}
	}
}

func TestMetricsAndDrain(t *testing.T) {
	ts := newTestServer(t)
	snap := ts.submit(t, fastSim, http.StatusCreated)
	_, events, _ := ts.stream(t, snap.ID, "", nil, nil)
	ts.waitState(t, snap.ID, "succeeded")
	resp, body := ts.do(t, "GET", "/metrics", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	text := string(body)
	for _, want := range []string{
		"# TYPE trtbuild_builds gauge\n", `trtbuild_builds{state="succeeded"} 1` + "\n", `trtbuild_builds{state="running"} 0` + "\n",
		"# TYPE trtbuild_queue_length gauge\ntrtbuild_queue_length 0\n",
		"# TYPE trtbuild_gpu_busy_seconds_total counter\n",
		"# TYPE trtbuild_events_streamed_total counter\ntrtbuild_events_streamed_total " + itoa(len(events)) + "\n",
		"# TYPE trtbuild_sse_clients gauge\ntrtbuild_sse_clients 0\n",
		`trtbuild_info{version="test"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.HasPrefix(line, "# HELP ") && !strings.HasPrefix(line, "# TYPE ") && !regexp.MustCompile(`^trtbuild_[a-z_]+(\{[a-z]+="[^"]*"\})? [0-9.e+-]+$`).MatchString(line) {
			t.Errorf("not a line of the exposition format: %q", line)
		}
	}
	ts.Drain()
	if resp, body := ts.do(t, "GET", "/healthz", ""); resp.StatusCode != 503 || string(body) != "draining\n" {
		t.Fatalf("healthz while draining: %d %q", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "POST", "/v1/builds", `{"model": "convnet.onnx"}`)
	if resp.StatusCode != 503 {
		t.Fatalf("POST while draining: %d %s", resp.StatusCode, body)
	}
	errorBody(t, body)
}

func itoa(n int) string { return jsonInt(n) }

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestOpenAPIWhereIsTheContract: the document's Where schema has every field of the event
// contract's progress.Where, and no other.
func TestOpenAPIWhereIsTheContract(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIFile, &doc); err != nil {
		t.Fatal(err)
	}
	var inDoc, inGo []string
	for name := range doc.Components.Schemas["Where"].Properties {
		inDoc = append(inDoc, name)
	}
	typ := reflect.TypeFor[progress.Where]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		inGo = append(inGo, name)
	}
	sort.Strings(inDoc)
	sort.Strings(inGo)
	if !slices.Equal(inDoc, inGo) {
		t.Errorf("the document's Where has %v, progress.Where %v", inDoc, inGo)
	}
}
