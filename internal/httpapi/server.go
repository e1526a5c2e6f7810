// Package httpapi is trtbuild's HTTP server over a service.Manager: API v1 (JSON), the builds'
// events as Server-Sent Events, the OpenAPI document of that API, /metrics and /healthz, and
// the web page and the MCP handler mounted at / and /mcp. It checks every request before any
// handler sees it: the Host header (DNS rebinding), the bearer token or session cookie when the
// server has a token file (a client that sends wrong ones waits longer and longer), the Origin
// and the page token of browser requests, and the type and size of request bodies; behind a
// reverse proxy it names as trusted, the proxy's X-Forwarded-* headers stand for the client's
// address, Host and scheme. It logs every request it answers with an error, through log/slog.
// docs/serve.md describes the API.
package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/service"
)

// DefaultAddr is the address trtbuild serve listens on unless told otherwise.
const DefaultAddr = "127.0.0.1:8470"

// Limits of requests and of the connections that carry them.
const (
	MaxBodyBytes      = 1 << 20 // a request body beyond this is refused (413)
	maxHeaderBytes    = 64 << 10
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 120 * time.Second
)

// Config is what a Server serves and how.
type Config struct {
	// Addr is the address to listen on, host:port (port 0: any free port). A host that is not a
	// loopback address needs TokenFile.
	Addr string
	// TokenFile holds the bearer token every request but /healthz must carry; "" for none
	// (loopback only). It is read once, by New.
	TokenFile string
	// AllowHosts are further names the Host header may carry, for a server reached through a
	// name of its own (a reverse proxy, a DNS name): a bare name on any port and without one,
	// host:port on that port only.
	AllowHosts []string
	// AllowOrigins are origins (scheme://host[:port]) besides the server's own whose browser
	// requests may call the API: the page as a reverse proxy serves it, https://NAME.
	AllowOrigins []string
	// TrustProxies are the IP addresses and CIDR prefixes of reverse proxies whose
	// X-Forwarded-For (the client's address), X-Forwarded-Host and X-Forwarded-Proto (the Host
	// and scheme the client used) the server believes; none: those headers are ignored.
	TrustProxies []string
	// Manager runs the builds.
	Manager *service.Manager
	// Refused are the options a request may not set (as service.Config.Refused); the OpenAPI
	// document's options schema leaves them out.
	Refused map[string]string
	// Page makes the web page's handler, mounted at / (its GET requests), given the page token
	// the page's POSTs must carry; nil: 404 there.
	Page func(pageToken string) http.Handler
	// MCP is the MCP streamable HTTP handler, mounted at /mcp; nil: 404 there.
	MCP http.Handler
	// Version is trtbuild's version, for the OpenAPI document and /metrics.
	Version string
	// Log receives the server's events, one record each: every request answered with an
	// error status (its status, method, path, client and the error it was sent), each event
	// stream dropped for its client's lag, and the failures the server cannot answer a client
	// for (a panic, an error writing a response, a refused connection); nil: none.
	Log *slog.Logger
}

// Server is the HTTP server. New makes it; Serve or ListenAndServe runs it; Drain, then
// Shutdown, end it.
type Server struct {
	cfg       Config
	m         *service.Manager
	token     string // the bearer token; "" when the server has none
	session   string // the session cookie's value for that token
	pageToken string
	openapi   []byte
	hosts     atomic.Pointer[hostCheck] // set by Serve, before any request
	names     allowedNames              // --allow-host
	origins   map[string]bool           // --allow-origin, each as normalOrigin spells it
	proxies   trustedProxies
	failures  *failures // wrong tokens by client
	routes    []route
	handler   http.Handler
	keepalive time.Duration // an event stream's comment after this long without an event
	draining  atomic.Bool
	log       *slog.Logger
	http      *http.Server
}

// New checks cfg (the listen address against the token file, the token file itself) and
// makes the server. Its errors are one-line usage errors that name the fix.
func New(cfg Config) (*Server, error) {
	if cfg.Manager == nil {
		return nil, errors.New("serve: no service.Manager")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, exitcode.Usagef("--listen %s is not host:port (%v)", cfg.Addr, errText(err)).Hintf("give an address such as %s", DefaultAddr)
	}
	s := &Server{cfg: cfg, m: cfg.Manager, keepalive: keepaliveEvery, log: cfg.Log, failures: newFailures()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.names, err = parseAllowHosts(cfg.AllowHosts); err != nil {
		return nil, err
	}
	if s.origins, err = parseAllowOrigins(cfg.AllowOrigins); err != nil {
		return nil, err
	}
	if s.proxies, err = parseTrustedProxies(cfg.TrustProxies); err != nil {
		return nil, err
	}
	if cfg.TokenFile != "" {
		if s.token, err = readTokenFile(cfg.TokenFile); err != nil {
			return nil, err
		}
		if !isLoopback(host) {
			if err := checkTokenStrength(cfg.TokenFile, s.token, cfg.Addr); err != nil {
				return nil, err
			}
		}
		s.session = sessionValue(s.token)
	} else if !isLoopback(host) {
		return nil, exitcode.Usagef("--listen %s is not a loopback address and there is no --token-file: anyone who reaches it could start builds", cfg.Addr).Hintf("give --token-file FILE (a secret only you can read: chmod 600 FILE), or listen on 127.0.0.1")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("making the page token: %w", err)
	}
	s.pageToken = hex.EncodeToString(b[:])
	if s.openapi, err = openAPIDocument(cfg.Version, cfg.Refused); err != nil {
		return nil, err
	}
	s.routes = s.routeTable()
	s.handler = s.withPeer(s.logErrors(s.guard(s.mux())))
	s.http = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelError),
		// No WriteTimeout: an event stream lasts as long as its build. The stream sets a
		// deadline on each of its writes instead (see events).
	}
	return s, nil
}

// PageToken is the token the web page's POSTs carry (X-Trtbuild-Token), random per process.
func (s *Server) PageToken() string { return s.pageToken }

// Handler is the server's handler: every route behind the request checks.
func (s *Server) Handler() http.Handler { return s.handler }

// Listen opens the listening socket at Config.Addr.
func (s *Server) Listen() (net.Listener, error) {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, exitcode.Usagef("cannot listen on %s: %s", s.cfg.Addr, errText(err)).Hintf("give another --listen address (port 0 picks a free one)")
	}
	return l, nil
}

// Serve answers requests on l until Shutdown or Close; the Host header must name l's address
// (or a loopback name with its port, or one of Config.AllowHosts). It returns
// http.ErrServerClosed after Shutdown.
func (s *Server) Serve(l net.Listener) error {
	h := newHostCheck(l.Addr().String(), s.names)
	s.hosts.Store(&h)
	return s.http.Serve(l)
}

// ListenAndServe is Listen, then Serve.
func (s *Server) ListenAndServe() error {
	l, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Drain makes the server refuse new builds (POST /v1/builds → 503) and report "draining" at
// /healthz, so that a load balancer stops sending work; everything else goes on.
func (s *Server) Drain() { s.draining.Store(true) }

// Shutdown stops accepting connections and waits, until ctx ends, for the open ones to finish
// (event streams end with their builds' results); then it closes the rest.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Drain()
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	return err
}

// Close closes every connection at once.
func (s *Server) Close() error { return s.http.Close() }

// errText is an error's message without the Go operation prefix of a net.OpError.
func errText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
}
