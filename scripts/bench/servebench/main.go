// Command servebench measures trtbuild serve (docs/benchmarks.md, "Service"): many
// Server-Sent Events clients watching one simulated build, the time from a submission to its
// first event, and the listing of a long history. It starts the servers it measures itself
// (trtbuild serve, and the Python relay of scripts/bench/serve-peer.py for the fan-out's
// peer), runs its clients in this process, prints one line per figure and PASS or MISS per
// target, and exits 1 when a target is missed. scripts/bench/serve.sh builds and runs it.
//
//	servebench -trtbuild BIN -model-root DIR [-cases fanout,peer,submit,list] [-clients 1000]
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
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trtbuild/trtbuild/internal/history"

	"github.com/trtbuild/trtbuild/scripts/internal/sseclient"
)

// The targets of docs/benchmarks.md.
const (
	targetDelayP99   = 50 * time.Millisecond
	targetRSSMiB     = 150
	targetFirstEvent = 100 * time.Millisecond
	targetList       = 50 * time.Millisecond
)

// buildOptions is the watched build: about 2,700 events in 13 s (simulated, no timing cache).
var buildOptions = map[string]any{"backend": "sim", "sim-speed": 5, "sim-tactics": 32, "no-timing-cache": true}

var (
	trtbuild  = flag.String("trtbuild", "", "the trtbuild binary")
	modelRoot = flag.String("model-root", "", "the folder holding convnet.onnx")
	python    = flag.String("python", "python3", "the Python 3 of the peer")
	peerPath  = flag.String("peer", "scripts/bench/serve-peer.py", "the peer relay")
	cases     = flag.String("cases", "fanout,peer,submit,list", "the cases to run, comma-separated")
	clients   = flag.Int("clients", 1000, "event-stream clients of the fan-out")
	submits   = flag.Int("submits", 20, "submissions of the submit → first event case")
	rows      = flag.Int("rows", 10000, "builds in the history of the list case")
	listRuns  = flag.Int("list-runs", 10, "listings of the list case")
)

var failed bool

func main() {
	flag.Parse()
	if *trtbuild == "" || *modelRoot == "" {
		fmt.Fprintln(os.Stderr, "servebench: give -trtbuild BIN and -model-root DIR")
		os.Exit(2)
	}
	var fan, peer *fanResult
	for _, c := range strings.Split(*cases, ",") {
		var err error
		switch c {
		case "fanout":
			fan, err = fanoutServe()
		case "peer":
			peer, err = fanoutPeer()
		case "submit":
			err = submitCase()
		case "list":
			err = listCase()
		default:
			err = fmt.Errorf("unknown case %q (the cases are fanout, peer, submit, list)", c)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "servebench: %s: %v\n", c, err)
			os.Exit(2)
		}
	}
	if fan != nil && peer != nil {
		fmt.Printf("fan-out, %d clients, side by side:\n", *clients)
		fmt.Printf("  %-22s %s\n", "trtbuild serve", fan.line())
		fmt.Printf("  %-22s %s\n", "python relay (peer)", peer.line())
	}
	if failed {
		os.Exit(1)
	}
}

// goal prints a target's PASS or MISS line and records a miss.
func goal(ok bool, format string, args ...any) {
	word := "PASS"
	if !ok {
		word, failed = "MISS", true
	}
	fmt.Printf("  %s  %s\n", word, fmt.Sprintf(format, args...))
}

// --- servers --------------------------------------------------------------------------------

// server is a started server process: its base URL and pid.
type server struct {
	cmd  *exec.Cmd
	base string
	pid  int
	errs *bytes.Buffer
}

var listening = regexp.MustCompile(`listening on (?:http://)?([0-9.]+:[0-9]+)`)

// start runs the command and waits for its "listening on ADDR" line on stderr.
func start(name string, args ...string) (*server, error) {
	cmd := exec.Command(name, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, pid: cmd.Process.Pid, errs: &bytes.Buffer{}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addr <- m[1]
				sent = true
				continue
			}
			s.errs.WriteString(sc.Text() + "\n")
		}
		if !sent {
			close(addr)
		}
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			cmd.Wait()
			return nil, fmt.Errorf("%s exited before listening: %s", name, s.errs.String())
		}
		s.base = "http://" + a
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not say where it listens within 30 s", name)
	}
	return s, nil
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// startServe starts trtbuild serve on a free loopback port with a new state dir (or dir).
func startServe(stateDir string, extra ...string) (*server, error) {
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--model-root", *modelRoot, "--state-dir", stateDir, "--engine-cache", "off"}, extra...)
	return start(*trtbuild, args...)
}

