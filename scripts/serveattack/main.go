// Command serveattack attacks a running trtbuild serve for scripts/fault-campaign.sh's "serve"
// stage: clients that leave mid-stream, reconnect with Last-Event-ID, read one byte a second
// or send their headers one byte a second, bad request bodies, and storms of cancels. It prints
// one line per result, "CASE<TAB>1|0<TAB>MESSAGE", which the stage records.
//
//	serveattack -url http://127.0.0.1:PORT -state DIR attack [-reconnects 1000] [-storms 5]
//	serveattack -url URL submit-running N     # N long builds, printed once running (and one queued)
//	serveattack -url URL -state DIR interrupted ID...  # each build is interrupted, nothing left
//	serveattack -url URL -state DIR -models ROOT -outside FILE [-trtbuild BIN] modelrace N
//	                                                   # N builds of a name swapped to a link out
//	serveattack -url URL -sessions N hardening        # sharers' budgets and cancels, sessions, DELETE
//
// The server must run simulated builds one at a time (--sim-slots 1) for attack, so that a
// build can be kept queued.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/scripts/internal/sseclient"
)

var (
	base       = flag.String("url", "", "the server's base URL")
	stateDir   = flag.String("state", "", "the server's state dir")
	reconnects = flag.Int("reconnects", 1000, "reconnects with Last-Event-ID")
	storms     = flag.Int("storms", 5, "cancel storms on a queued build")
	modelsDir  = flag.String("models", "", "the server's model root (modelrace)")
	outsideMod = flag.String("outside", "", "a model outside the model root (modelrace)")
	trtbuildCm = flag.String("trtbuild", "", "the trtbuild binary, to race command-line builds too (modelrace)")
	sessions   = flag.Int("sessions", 0, "the server's --mcp-sessions (hardening)")
)

func main() {
	flag.Parse()
	args := flag.Args()
	if *base == "" || len(args) == 0 {
		fmt.Fprintln(os.Stderr, "serveattack: give -url URL and attack, submit-running N or interrupted ID...")
		os.Exit(2)
	}
	switch args[0] {
	case "attack":
		attack()
	case "submit-running":
		n, _ := strconv.Atoi(args[1])
		if err := submitRunning(n); err != nil {
			fmt.Fprintln(os.Stderr, "serveattack:", err)
			os.Exit(1)
		}
	case "interrupted":
		interrupted(args[1:])
	case "hardening":
		hardening(*sessions)
	case "modelrace":
		n, _ := strconv.Atoi(args[1])
		modelRace(n, *modelsDir, *outsideMod, *trtbuildCm)
	default:
		fmt.Fprintf(os.Stderr, "serveattack: unknown command %q\n", args[0])
		os.Exit(2)
	}
}

// result prints one case's outcome.
func result(name string, ok bool, format string, a ...any) {
	v := 0
	if ok {
		v = 1
	}
	msg := strings.NewReplacer("\t", " ", "\n", " ").Replace(fmt.Sprintf(format, a...))
	fmt.Printf("%s\t%d\t%s\n", name, v, msg)
}

// check prints a case from an error: nil is a pass.
func check(name string, err error) {
	if err != nil {
		result(name, false, "%v", err)
	} else {
		result(name, true, "")
	}
}

func attack() {
	headers := make(chan error, 1)
	go func() { headers <- slowHeaders() }() // takes the header timeout: beside the others
	check("client leaves mid-stream: build goes on", disconnect())
	check(fmt.Sprintf("%d reconnects, Last-Event-ID: next event", *reconnects), reconnect(*reconnects))
	fast, dropped := slowReader()
	check("slow reader: fast client gets the result", fast)
	check("slow reader: dropped, sse_clients 0", dropped)
	for _, c := range badBodies() {
		check("bad body: "+c.name, c.err)
	}
	check("bad requests: still healthy", healthy())
	for i := 0; i < *storms; i++ {
		check("50 cancels at once, queued build", queuedStorm())
	}
	check("50 cancels at once, running build", runningStorm())
	check("no temp file in the state dir", noTemps())
	check("slow headers: closed by the server", <-headers)
}

// --- HTTP helpers ---------------------------------------------------------------------------

var hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}

