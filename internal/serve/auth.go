package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// SessionCookie is the cookie GET /?token=TOKEN sets, so that a browser carries the token.
const SessionCookie = "trtbuild_session"

// PageTokenHeader is the header a browser's POST carries the page token in.
const PageTokenHeader = "X-Trtbuild-Token"

// sessionValue is the session cookie's value for token: derived from it, so that the cookie
// does not hold the token itself and stays valid across restarts with the same token.
func sessionValue(token string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(SessionCookie))
	return hex.EncodeToString(mac.Sum(nil))
}

// isLoopback reports whether a listen host is a loopback address: "localhost" or a loopback
// IP. An empty host (all interfaces) and other names are not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostCheck says which Host headers name this server.
type hostCheck struct {
	port    string
	allowed map[string]bool // host:port, lower case
	anyIP   bool            // listening on all interfaces: any local address's IP literal
}

func newHostCheck(listenAddr string, extra []string) hostCheck {
	host, port, _ := net.SplitHostPort(listenAddr)
	h := hostCheck{port: port, allowed: map[string]bool{}}
	for _, name := range []string{"localhost", "127.0.0.1", "[::1]"} {
		h.allowed[name+":"+port] = true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		h.anyIP = true
		if name, err := os.Hostname(); err == nil {
			h.allowed[strings.ToLower(name)+":"+port] = true
		}
	} else {
		h.allowed[strings.ToLower(net.JoinHostPort(host, port))] = true
	}
	for _, name := range extra {
		name = strings.ToLower(name)
		if _, _, err := net.SplitHostPort(name); err != nil {
			name = net.JoinHostPort(strings.Trim(name, "[]"), port)
		}
		h.allowed[name] = true
	}
	return h
}

// ok reports whether the Host header hostport names this server.
func (h hostCheck) ok(hostport string) bool {
	hostport = strings.ToLower(hostport)
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		hostport = net.JoinHostPort(strings.Trim(hostport, "[]"), "80") // no port: HTTP's default
	}
	if h.allowed[hostport] {
		return true
	}
	if !h.anyIP {
		return false
	}
	host, port, err := net.SplitHostPort(hostport)
	ip := net.ParseIP(host)
	if err != nil || port != h.port || ip == nil {
		return false
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// guard runs the checks every request passes before next sees it, in this order: the Host
// header, the token (all but /healthz), the Origin and the page token of browser requests,
// and a POST's body type and size.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts := s.hosts.Load()
		if hosts == nil {
			writeError(w, http.StatusServiceUnavailable, "the server is not listening yet", "try again in a moment")
			return
		}
		if !hosts.ok(r.Host) {
			writeError(w, http.StatusForbidden, "Host "+quoteHeader(r.Host)+" is not this server's address",
				"connect to http://"+hosts.example()+"/ (a server reached by another name needs --allow-host NAME)")
			return
		}
		if s.token != "" && r.URL.Path != "/healthz" {
			if r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token") {
				s.login(w, r)
				return
			}
			if !s.authorized(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="trtbuild"`)
				writeError(w, http.StatusUnauthorized, "this server needs its token",
					"send the header Authorization: Bearer TOKEN (the server's --token-file), or open /?token=TOKEN in a browser")
				return
			}
		}
		if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host {
			writeError(w, http.StatusForbidden, "Origin "+quoteHeader(origin)+" is not this server's",
				"another site may not call this API; use the page at http://"+r.Host+"/")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions && fromBrowser(r) {
			if !equal(r.Header.Get(PageTokenHeader), s.pageToken) {
				writeError(w, http.StatusForbidden, "a browser's request without this page's token",
					"send it from the page at http://"+r.Host+"/, which adds the header "+PageTokenHeader)
				return
			}
		}
		if r.Method == http.MethodPost {
			if r.ContentLength > MaxBodyBytes {
				writeError(w, http.StatusRequestEntityTooLarge, "the request body is over 1 MiB", "send a smaller request")
				return
			}
			if strings.HasPrefix(r.URL.Path, "/v1/") && (r.ContentLength != 0 || r.Header.Get("Content-Type") != "") && !isJSON(r.Header.Get("Content-Type")) {
				writeError(w, http.StatusUnsupportedMediaType, "the request body is "+quoteHeader(r.Header.Get("Content-Type"))+", not JSON",
					"send it with the header Content-Type: application/json")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// fromBrowser reports whether r comes from a browser's page (it has an Origin header, or a
// Sec-Fetch-Site other than same-origin or none): such a POST must carry the page token.
func fromBrowser(r *http.Request) bool {
	if r.Header.Get("Origin") != "" {
		return true
	}
	site := r.Header.Get("Sec-Fetch-Site")
	return site != "" && site != "same-origin" && site != "none"
}

// authorized reports whether r carries the token: as a bearer token or as the session cookie.
func (s *Server) authorized(r *http.Request) bool {
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, ok := strings.Cut(auth, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(tok), s.token)
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		return equal(c.Value, s.session)
	}
	return false
}

// login answers GET /?token=TOKEN: with the right token it sets the session cookie and
// redirects to / (so the token leaves the address bar and the history).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !equal(r.URL.Query().Get("token"), s.token) {
		writeError(w, http.StatusUnauthorized, "the token in the address is not this server's", "open /?token=TOKEN with the token of the server's --token-file")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: s.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// equal compares a secret in constant time.
func equal(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// isJSON reports whether a Content-Type is application/json (parameters such as charset aside).
func isJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// example is an address clients may use, for messages.
func (h hostCheck) example() string { return "127.0.0.1:" + h.port }

// quoteHeader quotes a header's value for a message, control bytes escaped, cut to 200 bytes.
func quoteHeader(v string) string {
	if len(v) > 200 {
		v = v[:200] + "…"
	}
	return pathtext.Q(v)
}
