package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/testtraces"
)

// TestReportAndTrace builds once with --report and --trace, then checks that `trtbuild report`
// of the trace writes the very same page, and what the JSON report says about the build.
func TestReportAndTrace(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	tracePath := filepath.Join(dir, "build.jsonl")
	live := filepath.Join(dir, "live.html")
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "20", "--trace", tracePath, "--report", live, model)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	page, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg class=\"timeline\"", "Building engine", "Where the time went", "timing cache"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}

	again := filepath.Join(dir, "again.html")
	r = trtbuild(t, nil, "report", tracePath, "-o", again)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Wrote "+again {
		t.Fatalf("report: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if got, _ := os.ReadFile(again); !bytes.Equal(got, page) {
		t.Error("the report made from the trace differs from the one --report wrote")
	}

	jsonPath := filepath.Join(dir, "report.json")
	if r := trtbuild(t, nil, "report", tracePath, "-o", jsonPath); r.code != 0 {
		t.Fatalf("report -o .json: exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Build  struct{ Model string }
		Result struct {
			Status  string
			PeakRSS int64 `json:"peak_rss_bytes"`
		}
		Count  int `json:"phase_count"`
		Phases []struct {
			Name     string
			Duration float64
			Children []json.RawMessage
		}
		Slowest []struct{ Path []string }
		ByName  []struct {
			Name  string
			Count int
			Steps int
		} `json:"by_name"`
		Cache struct{ Misses int } `json:"timing_cache"`
	}
	data, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Build.Model != model || rep.Result.Status != "built" || rep.Result.PeakRSS <= 0 || rep.Cache.Misses == 0 {
		t.Errorf("report: model %q, result %+v, cache misses %d", rep.Build.Model, rep.Result, rep.Cache.Misses)
	}
	if len(rep.Phases) != 1 || rep.Phases[0].Name != "Building engine" || rep.Phases[0].Duration <= 0 || len(rep.Slowest) == 0 || rep.Count < 24 {
		t.Errorf("report phases: %d phases, roots %+v, %d slowest", rep.Count, rep.Phases, len(rep.Slowest))
	}
	found := false
	for _, n := range rep.ByName {
		found = found || (n.Name == "Measuring tactic time" && n.Count > 0 && n.Steps > 0)
	}
	if !found {
		t.Errorf("by_name lacks the tactic timing: %+v", rep.ByName)
	}
}

func TestReportErrors(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := t.TempDir()
	model := repoModel(t, "fp16.onnx")
	malformed := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(malformed, []byte(`{"v":1,"type":"build","t":0}`+"\n"+"not json\n"), 0o644)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing trace", []string{"report", filepath.Join(dir, "none.jsonl")}, 2, "does not exist; record one with trtbuild --trace FILE"},
		{"trace is a folder", []string{"report", dir, "-o", filepath.Join(dir, "x.html")}, 2, "is a directory"},
		{"malformed trace", []string{"report", malformed, "-o", filepath.Join(dir, "x.html")}, 1, "line 2: malformed event line"},
		{"empty trace", []string{"report", empty, "-o", filepath.Join(dir, "x.html")}, 1, "holds no events"},
		{"unknown format", []string{"report", malformed, "-o", filepath.Join(dir, "x.pdf")}, 2, "name the file .json or .html"},
		{"report flag format", []string{"--backend", "sim", "--report", filepath.Join(dir, "r.txt"), model}, 2, "invalid --report"},
		{"report flag folder", []string{"--backend", "sim", "--report", filepath.Join(dir, "none", "r.html"), model}, 2, "cannot write --report"},
		{"trace flag folder", []string{"--backend", "sim", "--trace", filepath.Join(dir, "none", "t.jsonl"), model}, 2, "cannot write --trace"},
		{"replay missing", []string{"replay", filepath.Join(dir, "none.jsonl")}, 2, "does not exist"},
		{"replay bad speed", []string{"replay", "--speed", "fast", malformed}, 2, "invalid --speed"},
		{"replay malformed", []string{"replay", "--speed", "0", malformed}, 1, "line 2"},
		// A model (or any other file) is not a trace: bad input, with what to do instead.
		{"report of a model", []string{"report", model, "-o", filepath.Join(dir, "x.html")}, 2, "this is not a trace recorded by --trace or --progress json; record one with"},
		{"replay of a model", []string{"replay", "--speed", "0", model}, 2, "this is not a trace recorded by --trace or --progress json; record one with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, tt.args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != tt.code || len(lines) != 1 || !strings.HasPrefix(lines[0], "trtbuild: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("exit %d (want %d), stderr should be one line containing %q:\n%s", r.code, tt.code, tt.want, r.stderr)
			}
		})
	}
	if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
		t.Error("a build with a bad --report or --trace ran")
	}
}

