package httpapi

import (
	"container/list"
	"net/netip"
	"sync"
	"time"
)

// How the server slows down guessing of its token.
const (
	freeFailures    = 5                // wrong tokens a client may send before it has to wait
	firstBlock      = time.Second      // the wait after the first failure beyond those
	maxBlock        = time.Minute      // the longest wait: each failure beyond doubles it up to this
	forgetFailures  = 15 * time.Minute // a client's count is forgotten this long after its last failure
	maxFailedClient = 4096             // clients remembered at once; the one that failed longest ago goes first
	// freeServerFailures are the wrong tokens all clients together may send (the server-wide
	// budget) before every client but those that sent the right token since their last wrong
	// one (trusted) has to wait, as a client does beyond freeFailures: many addresses (a /48 of
	// IPv6, a botnet) get no more guesses than this plus about one a maxBlock.
	freeServerFailures = 100
	maxTrusted         = 256 // trusted clients remembered at once; the one trusted longest ago goes first
)

// failures counts the requests with a wrong token of each client — an IPv4 address, an IPv6
// /64 (one host's share of addresses), or any loopback address (127.0.0.0/8 and ::1 are one
// machine's) — and of all of them together. After freeFailures of a client's, each further
// failure shuts the client out for firstBlock, doubling up to maxBlock: its requests are 429
// meanwhile, whatever token they carry, so a guess costs the wait. The right token clears its
// count. After freeServerFailures of all clients' together, each further failure shuts out
// every client that is not trusted the same way. Memory is bounded: at most maxFailedClient
// clients and maxTrusted trusted ones are kept. It is safe for concurrent use.
type failures struct {
	now     func() time.Time
	mu      sync.Mutex
	clients map[netip.Prefix]*list.Element // of *failed
	recent  list.List                      // *failed, the latest failure first
	// server is all clients' failures together; serverFree its budget (freeServerFailures).
	server     failed
	serverFree int
	// trusted are the clients that sent the right token since their last wrong one, with
	// when: the server-wide budget does not shut them out.
	trusted map[netip.Prefix]time.Time
}

// failed is one client's record, or the server's.
type failed struct {
	client netip.Prefix
	count  int
	last   time.Time // the last failure
	until  time.Time // shut out until then
}

// Who a client is shut out by, for its 429: its own failures, or all clients'.
const (
	byClient = "from this address"
	byServer = "to this server from many addresses"
)

func newFailures() *failures {
	return &failures{now: time.Now, clients: map[netip.Prefix]*list.Element{}, serverFree: freeServerFailures, trusted: map[netip.Prefix]time.Time{}}
}

// loopback is the client every loopback address counts as: the machine itself, whichever of
// its addresses (127.0.0.2, ::1) a request comes from.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// clientKey is the client a failure counts for: loopback for a loopback address, addr's /64 for
// IPv6, addr for IPv4. ok is false for an unknown address, which is not counted.
func clientKey(addr netip.Addr) (netip.Prefix, bool) {
	if !addr.IsValid() {
		return netip.Prefix{}, false
	}
	addr = addr.Unmap()
	if addr.IsLoopback() {
		return loopback, true
	}
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, err := addr.Prefix(bits)
	return p, err == nil
}

// wait is how long client is still shut out (0: not), and by whom (byClient, byServer).
func (f *failures) wait(client netip.Prefix) (time.Duration, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if e := f.clients[client]; e != nil {
		c := e.Value.(*failed)
		if now.Sub(c.last) >= forgetFailures {
			f.dropLocked(e)
		} else if d := c.until.Sub(now); d > 0 {
			return d, byClient
		}
	}
	if _, ok := f.trusted[client]; !ok {
		if d := f.server.until.Sub(now); d > 0 {
			return d, byServer
		}
	}
	return 0, ""
}

// fail counts a wrong token of client, for it and for the server, and returns how long it is
// shut out now (0: not yet), and by whom.
func (f *failures) fail(client netip.Prefix) (time.Duration, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	delete(f.trusted, client)
	e := f.clients[client]
	if e != nil && now.Sub(e.Value.(*failed).last) >= forgetFailures {
		f.dropLocked(e)
		e = nil
	}
	if e == nil {
		for f.recent.Len() >= maxFailedClient {
			f.dropLocked(f.recent.Back())
		}
		e = f.recent.PushFront(&failed{client: client})
		f.clients[client] = e
	}
	f.recent.MoveToFront(e)
	mine := e.Value.(*failed).count1(now, freeFailures)
	if now.Sub(f.server.last) >= forgetFailures {
		f.server = failed{}
	}
	all := f.server.count1(now, f.serverFree)
	if all > mine {
		return all, byServer
	}
	if mine > 0 {
		return mine, byClient
	}
	return 0, ""
}

// count1 counts one failure at now of a record whose first free are free, and returns how long
// it shuts out (0: not yet).
func (c *failed) count1(now time.Time, free int) time.Duration {
	c.count++
	c.last = now
	if c.count <= free {
		return 0
	}
	block := maxBlock
	if n := c.count - free - 1; n < 16 && firstBlock<<n < maxBlock {
		block = firstBlock << n
	}
	c.until = now.Add(block)
	return block
}

// succeed clears client's count and trusts it: it has the token.
func (f *failures) succeed(client netip.Prefix) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.clients[client]; e != nil {
		f.dropLocked(e)
	}
	if _, ok := f.trusted[client]; !ok && len(f.trusted) >= maxTrusted {
		var oldest netip.Prefix
		var when time.Time
		for c, t := range f.trusted {
			if when.IsZero() || t.Before(when) {
				oldest, when = c, t
			}
		}
		delete(f.trusted, oldest)
	}
	f.trusted[client] = f.now()
}

// len is the number of clients remembered.
func (f *failures) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.clients)
}

func (f *failures) dropLocked(e *list.Element) {
	delete(f.clients, e.Value.(*failed).client)
	f.recent.Remove(e)
}
