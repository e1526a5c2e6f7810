package httpapi

import (
	"context"
	"net/http"
	"net/netip"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// trustedProxies are the addresses of --trust-proxy: the reverse proxies whose X-Forwarded-For,
// X-Forwarded-Host and X-Forwarded-Proto headers the server believes. Without any, it ignores
// those headers: anyone could send them.
type trustedProxies []netip.Prefix

// parseTrustedProxies checks --trust-proxy's values: IP addresses or CIDR prefixes.
func parseTrustedProxies(list []string) (trustedProxies, error) {
	var t trustedProxies
	for _, v := range list {
		v = strings.TrimSpace(v)
		if p, err := netip.ParsePrefix(v); err == nil {
			t = append(t, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, exitcode.Usagef("--trust-proxy %s is not an IP address or a CIDR prefix", quoteHeader(v)).Hintf("give the reverse proxy's address, e.g. --trust-proxy 127.0.0.1 or --trust-proxy 10.0.0.0/8")
		}
		a = a.Unmap()
		t = append(t, netip.PrefixFrom(a, a.BitLen()))
	}
	return t, nil
}

// trusted reports whether a is the address of a trusted proxy.
func (t trustedProxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peer is what the server knows of a request's client: its address, and the Host and scheme
// it used. From a trusted proxy they are the X-Forwarded-* headers' (where present); from
// anyone else the connection's address and the request's own Host and plain http.
type peer struct {
	addr    netip.Addr // the client's address; invalid when unknown
	host    string     // the Host the client asked for
	scheme  string     // "http" or "https"
	proxied bool       // the request came through a trusted proxy
}

// origin is the peer's view of this server's origin, scheme://host.
func (p peer) origin() string { return p.scheme + "://" + p.host }

// peerOf works out r's peer (see peer).
func (t trustedProxies) peerOf(r *http.Request) peer {
	p := peer{host: r.Host, scheme: "http"}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		p.addr = ap.Addr().Unmap()
	}
	if !p.addr.IsValid() || !t.trusted(p.addr) {
		return p
	}
	p.proxied = true
	// X-Forwarded-For is appended to by each proxy: from its end, the first address that is
	// not a trusted proxy's is the client's. What is left of it anyone could have written.
	hops := headerList(r.Header.Values("X-Forwarded-For"))
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break
		}
		p.addr = a
		if !t.trusted(a) {
			break
		}
	}
	// Of X-Forwarded-Host and -Proto the last value is the one the proxy next to the server
	// set; one before it may be the client's own header, passed on.
	if hosts := headerList(r.Header.Values("X-Forwarded-Host")); len(hosts) > 0 && hosts[len(hosts)-1] != "" {
		p.host = hosts[len(hosts)-1]
	}
	if protos := headerList(r.Header.Values("X-Forwarded-Proto")); len(protos) > 0 {
		if proto := strings.ToLower(protos[len(protos)-1]); proto == "http" || proto == "https" {
			p.scheme = proto
		}
	}
	return p
}

// headerList is the comma-separated values of a header's lines, trimmed.
func headerList(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, v := range strings.Split(l, ",") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// parseHop is an address of X-Forwarded-For: an IP, perhaps with a port, IPv6 perhaps in
// brackets.
func parseHop(v string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(strings.Trim(v, "[]")); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// peerKey is the context key of a request's peer.
type peerKey struct{}

// withPeer puts r's peer in its context, for the checks and the log after it.
func (s *Server) withPeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := s.proxies.peerOf(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerKey{}, p)))
	})
}

// peerFrom is r's peer, as withPeer found it.
func (s *Server) peerFrom(r *http.Request) peer {
	if p, ok := r.Context().Value(peerKey{}).(peer); ok {
		return p
	}
	return s.proxies.peerOf(r)
}