// TestReplaySameAsBuild records a build with --trace and replays the trace: the plain lines are
// those the build printed, and the JSON lines are the trace itself.
func TestReplaySameAsBuild(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	tracePath := filepath.Join(t.TempDir(), "build.jsonl")
	build := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "20", "--progress", "plain", "--trace", tracePath, model)
	if build.code != 0 {
		t.Fatalf("exit %d\n%s", build.code, build.stderr)
	}
	if !strings.Contains(build.stdout, "INFO:") || !strings.Contains(build.stdout, "#5 ") {
		t.Fatalf("the build's output is too plain to compare:\n%s", build.stdout)
	}
	replay := trtbuild(t, nil, "replay", "--speed", "inf", "--progress", "plain", tracePath)
	if replay.code != 0 {
		t.Fatalf("replay: exit %d\n%s", replay.code, replay.stderr)
	}
	if replay.stdout != build.stdout {
		t.Errorf("replay printed:\n%s\nthe build printed:\n%s", replay.stdout, build.stdout)
	}
	trace, _ := os.ReadFile(tracePath)
	asJSON := trtbuild(t, nil, "replay", "--speed", "0", "--progress", "json", tracePath)
	if asJSON.code != 0 || asJSON.stdout != string(trace) {
		t.Errorf("replay --progress json (exit %d) differs from the trace:\n%s", asJSON.code, asJSON.stdout)
	}
}

// TestReplayTimingAndInterrupt replays a hand-written trace whose build lasted two minutes at
// ten times the speed, and stops it with SIGINT.
func TestReplayTimingAndInterrupt(t *testing.T) {
	tracePath := filepath.Join(t.TempDir(), "slow.jsonl")
	lines := []string{
		`{"v":1,"type":"build","t":0.000000,"model":"m.onnx","engine":"m.engine","backend":"sim"}`,
		`{"v":1,"type":"phase_start","t":0.000000,"id":1,"parent":0,"name":"Building engine","steps":4,"thread":1}`,
		`{"v":1,"type":"step","t":1.000000,"id":1,"step":0}`,
		`{"v":1,"type":"step","t":120.000000,"id":1,"step":1}`,
		`{"v":1,"type":"result","t":120.000000,"status":"built","engine":"m.engine","duration":120.0}`,
	}
	os.WriteFile(tracePath, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	cmd, errOut, out := startReplay(t, "replay", "--speed", "10", "--progress", "plain", tracePath)
	start := time.Now()
	deadline := start.Add(10 * time.Second)
	for !strings.Contains(out.String(), "Building engine 1/4") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The first step was recorded at 1s: at ten times the speed it shows after about 0.1s.
	if !strings.Contains(out.String(), "Building engine 1/4") {
		t.Fatalf("the first step never showed:\n%s", out)
	}
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(out.String(), "2/4") {
		t.Fatalf("the step recorded at 120s showed early:\n%s", out)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, 10*time.Second); code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130\nstderr: %s", code, errOut)
	}
	if !strings.Contains(out.String(), "Build cancelled") {
		t.Errorf("the replay did not end its view:\n%s", out)
	}
}

// startReplay starts trtbuild and collects its stdout as it comes.
func startReplay(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *lockedBuffer) {
	t.Helper()
	return start(t, "", args...)
}

