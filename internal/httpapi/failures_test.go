package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestWrongTokensSlowed: after freeFailures wrong tokens a client gets 429 with Retry-After,
// for a time that doubles with each further wrong token; while it waits even the right token
// is refused (a guess costs the wait); the right token afterwards clears the count.
func TestWrongTokensSlowed(t *testing.T) {
	clock := &testClock{now: time.Unix(1_700_000_000, 0)}
	ts := newTestServer(t, withConfig(func(c *Config) { c.TokenFile = strongToken(t) }),
		withServer(func(s *Server) { s.failures.now = clock.Now }))
	get := func(token string) *http.Response {
		resp, _ := ts.do(t, "GET", "/v1/builds", "", "Authorization", "Bearer "+token)
		return resp
	}
	wantStatus := func(what string, resp *http.Response, status int, retryAfter string) {
		t.Helper()
		if resp.StatusCode != status || resp.Header.Get("Retry-After") != retryAfter {
			t.Fatalf("%s: %d, Retry-After %q; want %d, %q", what, resp.StatusCode, resp.Header.Get("Retry-After"), status, retryAfter)
		}
	}
	for i := 1; i <= freeFailures; i++ {
		wantStatus("wrong token "+strconv.Itoa(i), get("wrong"), 401, "")
	}
	// Requests without a token guess nothing and are not counted, nor slowed.
	for i := 0; i < 2*freeFailures; i++ {
		resp, _ := ts.do(t, "GET", "/v1/builds", "")
		wantStatus("no token", resp, 401, "")
	}
	for _, wait := range []int{1, 2, 4, 8} {
		wantStatus("a wrong token beyond the free ones", get("wrong"), 429, strconv.Itoa(wait))
		wantStatus("the right token while shut out", get(testToken), 429, strconv.Itoa(wait))
		wantStatus("the login while shut out", func() *http.Response { resp, _ := ts.do(t, "GET", "/?token="+testToken, ""); return resp }(), 429, strconv.Itoa(wait))
		clock.advance(time.Duration(wait) * time.Second)
	}
	// /healthz needs no token and is never shut out.
	wantStatus("healthz", func() *http.Response { resp, _ := ts.do(t, "GET", "/healthz", ""); return resp }(), 200, "")
	// The wait stops growing at maxBlock.
	for i := 0; i < 10; i++ {
		resp := get("wrong")
		clock.advance(maxBlock)
		if i == 9 {
			wantStatus("a wrong token after many", resp, 429, strconv.Itoa(int(maxBlock/time.Second)))
		}
	}
	wantStatus("the right token after the wait", get(testToken), 200, "")
	wantStatus("a wrong token after the right one", get("wrong"), 401, "")
}

// TestFailuresBounded: the failures kept are bounded whatever the number of clients; a
// client's IPv6 addresses in one /64 are one client; a count is forgotten in time.
func TestFailuresBounded(t *testing.T) {
	clock := &testClock{now: time.Unix(1_700_000_000, 0)}
	f := newFailures()
	f.now = clock.Now
	f.serverFree = 1 << 30 // the clients' records alone: the server-wide budget has its test
	for i := 0; i < maxFailedClient+500; i++ {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		k, _ := clientKey(a)
		f.fail(k)
		clock.advance(time.Millisecond)
	}
	if n := f.len(); n != maxFailedClient {
		t.Fatalf("%d clients kept, want %d", n, maxFailedClient)
	}
	// The oldest were forgotten, the newest kept.
	if k, _ := clientKey(netip.AddrFrom4([4]byte{10, 0, 0, 0})); waitOf(f, k) != 0 || f.clients[k] != nil {
		t.Fatal("the client that failed longest ago is still kept")
	}
	// One /64, many addresses: one client, shut out after freeFailures.
	var wait time.Duration
	for i := 0; i <= freeFailures; i++ {
		a := netip.MustParseAddr("2001:db8:1:2::" + strconv.FormatInt(int64(i+1), 16))
		k, _ := clientKey(a)
		wait, _ = f.fail(k)
	}
	if wait != firstBlock {
		t.Fatalf("addresses of one /64: shut out for %v, want %v", wait, firstBlock)
	}
	k, _ := clientKey(netip.MustParseAddr("2001:db8:1:2:ffff::1"))
	if waitOf(f, k) == 0 {
		t.Fatal("another address of the /64 is not shut out")
	}
	clock.advance(forgetFailures)
	if waitOf(f, k) != 0 {
		t.Fatal("the count is not forgotten after forgetFailures")
	}
	if waited, _ := f.fail(k); waited != 0 {
		t.Fatal("the count is not forgotten after forgetFailures")
	}
	if _, ok := clientKey(netip.Addr{}); ok {
		t.Fatal("an unknown address has a key")
	}
}

// waitOf is how long f shuts client out.
func waitOf(f *failures, client netip.Prefix) time.Duration {
	d, _ := f.wait(client)
	return d
}

