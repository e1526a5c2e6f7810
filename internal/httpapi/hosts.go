package httpapi

import (
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// allowedNames are the names of --allow-host: a bare name allows that name on any port and
// without one, host:port that port only.
type allowedNames struct {
	names     map[string]bool // host, lower case, IPv6 without brackets
	hostPorts map[string]bool // host:port, lower case
}

// parseAllowHosts checks --allow-host's values: host names or addresses, with or without a
// port, nothing else (no scheme, no path).
func parseAllowHosts(list []string) (allowedNames, error) {
	a := allowedNames{names: map[string]bool{}, hostPorts: map[string]bool{}}
	for _, v := range list {
		name := strings.ToLower(strings.TrimSpace(v))
		bad := name == "" || strings.ContainsAny(name, "/@?# \t") || strings.Contains(name, "://")
		if !bad {
			if host, port, err := net.SplitHostPort(name); err == nil {
				n, perr := strconv.Atoi(port)
				bad = host == "" || perr != nil || n < 1 || n > 65535
				a.hostPorts[net.JoinHostPort(host, port)] = true
			} else if strings.Count(name, ":") == 1 {
				bad = true // host: without its port
			} else {
				a.names[strings.Trim(name, "[]")] = true
			}
		}
		if bad {
			return a, exitcode.Usagef("--allow-host %s is not a host name or host:port", quoteHeader(v)).Hintf("give the name clients use, e.g. --allow-host builds.example.com (any port) or --allow-host builds.example.com:8443")
		}
	}
	return a, nil
}

// hostCheck says which Host headers name this server.
type hostCheck struct {
	port    string
	allowed map[string]bool // host:port, lower case
	names   map[string]bool // hosts on any port and without one (--allow-host NAME)
	anyIP   bool            // listening on all interfaces: any local address's IP literal
}

func newHostCheck(listenAddr string, extra allowedNames) hostCheck {
	host, port, _ := net.SplitHostPort(listenAddr)
	h := hostCheck{port: port, allowed: map[string]bool{}, names: extra.names}
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
	for hp := range extra.hostPorts {
		h.allowed[hp] = true
	}
	return h
}

// ok reports whether the Host header hostport names this server.
func (h hostCheck) ok(hostport string) bool {
	hostport = strings.ToLower(hostport)
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), "80" // no port: HTTP's default
		hostport = net.JoinHostPort(host, port)
	}
	if h.names[host] || h.allowed[hostport] {
		return true
	}
	ip := net.ParseIP(host)
	if !h.anyIP || port != h.port || ip == nil {
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

// example is an address clients may use, for messages.
func (h hostCheck) example() string { return "127.0.0.1:" + h.port }

// normalOrigin is an origin, scheme://host[:port], in one spelling: lower case, without the
// scheme's default port. ok is false for anything else ("null", a path, user info).
func normalOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || u.User != nil || u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// parseAllowOrigins checks --allow-origin's values: each an origin, scheme://host[:port].
func parseAllowOrigins(list []string) (map[string]bool, error) {
	origins := map[string]bool{}
	for _, v := range list {
		o, ok := normalOrigin(v)
		if !ok {
			return nil, exitcode.Usagef("--allow-origin %s is not an origin", quoteHeader(v)).Hintf("give scheme://host[:port] as the browser's address bar shows it, e.g. --allow-origin https://builds.example.com")
		}
		origins[o] = true
	}
	return origins, nil
}
