package httpapi

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// port is the test server's port.
func (ts *testServer) port() string { return ts.addr[strings.LastIndex(ts.addr, ":")+1:] }

// TestAllowHost: a bare --allow-host name is that name on any port and without one, as a
// reverse proxy's Host often is; host:port is that port only.
func TestAllowHost(t *testing.T) {
	ts := newTestServer(t, withConfig(func(c *Config) {
		c.AllowHosts = []string{"builds.example.com", "other.example:8443", "[fd00::1]", "Mixed.Example"}
	}))
	for _, tt := range []struct {
		host   string
		status int
	}{
		{"builds.example.com", 200},
		{"builds.example.com:443", 200},
		{"BUILDS.example.com:" + ts.port(), 200},
		{"mixed.example", 200},
		{"other.example:8443", 200},
		{"other.example", 403},
		{"other.example:8444", 403},
		{"[fd00::1]", 200},
		{"[fd00::1]:9000", 200},
		{"evil.example", 403},
		{"builds.example.com.evil.example", 403},
		{"127.0.0.1:" + ts.port(), 200},
		{"127.0.0.1", 403},
	} {
		t.Run(tt.host, func(t *testing.T) {
			resp, body := ts.do(t, "GET", "/healthz", "", "Host", tt.host)
			if resp.StatusCode != tt.status {
				t.Fatalf("Host %s: %d %s, want %d", tt.host, resp.StatusCode, body, tt.status)
			}
		})
	}
}

// TestBadAllowFlags: values of --allow-host, --allow-origin and --trust-proxy that are not
// what they should be are refused in one line that names the flag and shows a good value.
func TestBadAllowFlags(t *testing.T) {
	m := newTestServer(t).m
	for _, tt := range []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"host with a scheme", func(c *Config) { c.AllowHosts = []string{"https://builds.example.com"} }, "--allow-host https://builds.example.com is not a host name or host:port; give the name clients use, e.g. --allow-host builds.example.com"},
		{"host with a path", func(c *Config) { c.AllowHosts = []string{"builds.example.com/ui"} }, "--allow-host"},
		{"empty host", func(c *Config) { c.AllowHosts = []string{""} }, "--allow-host"},
		{"host without its port", func(c *Config) { c.AllowHosts = []string{"builds.example.com:"} }, "--allow-host"},
		{"host with a bad port", func(c *Config) { c.AllowHosts = []string{"builds.example.com:99999"} }, "--allow-host"},
		{"origin without a scheme", func(c *Config) { c.AllowOrigins = []string{"builds.example.com"} }, "--allow-origin builds.example.com is not an origin; give scheme://host[:port] as the browser's address bar shows it, e.g. --allow-origin https://builds.example.com"},
		{"origin with a path", func(c *Config) { c.AllowOrigins = []string{"https://builds.example.com/ui"} }, "--allow-origin"},
		{"origin of another scheme", func(c *Config) { c.AllowOrigins = []string{"ftp://builds.example.com"} }, "--allow-origin"},
		{"null origin", func(c *Config) { c.AllowOrigins = []string{"null"} }, "--allow-origin"},
		{"origin with a user", func(c *Config) { c.AllowOrigins = []string{"https://me@builds.example.com"} }, "--allow-origin"},
		{"proxy name", func(c *Config) { c.TrustProxies = []string{"proxy.example"} }, "--trust-proxy proxy.example is not an IP address or a CIDR prefix; give the reverse proxy's address, e.g. --trust-proxy 127.0.0.1"},
		{"proxy bad prefix", func(c *Config) { c.TrustProxies = []string{"10.0.0.0/33"} }, "--trust-proxy"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Addr: "127.0.0.1:0", Manager: m}
			tt.cfg(&cfg)
			_, err := New(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("New: %v, want one line with %q", err, tt.want)
			}
		})
	}
}

