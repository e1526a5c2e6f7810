package serve

import (
	"net/http"
	"net/netip"
	"strconv"
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
	if k, _ := clientKey(netip.AddrFrom4([4]byte{10, 0, 0, 0})); f.wait(k) != 0 || f.clients[k] != nil {
		t.Fatal("the client that failed longest ago is still kept")
	}
	// One /64, many addresses: one client, shut out after freeFailures.
	var wait time.Duration
	for i := 0; i <= freeFailures; i++ {
		a := netip.MustParseAddr("2001:db8:1:2::" + strconv.FormatInt(int64(i+1), 16))
		k, _ := clientKey(a)
		wait = f.fail(k)
	}
	if wait != firstBlock {
		t.Fatalf("addresses of one /64: shut out for %v, want %v", wait, firstBlock)
	}
	k, _ := clientKey(netip.MustParseAddr("2001:db8:1:2:ffff::1"))
	if f.wait(k) == 0 {
		t.Fatal("another address of the /64 is not shut out")
	}
	clock.advance(forgetFailures)
	if f.wait(k) != 0 || f.fail(k) != 0 {
		t.Fatal("the count is not forgotten after forgetFailures")
	}
	if _, ok := clientKey(netip.Addr{}); ok {
		t.Fatal("an unknown address has a key")
	}
}