type snapshot struct {
	ID     string          `json:"id"`
	State  string          `json:"state"`
	Result json.RawMessage `json:"result"`
	Engine bool            `json:"engine_available"`
}

func seed() int { return rand.IntN(1 << 30) }

// submit posts a build of convnet.onnx with options (backend sim added) and a fresh seed.
func submit(options map[string]any) (snapshot, error) {
	o := map[string]any{"backend": "sim", "no-timing-cache": true, "sim-seed": seed()}
	for k, v := range options {
		o[k] = v
	}
	body, _ := json.Marshal(map[string]any{"model": "convnet.onnx", "options": o})
	resp, err := hc.Post(*base+"/v1/builds", "application/json", bytes.NewReader(body))
	if err != nil {
		return snapshot{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return snapshot{}, fmt.Errorf("POST /v1/builds: %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	var s snapshot
	return s, json.Unmarshal(data, &s)
}

func get(id string) (snapshot, error) {
	resp, err := hc.Get(*base + "/v1/builds/" + id)
	if err != nil {
		return snapshot{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return snapshot{}, fmt.Errorf("GET /v1/builds/%s: %s", id, resp.Status)
	}
	var s snapshot
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// waitState polls build id until its state is one of want (or has ended, when want is empty).
func waitState(id string, limit time.Duration, want ...string) (snapshot, error) {
	deadline := time.Now().Add(limit)
	for {
		s, err := get(id)
		if err != nil {
			return s, err
		}
		if len(want) == 0 && s.State != "queued" && s.State != "running" {
			return s, nil
		}
		for _, w := range want {
			if s.State == w {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("build %s is %s after %s, want %v", id, s.State, limit, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sseClients is /metrics' trtbuild_sse_clients.
func sseClients() (int, error) {
	resp, err := hc.Get(*base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "trtbuild_sse_clients "); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("/metrics has no trtbuild_sse_clients")
}

// waitClients polls /metrics until trtbuild_sse_clients is 0.
func waitNoClients(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n, err := sseClients()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("trtbuild_sse_clients is %d after %s, want 0", n, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stream opens build id's events after event `after` (0: from the start).
func stream(ctx context.Context, c *http.Client, id string, after int64) (*http.Response, error) {
	return sseclient.Open(ctx, c, *base+"/v1/builds/"+id+"/events", after)
}

// allEvents reads build id's whole stream.
func allEvents(id string) ([]sseclient.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := stream(ctx, hc, id, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET events of %s: %s", id, resp.Status)
	}
	var evs []sseclient.Event
	err = sseclient.Read(resp.Body, func(ev sseclient.Event) bool { evs = append(evs, ev); return true })
	return evs, err
}

// --- cases ----------------------------------------------------------------------------------

// disconnect: a client reads a few events and hangs up; the build goes on and succeeds, and
// the server counts no client afterwards.
func disconnect() error {
	b, err := submit(map[string]any{"sim-speed": 10})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := stream(ctx, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, b.ID, 0)
	if err != nil {
		cancel()
		return err
	}
	n := 0
	sseclient.Read(resp.Body, func(sseclient.Event) bool { n++; return n < 5 })
	cancel()
	resp.Body.Close()
	if n < 5 {
		return fmt.Errorf("the stream ended after %d events", n)
	}
	s, err := waitState(b.ID, 2*time.Minute)
	if err != nil {
		return err
	}
	if s.State != "succeeded" {
		return fmt.Errorf("the build ended %s, want succeeded", s.State)
	}
	return waitNoClients(30 * time.Second)
}

// reconnect: n connections, each with Last-Event-ID of the event before, each reading one
// event: it must be the next one, and the events together must be the build's trace.
func reconnect(n int) error {
	opts := map[string]any{"sim-speed": 5, "sim-tactics": 32}
	if n <= 500 {
		opts = map[string]any{"sim-speed": 10}
	}
	b, err := submit(opts)
	if err != nil {
		return err
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var got []string
	ended := false
	for k := int64(0); k < int64(n) && !ended; k++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		resp, err := stream(ctx, c, b.ID, k)
		if err != nil {
			cancel()
			return fmt.Errorf("reconnect after %d: %v", k, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			cancel()
			return fmt.Errorf("reconnect after %d: %s", k, resp.Status)
		}
		var first *sseclient.Event
		sseclient.Read(resp.Body, func(ev sseclient.Event) bool { first = &ev; return false })
		resp.Body.Close()
		cancel()
		if first == nil {
			return fmt.Errorf("reconnect after %d: no event", k)
		}
		if first.Seq != k+1 {
			return fmt.Errorf("reconnect after %d: got event %d, want %d", k, first.Seq, k+1)
		}
		got = append(got, string(first.Data))
		ended = first.Type == "result"
	}
	s, err := waitState(b.ID, 2*time.Minute)
	if err != nil {
		return err
	}
	if s.State != "succeeded" {
		return fmt.Errorf("the build ended %s", s.State)
	}
	resp, err := hc.Get(*base + "/v1/builds/" + b.ID + "/trace")
	if err != nil {
		return err
	}
	trace, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSuffix(string(trace), "\n"), "\n")
	if len(lines) < len(got) {
		return fmt.Errorf("the trace has %d lines, the reconnects got %d events", len(lines), len(got))
	}
	for i, g := range got {
		if lines[i] != g {
			return fmt.Errorf("event %d resumed is not line %d of the trace: %.80q vs %.80q", i+1, i+1, g, lines[i])
		}
	}
	// After the last event of an ended build: nothing more (204), and past it: 400.
	for _, tc := range []struct {
		after int64
		want  int
	}{{int64(len(lines)), http.StatusNoContent}, {int64(len(lines)) + 1, http.StatusBadRequest}} {
		resp, err := stream(context.Background(), c, b.ID, tc.after)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			return fmt.Errorf("Last-Event-ID %d of an ended build of %d events: %s, want %d", tc.after, len(lines), resp.Status, tc.want)
		}
	}
	if !ended && len(got) < n {
		return fmt.Errorf("only %d reconnects", len(got))
	}
	return nil
}

// slowReader: one client reads its stream 1 byte a second through a small receive buffer
// while another reads it at once; the fast one gets the result and the build ends, and the
// server drops the slow one (its writes block) rather than wait for it.
func slowReader() (fastErr, droppedErr error) {
	b, err := submit(map[string]any{"sim-speed": 5, "sim-tactics": 32})
	if err != nil {
		return err, err
	}
	u, _ := url.Parse(*base)
	d := net.Dialer{Control: nil}
	conn, err := d.Dial("tcp", u.Host)
	if err != nil {
		return err, err
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(1024)
	fmt.Fprintf(conn, "GET /v1/builds/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", b.ID, u.Host)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		one := make([]byte, 1)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			conn.Read(one)
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	evs, err := allEvents(b.ID)
	if err != nil {
		return err, err
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != "result" {
		return fmt.Errorf("the fast client's stream ended without the result (%d events)", len(evs)), errors.New("not tried")
	}
	s, err := waitState(b.ID, 2*time.Minute)
	if err == nil && s.State != "succeeded" {
		err = fmt.Errorf("the build ended %s", s.State)
	}
	// The slow client is still connected: the server must drop it within its write timeout.
	return err, waitNoClients(60 * time.Second)
}

type bodyCase struct {
	name string
	err  error
}

// badBodies posts malformed and refused bodies to POST /v1/builds: each must be answered with
// its status and a JSON error with a hint, and start nothing.
func badBodies() []bodyCase {
	big := `{"model": "convnet.onnx", "options": {"backend": "sim", "x": "` + strings.Repeat("A", 2<<20) + `"}}`
	cases := []struct {
		name, ctype, body string
		chunked           bool
		want              int
	}{
		{"malformed JSON → 400", "application/json", `{"model": "convnet.onnx", "options": {`, false, 400},
		{"not an object → 400", "application/json", `["convnet.onnx"]`, false, 400},
		{"two JSON values → 400", "application/json", `{"model": "convnet.onnx"} {}`, false, 400},
		{"empty body → 400", "application/json", ``, false, 400},
		{"unknown field → 400", "application/json", `{"model": "convnet.onnx", "optoins": {}}`, false, 400},
		{"unknown option → 400", "application/json", `{"model": "convnet.onnx", "options": {"backend": "sim", "no-such-flag": true}}`, false, 400},
		{"option of wrong type → 400", "application/json", `{"model": "convnet.onnx", "options": {"backend": "sim", "fp16": "yes"}}`, false, 400},
		{"wrong content type → 415", "text/plain", `{"model": "convnet.onnx", "options": {"backend": "sim"}}`, false, 415},
		{"no content type → 415", "", `{"model": "convnet.onnx", "options": {"backend": "sim"}}`, false, 415},
		{"2 MiB → 413", "application/json", big, false, 413},
		{"2 MiB chunked → 413", "application/json", big, true, 413},
		{"bad UTF-8 model name → 404", "application/json", "{\"model\": \"conv\xff\xfe.onnx\", \"options\": {\"backend\": \"sim\"}}", false, 404},
		{"../ model → 400/404", "application/json", `{"model": "../convnet.onnx", "options": {"backend": "sim"}}`, false, 0},
	}
	before, _ := listCount()
	var out []bodyCase
	for _, c := range cases {
		var body io.Reader = strings.NewReader(c.body)
		if c.chunked {
			body = io.MultiReader(strings.NewReader(c.body)) // no length: sent chunked
		}
		req, _ := http.NewRequest("POST", *base+"/v1/builds", body)
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		err := func() error {
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			var e struct{ Error, Hint string }
			if resp.StatusCode != c.want && !(c.want == 0 && (resp.StatusCode == 400 || resp.StatusCode == 404)) {
				return fmt.Errorf("got %s, want %d: %.200s", resp.Status, c.want, data)
			}
			if json.Unmarshal(data, &e) != nil || e.Error == "" || e.Hint == "" || strings.Contains(e.Error, "\n") {
				return fmt.Errorf("the answer is not a one-line JSON error with a hint: %.200s", data)
			}
			return nil
		}()
		out = append(out, bodyCase{c.name, err})
	}
	if after, err := listCount(); err != nil || after != before {
		out = append(out, bodyCase{"none starts a build", fmt.Errorf("builds listed: %d before, %d after (%v)", before, after, err)})
	} else {
		out = append(out, bodyCase{"none starts a build", nil})
	}
	return out
}

func listCount() (int, error) {
	resp, err := hc.Get(*base + "/v1/builds?limit=1000")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var l struct{ Builds []snapshot }
	err = json.NewDecoder(resp.Body).Decode(&l)
	return len(l.Builds), err
}

func healthy() error {
	resp, err := hc.Get(*base + "/healthz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(data)) != "ok" {
		return fmt.Errorf("/healthz: %s %q", resp.Status, data)
	}
	return nil
}

// slowHeaders sends a request's headers one byte a second: the server must close the
// connection (its header timeout), which is waited for up to 60 s.
func slowHeaders() error {
	u, _ := url.Parse(*base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return err
	}
	defer conn.Close()
	closed := make(chan time.Time, 1)
	go func() {
		io.Copy(io.Discard, conn) // returns when the server closes the connection
		closed <- time.Now()
	}()
	req := "GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\nX-Slow: " + strings.Repeat("a", 100) + "\r\n\r\n"
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case at := <-closed:
			if i >= len(req) {
				return fmt.Errorf("the whole request was sent (%d s) before the connection closed", i)
			}
			_ = at
			return nil
		case <-tick.C:
		}
		if time.Since(start) > 60*time.Second {
			return fmt.Errorf("the connection is still open after 60 s (%d bytes sent)", i)
		}
		if i < len(req) {
			if _, err := conn.Write([]byte{req[i]}); err != nil {
				return nil // closed by the server
			}
		}
	}
}

// storm sends 50 cancels of build id at once: every one must be 202.
func storm(id string, hard func(i int) bool) error {
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	startGate := make(chan struct{})
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startGate
			resp, err := hc.Post(fmt.Sprintf("%s/v1/builds/%s/cancel?hard=%t", *base, id, hard(i)), "application/json", nil)
			if err != nil {
				errs <- err
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				errs <- fmt.Errorf("cancel: %s: %.200s", resp.Status, data)
			}
		}()
	}
	close(startGate)
	wg.Wait()
	close(errs)
	var all []string
	for err := range errs {
		all = append(all, err.Error())
	}
	if len(all) > 0 {
		return fmt.Errorf("%d of 50 cancels failed: %s", len(all), all[0])
	}
	return nil
}

// endedCancelled checks that build id ended cancelled, with exactly one result event (the
// last), and no engine.
func endedCancelled(id string) error {
	s, err := waitState(id, time.Minute)
	if err != nil {
		return err
	}
	if s.State != "cancelled" {
		return fmt.Errorf("build %s ended %s, want cancelled", id, s.State)
	}
	evs, err := allEvents(id)
	if err != nil {
		return err
	}
	results := 0
	for _, ev := range evs {
		if ev.Type == "result" {
			results++
		}
	}
	if results != 1 || evs[len(evs)-1].Type != "result" {
		return fmt.Errorf("build %s's stream has %d result events of %d, want exactly one, the last", id, results, len(evs))
	}
	if s.Engine {
		return fmt.Errorf("build %s was cancelled but has an engine", id)
	}
	return nil
}

// blocker starts a build that runs for minutes unless cancelled and waits until it runs.
func blocker() (snapshot, error) {
	b, err := submit(map[string]any{"sim-speed": 0.02})
	if err != nil {
		return b, err
	}
	return waitState(b.ID, time.Minute, "running")
}

var held snapshot // the running build the queued storms wait behind

func queuedStorm() error {
	if held.ID == "" {
		b, err := blocker()
		if err != nil {
			return err
		}
		held = b
	}
	q, err := submit(map[string]any{"sim-speed": 10})
	if err != nil {
		return err
	}
	if q.State != "queued" {
		return fmt.Errorf("the build behind a running one is %s, want queued (run the server with --sim-slots 1)", q.State)
	}
	if err := storm(q.ID, func(int) bool { return false }); err != nil {
		return err
	}
	return endedCancelled(q.ID)
}

func runningStorm() error {
	b := held
	if b.ID == "" {
		var err error
		if b, err = blocker(); err != nil {
			return err
		}
	}
	held = snapshot{}
	// Soft cancels, and a few hard ones among them: the second rung.
	if err := storm(b.ID, func(i int) bool { return i%10 == 9 }); err != nil {
		return err
	}
	return endedCancelled(b.ID)
}

// temps are trtbuild's temporary files below the state dir.
func temps() []string {
	var out []string
	filepath.WalkDir(*stateDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".trtbuild-") && strings.HasSuffix(d.Name(), ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func noTemps() error {
	if *stateDir == "" {
		return errors.New("no -state DIR")
	}
	if t := temps(); len(t) > 0 {
		return fmt.Errorf("%d temporary files: %s", len(t), strings.Join(t[:min(3, len(t))], " "))
	}
	return nil
}

// --- kill -9 --------------------------------------------------------------------------------

// submitRunning starts n builds that run for minutes and one queued behind them, waits until
// the n run, and prints the ids.
func submitRunning(n int) error {
	var ids []string
	for i := 0; i < n; i++ {
		b, err := submit(map[string]any{"sim-speed": 0.02})
		if err != nil {
			return err
		}
		ids = append(ids, b.ID)
	}
	for _, id := range ids {
		if _, err := waitState(id, time.Minute, "running"); err != nil {
			return err
		}
	}
	q, err := submit(map[string]any{"sim-speed": 0.02})
	if err != nil {
		return err
	}
	if q.State != "queued" {
		return fmt.Errorf("build %s is %s, want queued behind %d running (--sim-slots %d)", q.ID, q.State, n, n)
	}
	for _, id := range append(ids, q.ID) {
		fmt.Println(id)
	}
	return nil
}

// interrupted checks, after a restart, that each build is interrupted with a result event
// that says so, and that no temporary file is left.
func interrupted(ids []string) {
	for _, id := range ids {
		name := "kill -9: restart says interrupted"
		s, err := get(id)
		if err != nil {
			result(name, false, "%v", err)
			continue
		}
		if s.State != "interrupted" {
			result(name, false, "build %s is %s", id, s.State)
			continue
		}
		evs, err := allEvents(id)
		if err != nil || len(evs) == 0 || evs[len(evs)-1].Type != "result" {
			result(name, false, "build %s's stream after the restart: %d events, %v", id, len(evs), err)
			continue
		}
		result(name, true, "")
	}
	check("kill -9: no temp file after restart", noTemps())
}