// TestAllowOrigin: a page served through another origin (a reverse proxy's https://NAME) may
// POST once that origin is allowed, in any spelling of it; other origins may not.
func TestAllowOrigin(t *testing.T) {
	ts := newTestServer(t, withConfig(func(c *Config) {
		c.AllowOrigins = []string{"https://builds.example.com", "http://dev.example:8080"}
	}))
	for _, tt := range []struct {
		origin string
		status int // 404 (no such build): past the checks
	}{
		{"https://builds.example.com", 404},
		{"https://builds.example.com:443", 404},
		{"HTTPS://Builds.Example.COM", 404},
		{"http://dev.example:8080", 404},
		{"http://" + ts.addr, 404},
		{"http://builds.example.com", 403},
		{"https://builds.example.com:8443", 403},
		{"https://dev.example:8080", 403},
		{"https://evil.example", 403},
		{"null", 403},
		{"https://" + ts.addr, 403},
	} {
		t.Run(tt.origin, func(t *testing.T) {
			resp, body := ts.do(t, "POST", "/v1/builds/nope/cancel", "", "Origin", tt.origin, PageTokenHeader, ts.PageToken())
			if resp.StatusCode != tt.status {
				t.Fatalf("Origin %s: %d %s, want %d", tt.origin, resp.StatusCode, body, tt.status)
			}
			if tt.status == 403 {
				if e := errorBody(t, body); !strings.Contains(e.Error, "Origin") || !strings.Contains(e.Hint, "--allow-origin") {
					t.Fatalf("error %+v", e)
				}
			}
		})
	}
}

// TestForwardedHeadersIgnoredUntrusted: without --trust-proxy naming the peer, X-Forwarded-*
// change nothing: not the Host checked, not the origin, not the client whose wrong tokens count.
func TestForwardedHeadersIgnoredUntrusted(t *testing.T) {
	for _, tt := range []struct {
		name    string
		proxies []string
	}{
		{"no --trust-proxy", nil},
		{"another proxy trusted", []string{"10.0.0.0/8", "192.0.2.1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, withConfig(func(c *Config) {
				c.AllowHosts = []string{"builds.example.com"}
				c.TrustProxies = tt.proxies
				c.TokenFile = strongToken(t)
			}))
			auth := []string{"Authorization", "Bearer " + testToken}
			// A foreign Host is refused, whatever X-Forwarded-Host says.
			resp, body := ts.do(t, "GET", "/v1/builds", "", append([]string{"Host", "evil.example", "X-Forwarded-Host", "builds.example.com"}, auth...)...)
			if resp.StatusCode != 403 || !strings.Contains(errorBody(t, body).Error, "Host evil.example is not") {
				t.Fatalf("foreign Host with X-Forwarded-Host: %d %s", resp.StatusCode, body)
			}
			// An https origin is not this server's, whatever X-Forwarded-Proto and -Host say.
			resp, body = ts.do(t, "POST", "/v1/builds/nope/cancel", "", append([]string{"Host", "builds.example.com",
				"X-Forwarded-Proto", "https", "X-Forwarded-Host", "builds.example.com", "Origin", "https://builds.example.com", PageTokenHeader, ts.PageToken()}, auth...)...)
			if resp.StatusCode != 403 {
				t.Fatalf("https Origin with X-Forwarded-Proto: %d %s", resp.StatusCode, body)
			}
			// Wrong tokens count for the connection's address, whatever X-Forwarded-For says.
			for i := 0; i < freeFailures; i++ {
				resp, body = ts.do(t, "GET", "/v1/builds", "", "Authorization", "Bearer wrong", "X-Forwarded-For", "203.0.113."+itoa(i+1))
				if resp.StatusCode != 401 {
					t.Fatalf("wrong token %d: %d %s", i+1, resp.StatusCode, body)
				}
			}
			resp, body = ts.do(t, "GET", "/v1/builds", "", "Authorization", "Bearer wrong", "X-Forwarded-For", "203.0.113.99")
			if resp.StatusCode != 429 {
				t.Fatalf("a wrong token beyond %d from one connection address: %d %s, want 429", freeFailures, resp.StatusCode, body)
			}
			// The cookie of a login over plain http is not Secure.
			ts.failures.succeed(mustKey(t, "127.0.0.1"))
			if c := ts.login(t, "X-Forwarded-Proto", "https"); c == nil || c.Secure {
				t.Fatalf("login cookie %+v, want one without Secure", c)
			}
		})
	}
}