// TestLoopbackIsOneClient: every loopback address (127.0.0.0/8, ::1, and 127.x mapped into
// IPv6) is one client, so a local client cannot multiply its free wrong tokens by sending
// from 127.0.0.2, 127.0.0.3 … (curl --interface); the old code counted each apart.
func TestLoopbackIsOneClient(t *testing.T) {
	want, _ := clientKey(netip.MustParseAddr("127.0.0.1"))
	for _, a := range []string{"127.0.0.2", "127.0.0.9", "127.255.255.254", "::1", "::ffff:127.0.0.5"} {
		if k, ok := clientKey(netip.MustParseAddr(a)); !ok || k != want {
			t.Errorf("%s is client %v, want %v, 127.0.0.1's", a, k, want)
		}
	}
	// Through the server: a wrong token from each of 127.0.0.1 … 127.0.0.9 is one client's.
	ts := newTestServer(t, withConfig(func(c *Config) { c.TokenFile = strongToken(t) }))
	ts.do(t, "GET", "/healthz", "") // answered once Serve has set the server's addresses
	var last *httptest.ResponseRecorder
	for i := 1; i <= 9; i++ {
		req := httptest.NewRequest("GET", "/v1/builds", nil)
		req.Host, req.RemoteAddr = ts.addr, "127.0.0."+strconv.Itoa(i)+":40000"
		req.Header.Set("Authorization", "Bearer wrong")
		last = httptest.NewRecorder()
		ts.Handler().ServeHTTP(last, req)
	}
	if last.Code != http.StatusTooManyRequests || !strings.Contains(last.Body.String(), "from this address") {
		t.Fatalf("the 9th wrong token from 9 loopback addresses: %d %s; want 429 from this address", last.Code, last.Body)
	}
}

// TestServerWideBudget: wrong tokens from many clients, each within its own free ones, use up
// the server's budget: then every client that has not sent the right token since its last
// wrong one waits (a new address gains nothing), while one that has is let in; the wait
// doubles up to maxBlock, and is forgotten in time.
func TestServerWideBudget(t *testing.T) {
	clock := &testClock{now: time.Unix(1_700_000_000, 0)}
	f := newFailures()
	f.now = clock.Now
	addr := func(i int) netip.Prefix {
		k, _ := clientKey(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}))
		return k
	}
	trusted := addr(10_000)
	f.succeed(trusted)
	for i := 0; i < freeServerFailures; i++ {
		if wait, _ := f.fail(addr(i)); wait != 0 {
			t.Fatalf("failure %d, within the server's budget, shut out for %v", i+1, wait)
		}
	}
	if wait, who := f.wait(addr(freeServerFailures)); wait != 0 {
		t.Fatalf("a new client before the budget ran out: %v %s", wait, who)
	}
	if wait, who := f.fail(addr(freeServerFailures)); wait != firstBlock || who != byServer {
		t.Fatalf("the failure beyond the budget: %v %q, want %v %q", wait, who, firstBlock, byServer)
	}
	if wait, who := f.wait(addr(5000)); wait != firstBlock || who != byServer {
		t.Fatalf("a client never seen: %v %q, want shut out by the server's budget", wait, who)
	}
	if wait, _ := f.wait(trusted); wait != 0 {
		t.Fatalf("a client with the right token is shut out by others' wrong ones: %v", wait)
	}
	// Each further failure doubles the wait, up to maxBlock, whoever sends it.
	for i := 1; i < 12; i++ {
		clock.advance(maxBlock)
		f.fail(addr(6000 + i))
	}
	if wait, _ := f.wait(addr(7000)); wait != maxBlock {
		t.Fatalf("after many failures beyond the budget: %v, want %v", wait, maxBlock)
	}
	// A trusted client that sends a wrong token is trusted no more.
	f.fail(trusted)
	if wait, who := f.wait(trusted); wait == 0 || who != byServer {
		t.Fatalf("a trusted client after a wrong token: %v %q, want shut out by the server's budget", wait, who)
	}
	clock.advance(forgetFailures)
	if wait, _ := f.wait(addr(7000)); wait != 0 {
		t.Fatalf("the server's count is not forgotten after forgetFailures: %v", wait)
	}
	if wait, _ := f.fail(addr(7001)); wait != 0 {
		t.Fatalf("a failure after the count was forgotten: %v", wait)
	}
}

// TestTrustedBounded: the trusted clients kept are bounded; the one trusted longest ago goes
// first.
func TestTrustedBounded(t *testing.T) {
	clock := &testClock{now: time.Unix(1_700_000_000, 0)}
	f := newFailures()
	f.now = clock.Now
	for i := 0; i < maxTrusted+10; i++ {
		k, _ := clientKey(netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)}))
		f.succeed(k)
		clock.advance(time.Millisecond)
	}
	if len(f.trusted) != maxTrusted {
		t.Fatalf("%d trusted clients kept, want %d", len(f.trusted), maxTrusted)
	}
	first, _ := clientKey(netip.AddrFrom4([4]byte{10, 2, 0, 0}))
	if _, ok := f.trusted[first]; ok {
		t.Fatal("the client trusted longest ago is still kept")
	}
}