// TestReportDiff records a cold build and one served from the timing cache, and compares them
// as traces and as JSON reports.
func TestReportDiff(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := t.TempDir()
	model := repoModel(t, "convnet.onnx")
	env := []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	cold, warm := filepath.Join(dir, "cold.jsonl"), filepath.Join(dir, "warm.jsonl")
	coldJSON := filepath.Join(dir, "cold.json")
	for _, tr := range []string{cold, warm} {
		if r := trtbuild(t, env, "--backend", "sim", "--sim-speed", "20", "--progress", "quiet", "--trace", tr, "-o", filepath.Join(dir, "m.engine"), model); r.code != 0 {
			t.Fatalf("build: exit %d\n%s", r.code, r.stderr)
		}
	}
	if r := trtbuild(t, nil, "report", cold, "-o", coldJSON); r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	for _, a := range []string{cold, coldJSON} {
		r := trtbuild(t, nil, "report", "--diff", a, warm)
		if r.code != 0 {
			t.Fatalf("diff: exit %d\n%s", r.code, r.stderr)
		}
		// TensorRT tells no hits: the cold build timed what the warm one found in the cache.
		if m := regexp.MustCompile(`timing cache\s+(\d+) timed\s+used, nothing timed`).FindStringSubmatch(r.stdout); m == nil || m[1] == "0" {
			t.Errorf("%s: the diff does not show a cold build against one served from the cache:\n%s", filepath.Base(a), r.stdout)
		}
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`build time\s+\S+ \S+\s+\S+ \S+\s+-\d+%`),
			regexp.MustCompile(`engine size\s+\d`),
			regexp.MustCompile(`  Timing graph nodes\s+`),
		} {
			if !want.MatchString(r.stdout) {
				t.Errorf("%s: the diff lacks %s:\n%s", filepath.Base(a), want, r.stdout)
			}
		}
	}
	for _, args := range [][]string{{"report", "--diff", cold}, {"report", "--diff", cold, warm, "-o", coldJSON}, {"report", "--diff", model, warm}} {
		if r := trtbuild(t, nil, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}

// buildTime reads the build time of a plain log line: "#8 12.3s …", "   1m42s …".
var buildTime = regexp.MustCompile(`^(?:#\d+|  ) (?:(\d+)h(\d\d)m|(\d+)m(\d\d)s|(\d+\.\d)s) `)

func lineTime(line string) (time.Duration, bool) {
	m := buildTime.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	n := func(s string) time.Duration {
		v, _ := strconv.ParseFloat(s, 64)
		return time.Duration(v * float64(time.Second))
	}
	switch {
	case m[1] != "":
		return n(m[1])*3600 + n(m[2])*60, true
	case m[3] != "":
		return n(m[3])*60 + n(m[4]), true
	}
	return n(m[5]), true
}

// TestReplayRealTraceIsNeverQuiet replays real TensorRT 10.16.1 progress at 5 ms a callback
// (internal/testtraces) twice as fast with --progress plain: by the build times its lines
// print, the log is never quiet for 10 s, and lines name the timing phases throughout the 29 s
// of "Timing graph nodes"; and `trtbuild report` of it lists where the time went first.
func TestReplayRealTraceIsNeverQuiet(t *testing.T) {
	t.Parallel() // a real subprocess
	data, err := testtraces.Bytes(testtraces.TRT10161Paced)
	if err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(tracePath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := trtbuild(t, nil, "replay", "--speed", "2", "--progress", "plain", tracePath)
	if r.code != 0 {
		t.Fatalf("replay: exit %d\n%s", r.code, r.stderr)
	}
	var prev, quiet time.Duration
	timing := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		at, ok := lineTime(l)
		if !ok {
			continue
		}
		quiet, prev = max(quiet, at-prev), at
		if at > time.Second && at < 29*time.Second && strings.Contains(l, "Timing graph nodes") {
			timing++
		}
	}
	if quiet >= 10*time.Second || prev < 32*time.Second || timing < 3 {
		t.Errorf("longest quiet stretch %v, last line at %v, %d lines name the timing phase:\n%s", quiet, prev, timing, r.stdout)
	}
	t.Logf("longest quiet stretch %v; %d lines in the timing window", quiet, timing)

	out := filepath.Join(t.TempDir(), "report.json")
	if r := trtbuild(t, nil, "report", tracePath, "-o", out); r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Slowest []struct {
			Path     []string
			Duration float64
		}
	}
	raw, _ := os.ReadFile(out)
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Slowest) < 2 {
		t.Fatalf("report %s: %v", raw, err)
	}
	first, second := rep.Slowest[0], rep.Slowest[1]
	if first.Path[len(first.Path)-1] != "Timing graph nodes" || first.Duration < 28 || second.Path[len(second.Path)-1] != "Evaluating tactic times" || second.Duration < 8 {
		t.Errorf("slowest: %+v", rep.Slowest[:2])
	}
}