// TestTrustedProxy: behind a proxy named by --trust-proxy, its X-Forwarded-Host is the Host
// checked, X-Forwarded-Proto and -Host make the origin the page has (https://NAME), and
// X-Forwarded-For's client is the one whose wrong tokens count; the last value of each is the
// proxy's own.
func TestTrustedProxy(t *testing.T) {
	ts := newTestServer(t, withConfig(func(c *Config) {
		c.AllowHosts = []string{"builds.example.com"}
		c.TrustProxies = []string{"127.0.0.0/8"}
		c.TokenFile = strongToken(t)
	}))
	auth := []string{"Authorization", "Bearer " + testToken}
	proxied := func(extra ...string) []string {
		return append(append([]string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "builds.example.com"}, auth...), extra...)
	}
	for _, tt := range []struct {
		name   string
		header []string
		status int
	}{
		{"the page's POST through the proxy", proxied("Origin", "https://builds.example.com", PageTokenHeader, "PAGE"), 404},
		{"an http origin through an https proxy", proxied("Origin", "http://builds.example.com", PageTokenHeader, "PAGE"), 403},
		{"another origin", proxied("Origin", "https://evil.example", PageTokenHeader, "PAGE"), 403},
		{"a foreign X-Forwarded-Host", append([]string{"X-Forwarded-Host", "evil.example"}, auth...), 403},
		{"the client's X-Forwarded-Host passed on", append([]string{"X-Forwarded-Host", "builds.example.com, evil.example"}, auth...), 403},
		{"the proxy's last X-Forwarded-Host", append([]string{"X-Forwarded-Host", "evil.example, builds.example.com"}, auth...), 404},
		{"no X-Forwarded-Host: the Host", append([]string{"Host", "builds.example.com"}, auth...), 404},
		{"a scheme that is none", append([]string{"X-Forwarded-Proto", "gopher", "X-Forwarded-Host", "builds.example.com", "Origin", "http://builds.example.com", PageTokenHeader, "PAGE"}, auth...), 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := append([]string(nil), tt.header...)
			for i := range h {
				if h[i] == "PAGE" {
					h[i] = ts.PageToken()
				}
			}
			resp, body := ts.do(t, "POST", "/v1/builds/nope/cancel", "", h...)
			if resp.StatusCode != tt.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tt.status)
			}
		})
	}

	// Wrong tokens count for X-Forwarded-For's client: one client shut out, another not, and
	// addresses the client put before the proxy's own change nothing.
	wrong := func(xff string) *http.Response {
		resp, _ := ts.do(t, "GET", "/v1/builds", "", "Authorization", "Bearer wrong", "X-Forwarded-For", xff)
		return resp
	}
	for i := 0; i < freeFailures; i++ {
		if resp := wrong("203.0.113.7"); resp.StatusCode != 401 {
			t.Fatalf("wrong token %d: %d", i+1, resp.StatusCode)
		}
	}
	if resp := wrong("198.51.100.1, 203.0.113.7"); resp.StatusCode != 429 {
		t.Fatalf("client 203.0.113.7 behind a forged first hop: %d, want 429", resp.StatusCode)
	}
	if resp := wrong("203.0.113.8"); resp.StatusCode != 401 {
		t.Fatalf("another client: %d, want 401", resp.StatusCode)
	}
	if resp := wrong("203.0.113.7, 127.0.0.5"); resp.StatusCode != 429 {
		t.Fatalf("client 203.0.113.7 behind two trusted proxies: %d, want 429", resp.StatusCode)
	}
	// A login through the https proxy sets a Secure cookie.
	if c := ts.login(t, "X-Forwarded-Proto", "https", "X-Forwarded-For", "203.0.113.9"); c == nil || !c.Secure {
		t.Fatalf("login cookie through an https proxy %+v, want Secure", c)
	}
}

// testToken is a token strong enough for any address.
const testToken = "9f2c4e8a1b7d3f6059e1c2a4b8d7f3e6019a5c7e2b4d6f8a1c3e5a7b9d0f2e4c"

// strongToken is a token file holding testToken.
func strongToken(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// login opens /?token=testToken and returns the session cookie it sets (nil: none).
func (ts *testServer) login(t *testing.T, header ...string) *http.Cookie {
	t.Helper()
	req, err := http.NewRequest("GET", ts.url+"/?token="+testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			return c
		}
	}
	return nil
}

// mustKey is the failures' client of address a.
func mustKey(t *testing.T, a string) netip.Prefix {
	t.Helper()
	k, ok := clientKey(netip.MustParseAddr(a))
	if !ok {
		t.Fatalf("no client key for %s", a)
	}
	return k
}
