package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// guard runs the checks every request passes before next sees it, in this order: the Host
// header, the token (all but /healthz; a client that sent wrong ones waits, see failures), the
// Origin and the page token of browser requests, and a POST's body type and size. Host and
// Origin are compared with the peer's view (withPeer): through a trusted proxy, its
// X-Forwarded-Host and -Proto.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts := s.hosts.Load()
		if hosts == nil {
			writeError(w, http.StatusServiceUnavailable, "the server is not listening yet", "try again in a moment")
			return
		}
		p := s.peerFrom(r)
		if !hosts.ok(p.host) {
			what := "Host "
			if p.host != r.Host {
				what = "X-Forwarded-Host "
			}
			writeError(w, http.StatusForbidden, what+quoteHeader(p.host)+" is not this server's address",
				"connect to http://"+hosts.example()+"/ (a server reached by another name needs --allow-host NAME)")
			return
		}
		if s.token != "" && r.URL.Path != "/healthz" && !s.checkToken(w, r, p) {
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !s.originOK(origin, p) {
			writeError(w, http.StatusForbidden, "Origin "+quoteHeader(origin)+" is not this server's",
				"another site may not call this API; use the page at "+p.origin()+"/ (a page reached through another origin, such as a reverse proxy's https://NAME, needs --allow-origin https://NAME or --trust-proxy ADDRESS)")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions && fromBrowser(r) {
			if !equal(r.Header.Get(PageTokenHeader), s.pageToken) {
				writeError(w, http.StatusForbidden, "a browser's request without this page's token",
					"send it from the page at "+p.origin()+"/, which adds the header "+PageTokenHeader)
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

// checkToken reports whether r carries the token, and answers it when not: 401, or 429 while
// its client is shut out for sending wrong ones (then the token is not even compared, so that
// a guess costs the wait). GET /?token=TOKEN, a browser's login, is answered here.
func (s *Server) checkToken(w http.ResponseWriter, r *http.Request, p peer) bool {
	client, known := clientKey(p.addr)
	if known {
		if wait, who := s.failures.wait(client); wait > 0 {
			tooManyFailures(w, wait, who)
			return false
		}
	}
	login := r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token")
	var ok bool
	if login {
		ok = equal(r.URL.Query().Get("token"), s.token)
	} else {
		ok = s.authorized(r)
	}
	if ok {
		if known {
			s.failures.succeed(client)
		}
		if login {
			s.login(w, r, p)
			return false
		}
		return true
	}
	// Only a wrong token counts: a request without one (a browser's first visit) guesses
	// nothing.
	if known && (login || r.Header.Get("Authorization") != "" || hasCookie(r, SessionCookie)) {
		if wait, who := s.failures.fail(client); wait > 0 {
			tooManyFailures(w, wait, who)
			return false
		}
	}
	if login {
		writeError(w, http.StatusUnauthorized, "the token in the address is not this server's", "open /?token=TOKEN with the token of the server's --token-file")
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="trtbuild"`)
	writeError(w, http.StatusUnauthorized, "this server needs its token",
		"send the header Authorization: Bearer TOKEN (the server's --token-file), or open /?token=TOKEN in a browser")
	return false
}

// tooManyFailures answers 429 to a client shut out for wait, by who (failures' byClient or
// byServer).
func tooManyFailures(w http.ResponseWriter, wait time.Duration, who string) {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, "too many requests with a wrong token "+who,
		fmt.Sprintf("wait %d s (Retry-After), then send the right token: the server's --token-file", secs))
}

// hasCookie reports whether r carries the cookie name.
func hasCookie(r *http.Request, name string) bool {
	_, err := r.Cookie(name)
	return err == nil
}

// originOK reports whether a browser's Origin may call the API: the server's own origin as the
// peer sees it, or one of --allow-origin.
func (s *Server) originOK(origin string, p peer) bool {
	o, ok := normalOrigin(origin)
	if !ok {
		return false
	}
	if s.origins[o] {
		return true
	}
	own, ok := normalOrigin(p.origin())
	return ok && o == own
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

// login answers GET /?token=TOKEN with the right token: it sets the session cookie (Secure
// when the peer came over https) and redirects to /, so that the token leaves the address bar
// and the history.
func (s *Server) login(w http.ResponseWriter, r *http.Request, p peer) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: s.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: p.scheme == "https"})
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

// quoteHeader quotes a header's value for a message, control bytes escaped, cut to 200 bytes.
func quoteHeader(v string) string {
	if len(v) > 200 {
		v = v[:200] + "…"
	}
	return pathtext.Q(v)
}
