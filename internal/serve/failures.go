package serve

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
)

// failures counts the requests with a wrong token of each client, an IPv4 address or an IPv6
// /64 (one host's share of addresses). After freeFailures of them each further failure shuts
// the client out for firstBlock, doubling up to maxBlock: its requests are 429 meanwhile,
// whatever token they carry, so a guess costs the wait. The right token clears its count.
// Memory is bounded: at most maxFailedClient clients are kept. It is safe for concurrent use.
type failures struct {
	now     func() time.Time
	mu      sync.Mutex
	clients map[netip.Prefix]*list.Element // of *failed
	recent  list.List                      // *failed, the latest failure first
}

// failed is one client's record.
type failed struct {
	client netip.Prefix
	count  int
	last   time.Time // the last failure
	until  time.Time // shut out until then
}

func newFailures() *failures {
	return &failures{now: time.Now, clients: map[netip.Prefix]*list.Element{}}
}

// clientKey is the client a failure counts for: addr's /64 for IPv6, addr for IPv4. ok is
// false for an unknown address, which is not counted.
func clientKey(addr netip.Addr) (netip.Prefix, bool) {
	if !addr.IsValid() {
		return netip.Prefix{}, false
	}
	addr = addr.Unmap()
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, err := addr.Prefix(bits)
	return p, err == nil
}

// wait is how long client is still shut out (0: not).
func (f *failures) wait(client netip.Prefix) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.clients[client]
	if e == nil {
		return 0
	}
	c := e.Value.(*failed)
	now := f.now()
	if now.Sub(c.last) >= forgetFailures {
		f.dropLocked(e)
		return 0
	}
	if d := c.until.Sub(now); d > 0 {
		return d
	}
	return 0
}

// fail counts a wrong token of client and returns how long it is shut out now (0: not yet).
func (f *failures) fail(client netip.Prefix) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
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
	c := e.Value.(*failed)
	c.count++
	c.last = now
	if c.count <= freeFailures {
		return 0
	}
	block := maxBlock
	if n := c.count - freeFailures - 1; n < 16 && firstBlock<<n < maxBlock {
		block = firstBlock << n
	}
	c.until = now.Add(block)
	return block
}

// succeed clears client's count: it has the token.
func (f *failures) succeed(client netip.Prefix) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.clients[client]; e != nil {
		f.dropLocked(e)
	}
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