// --- HTTP -----------------------------------------------------------------------------------

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}

type snapshot struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

func submit(base string, options map[string]any) (snapshot, error) {
	body, _ := json.Marshal(map[string]any{"model": "convnet.onnx", "options": options})
	resp, err := client.Post(base+"/v1/builds", "application/json", bytes.NewReader(body))
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

func cancel(base, id string, hard bool) error {
	resp, err := client.Post(fmt.Sprintf("%s/v1/builds/%s/cancel?hard=%t", base, id, hard), "application/json", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("cancel %s: %s", id, resp.Status)
	}
	return nil
}

// waitEnded polls build id until it has ended.
func waitEnded(base, id string) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := client.Get(base + "/v1/builds/" + id)
		if err != nil {
			return "", err
		}
		var s snapshot
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil {
			return "", err
		}
		if s.State != "queued" && s.State != "running" {
			return s.State, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("build %s has not ended after 2 minutes", id)
}

// --- Server-Sent Events ---------------------------------------------------------------------

// eventT is the "t" field of a v1 JSON line (seconds since the build began), or NaN.
func eventT(data []byte) float64 {
	i := bytes.Index(data, []byte(`"t":`))
	if i < 0 {
		return math.NaN()
	}
	rest := data[i+4:]
	j := bytes.IndexAny(rest, ",}")
	if j < 0 {
		return math.NaN()
	}
	t, err := strconv.ParseFloat(string(rest[:j]), 64)
	if err != nil {
		return math.NaN()
	}
	return t
}

// --- fan-out --------------------------------------------------------------------------------

// fanResult is one fan-out run's figures.
type fanResult struct {
	clients, events          int
	p50, p99, max            time.Duration
	rssPeakMiB, hwmMiB       float64
	reconnects, incomplete   int
	buildSeconds, eventsPerS float64
}

func (r *fanResult) line() string {
	return fmt.Sprintf("delay p50 %6.1f ms  p99 %6.1f ms  max %7.1f ms  RSS peak %5.1f MiB (VmHWM %5.1f)  %d events, %.0f/s, %d resumed, %d incomplete",
		ms(r.p50), ms(r.p99), ms(r.max), r.rssPeakMiB, r.hwmMiB, r.events, r.eventsPerS, r.reconnects, r.incomplete)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// watcher is one client's received events, by sequence number.
type watcher struct {
	recv       []int64 // unix ns of receipt, by seq (0: not received)
	reconnects int
	done       bool
}

// fanout connects n clients to url (an event stream), calls begin once every client has its
// response headers, and returns when every stream has ended with the result event. The event
// "t" fields are recorded in ts, by seq. A stream that ends early resumes with Last-Event-ID.
func fanout(url string, n int, begin func() error, pid int) (*fanResult, error) {
	const maxEvents = 1 << 16
	ts := make([]float64, maxEvents)
	var tsMu sync.Mutex
	ws := make([]*watcher, n)
	var connected sync.WaitGroup
	connected.Add(n)
	var wg sync.WaitGroup
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Minute)
	defer stop()
	tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}
	hc := &http.Client{Transport: tr}
	var connErr atomic.Value
	for i := range ws {
		w := &watcher{recv: make([]int64, maxEvents)}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			var last int64
			for attempt := 0; !w.done && ctx.Err() == nil; attempt++ {
				if last > 0 {
					w.reconnects++
				}
				resp, err := sseclient.Open(ctx, hc, url, last)
				if err != nil || resp.StatusCode != http.StatusOK {
					if err == nil {
						resp.Body.Close()
						err = errors.New(resp.Status)
					}
					if first {
						connErr.Store(err)
						connected.Done()
						return
					}
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if first {
					first = false
					connected.Done()
				}
				sseclient.Read(resp.Body, func(ev sseclient.Event) bool {
					if ev.Seq <= 0 || ev.Seq >= maxEvents {
						return true
					}
					w.recv[ev.Seq] = ev.Received.UnixNano()
					last = ev.Seq
					if ts[ev.Seq] == 0 {
						tsMu.Lock()
						ts[ev.Seq] = eventT(ev.Data)
						tsMu.Unlock()
					}
					if ev.Type == "result" {
						w.done = true
						return false
					}
					return true
				})
				resp.Body.Close()
			}
		}()
	}
	connected.Wait()
	if err, _ := connErr.Load().(error); err != nil {
		stop()
		wg.Wait()
		return nil, fmt.Errorf("a client could not connect: %v", err)
	}
	var rssPeak atomic.Int64
	sampling := make(chan struct{})
	go func() {
		for {
			if v := procStatus(pid, "VmRSS"); v > rssPeak.Load() {
				rssPeak.Store(v)
			}
			select {
			case <-sampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	if err := begin(); err != nil {
		stop()
		wg.Wait()
		return nil, err
	}
	wg.Wait()
	close(sampling)
	hwm := procStatus(pid, "VmHWM")
	if ctx.Err() != nil {
		return nil, errors.New("the clients did not all get the result within 5 minutes")
	}
	// The build's wall start: the min filter over every (receipt − t), so that an event's
	// emission is start + t and its delay at a client receipt − (start + t).
	events := 0
	for _, w := range ws {
		for seq := len(w.recv) - 1; seq > events; seq-- {
			if w.recv[seq] != 0 {
				events = seq
				break
			}
		}
	}
	start := int64(math.MaxInt64)
	for _, w := range ws {
		for seq := 1; seq <= events; seq++ {
			if w.recv[seq] != 0 && !math.IsNaN(ts[seq]) {
				start = min(start, w.recv[seq]-int64(ts[seq]*1e9))
			}
		}
	}
	var delays []time.Duration
	res := &fanResult{clients: n, events: events}
	for _, w := range ws {
		res.reconnects += w.reconnects
		complete := true
		for seq := 1; seq <= events; seq++ {
			if w.recv[seq] == 0 {
				complete = false
				continue
			}
			if !math.IsNaN(ts[seq]) {
				delays = append(delays, time.Duration(w.recv[seq]-start-int64(ts[seq]*1e9)))
			}
		}
		if !complete {
			res.incomplete++
		}
	}
	slices.Sort(delays)
	res.p50, res.p99, res.max = pct(delays, 0.50), pct(delays, 0.99), delays[len(delays)-1]
	res.rssPeakMiB = float64(rssPeak.Load()) / 1024
	res.hwmMiB = float64(hwm) / 1024
	res.buildSeconds = ts[events]
	res.eventsPerS = float64(events) / max(ts[events], 1e-9)
	return res, nil
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// procStatus is a /proc/PID/status field in KiB (0 when unreadable).
func procStatus(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}

// fanoutServe: the clients watch one build of trtbuild serve. The build is queued behind a
// blocker (one simulation slot) while they connect, and starts when the blocker is cancelled,
// so that every event is sent live.
func fanoutServe() (*fanResult, error) {
	dir, err := os.MkdirTemp("", "servebench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := startServe(dir, "--sim-slots", "1")
	if err != nil {
		return nil, err
	}
	defer s.stop()
	blocker, err := submit(s.base, map[string]any{"backend": "sim", "sim-speed": 0.01, "sim-seed": 999})
	if err != nil {
		return nil, err
	}
	target, err := submit(s.base, withSeed(buildOptions, 1))
	if err != nil {
		return nil, err
	}
	fmt.Printf("fan-out: trtbuild serve, %d clients, one build %v\n", *clients, optionText(buildOptions))
	r, err := fanout(s.base+"/v1/builds/"+target.ID+"/events", *clients, func() error { return cancel(s.base, blocker.ID, true) }, s.pid)
	if err != nil {
		return nil, fmt.Errorf("%w (server: %s)", err, lastLines(s.errs.String()))
	}
	state, err := waitEnded(s.base, target.ID)
	if err != nil {
		return nil, err
	}
	fmt.Printf("  %s; build %s, %.1f s\n", r.line(), state, r.buildSeconds)
	goal(state == "succeeded" && r.incomplete == 0, "every client got every event and the result (%d incomplete), the build succeeded (%s)", r.incomplete, state)
	goal(r.p99 <= targetDelayP99, "event delay p99 <= %v (%.1f ms)", targetDelayP99, ms(r.p99))
	goal(r.rssPeakMiB <= targetRSSMiB && r.hwmMiB <= targetRSSMiB, "server RSS <= %d MiB (peak %.1f MiB, VmHWM %.1f MiB)", targetRSSMiB, r.rssPeakMiB, r.hwmMiB)
	return r, nil
}

// fanoutPeer: the same clients on the Python relay, which runs trtbuild --progress json
// once POST /start comes.
func fanoutPeer() (*fanResult, error) {
	dir, err := os.MkdirTemp("", "servebench-peer-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	args := []string{*peerPath, "--trtbuild", *trtbuild, "--", "--backend", "sim", "--no-timing-cache", "--progress", "json",
		"--sim-speed", "5", "--sim-tactics", "32", "--sim-seed", "1", filepath.Join(*modelRoot, "convnet.onnx"), "-o", filepath.Join(dir, "convnet.engine")}
	s, err := start(*python, args...)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	fmt.Printf("fan-out: python relay (peer), %d clients, the same build\n", *clients)
	r, err := fanout(s.base+"/events", *clients, func() error {
		resp, err := client.Post(s.base+"/start", "application/json", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}, s.pid)
	if err != nil {
		return nil, fmt.Errorf("%w (peer: %s)", err, lastLines(s.errs.String()))
	}
	fmt.Printf("  %s\n", r.line())
	return r, nil
}

func withSeed(o map[string]any, seed int) map[string]any {
	c := map[string]any{}
	for k, v := range o {
		c[k] = v
	}
	c["sim-seed"] = seed
	return c
}

func optionText(o map[string]any) string {
	b, _ := json.Marshal(o)
	return string(b)
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " | ")
}

// --- submit → first event -------------------------------------------------------------------

func submitCase() error {
	dir, err := os.MkdirTemp("", "servebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := startServe(dir)
	if err != nil {
		return err
	}
	defer s.stop()
	fmt.Printf("submit → first event: %d submissions, each its own build key (sim-seed)\n", *submits)
	var times []time.Duration
	for i := 0; i <= *submits; i++ {
		sent := time.Now()
		snap, err := submit(s.base, withSeed(buildOptions, 100+i))
		if err != nil {
			return err
		}
		resp, err := client.Get(s.base + "/v1/builds/" + snap.ID + "/events")
		if err != nil {
			return err
		}
		var got time.Time
		sseclient.Read(resp.Body, func(ev sseclient.Event) bool { got = ev.Received; return false })
		resp.Body.Close()
		if got.IsZero() {
			return fmt.Errorf("build %s: the stream ended without an event", snap.ID)
		}
		if i > 0 { // the first one warms the server's caches (and the page cache) up
			times = append(times, got.Sub(sent))
		}
		if err := cancel(s.base, snap.ID, true); err != nil {
			return err
		}
		if _, err := waitEnded(s.base, snap.ID); err != nil {
			return err
		}
	}
	slices.Sort(times)
	p50 := pct(times, 0.5)
	fmt.Printf("  p50 %.1f ms  p99 %.1f ms  max %.1f ms  min %.1f ms\n", ms(p50), ms(pct(times, 0.99)), ms(times[len(times)-1]), ms(times[0]))
	goal(p50 <= targetFirstEvent, "submit → first event, median <= %v (%.1f ms)", targetFirstEvent, ms(p50))
	return nil
}

// --- history listing ------------------------------------------------------------------------

// resultLine is a realistic result event (about 400 bytes), as a succeeded build keeps it.
const resultLine = `{"v":1,"type":"result","t":12.345678,"status":"built","engine":"/srv/trtbuild/state/builds/%s/convnet.engine","engine_bytes":1291,"peak_rss_bytes":34144256,"duration":12.345678,"cache":{"hits":0,"misses":384},"key":"sha256:%064x","where":{"phase":"Building engine","path":["Building engine"]}}`

func listCase() error {
	dir, err := os.MkdirTemp("", "servebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := fillHistory(filepath.Join(dir, "history.db"), *rows); err != nil {
		return err
	}
	s, err := startServe(dir)
	if err != nil {
		return err
	}
	defer s.stop()
	// The whole history in one request (?limit=N), as a client that shows it all asks for it,
	// and the same in pages of 1,000 (?before=ID), for comparison.
	fmt.Printf("list: %d builds in the history, listed whole (GET /v1/builds?limit=%d) and in pages of 1000 (&before=ID), %d runs each\n", *rows, *rows, *listRuns)
	var whole, paged []time.Duration
	var bytesRead int
	for run := 0; run <= *listRuns; run++ {
		for _, size := range []int{*rows, 1000} {
			elapsed, n, err := listAll(s.base, size, *rows)
			if err != nil {
				return err
			}
			if run == 0 {
				continue // the first run warms the connection and the caches
			}
			if size == *rows {
				whole, bytesRead = append(whole, elapsed), n
			} else {
				paged = append(paged, elapsed)
			}
		}
	}
	slices.Sort(whole)
	slices.Sort(paged)
	fmt.Printf("  in one request: median %.1f ms (min %.1f, max %.1f), %.1f MB of JSON; in pages of 1000: median %.1f ms\n",
		ms(pct(whole, 0.5)), ms(whole[0]), ms(whole[len(whole)-1]), float64(bytesRead)/1e6, ms(pct(paged, 0.5)))
	goal(pct(whole, 0.5) <= targetList, "%d builds listed, median <= %v (%.1f ms)", *rows, targetList, ms(pct(whole, 0.5)))
	return nil
}

// listAll reads every build of the server's list in pages of size, timing the requests and
// reads; after the clock stops it checks that each of the want builds was listed once.
func listAll(base string, size, want int) (time.Duration, int, error) {
	var datas [][]byte
	before, n := "", 0
	t0 := time.Now()
	for {
		url := fmt.Sprintf("%s/v1/builds?limit=%d", base, size)
		if before != "" {
			url += "&before=" + before
		}
		resp, err := client.Get(url)
		if err != nil {
			return 0, 0, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET %s: %s: %.300s", url, resp.Status, data)
		}
		n += len(data)
		datas = append(datas, data)
		// The next page starts after this page's last build: the last "id" of the body (the
		// full decode, which checks it, is done after the clock stops).
		i := bytes.LastIndex(data, []byte(`{"id":"`))
		if i < 0 || bytes.Count(data, []byte(`{"id":"`)) < size {
			break
		}
		id, _, _ := bytes.Cut(data[i+7:], []byte(`"`))
		before = string(id)
	}
	elapsed := time.Since(t0)
	seen := map[string]bool{}
	for _, data := range datas {
		var page struct{ Builds []snapshot }
		if err := json.Unmarshal(data, &page); err != nil {
			return 0, 0, err
		}
		for _, b := range page.Builds {
			if seen[b.ID] {
				return 0, 0, fmt.Errorf("build %s listed twice", b.ID)
			}
			seen[b.ID] = true
		}
	}
	if len(seen) != want {
		return 0, 0, fmt.Errorf("listed %d builds, want %d", len(seen), want)
	}
	return elapsed, n, nil
}

// fillHistory writes n ended builds into a history file, one a second, 9 in 10 succeeded.
func fillHistory(path string, n int) error {
	st, err := history.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	t0 := time.Now().Add(-time.Duration(n+10) * time.Second).Truncate(time.Millisecond)
	for i := 0; i < n; i++ {
		created := t0.Add(time.Duration(i) * time.Second)
		id := fmt.Sprintf("%012x-%08x", created.UnixMilli(), i)
		state := "succeeded"
		if i%10 == 9 {
			state = "failed"
		}
		opts, _ := json.Marshal(withSeed(buildOptions, i))
		b := history.Build{
			ID: id, State: state, Key: fmt.Sprintf("sha256:%064x", i), Model: "convnet.onnx", Options: opts,
			RequestHash: fmt.Sprintf("%064x", i), Dir: "builds/" + id,
			Result:  json.RawMessage(fmt.Sprintf(resultLine, id, i)),
			Created: created, Started: created.Add(10 * time.Millisecond), Ended: created.Add(12 * time.Second),
		}
		if err := st.Put(b); err != nil {
			return err
		}
	}
	return nil
}
