package worker

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// serve runs Serve in this process with req, and returns the decoded events.
func serve(t *testing.T, req Request, ctrlExtra string) []progress.Event {
	t.Helper()
	msg, err := encodeControl(control{Type: controlBuild, Request: &req})
	if err != nil {
		t.Fatal(err)
	}
	ctrlR, ctrlW := io.Pipe()
	go func() {
		ctrlW.Write(msg)
		if ctrlExtra != "" {
			time.Sleep(50 * time.Millisecond)
			ctrlW.Write([]byte(ctrlExtra))
		}
		// Keep the pipe open, as a live parent does: closing it means "parent died".
	}()
	defer ctrlW.Close()
	plan, err := os.Create(filepath.Join(t.TempDir(), "plan"))
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	var out bytes.Buffer
	if err := Serve(ctrlR, &out, plan); err != nil {
		t.Fatal(err)
	}
	var events []progress.Event
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		e, err := progress.DecodeJSON(line)
		if err != nil {
			t.Fatalf("worker wrote a bad line: %v\n%s", err, line)
		}
		events = append(events, e)
	}
	return events
}

func simRequest(t *testing.T) Request {
	return Request{
		Model: filepath.Join("..", "..", "testdata", "models", "convnet.onnx"), Backend: "sim",
		LogSeverity: progress.SeverityWarning, OptLevel: -1, MaxAuxStreams: -1, NoTimingCache: true,
		Sim: SimConfig{Threads: 2, Step: 100 * time.Microsecond},
	}
}

// TestServeBuilds: a simulated build is a TensorRT build over the stand-in: TensorRT 11's tree
// (a root of 6 steps, at least 7 levels, no phase left open) and a result that says which
// TensorRT it played.
func TestServeBuilds(t *testing.T) {
	events := serve(t, simRequest(t), "")
	last := events[len(events)-1]
	if last.Type != progress.EventResult || last.Result.Status != progress.StatusBuilt || last.Result.EngineBytes == 0 {
		t.Fatalf("last event %+v, want a built result with a plan", last)
	}
	if !strings.HasPrefix(last.Result.TensorRT, "11.") || !strings.HasSuffix(last.Result.TensorRT, " (simulated)") {
		t.Errorf("result's TensorRT %q, want 11.x (simulated)", last.Result.TensorRT)
	}
	tree := progress.NewTree()
	depth := 0
	for i := range events {
		if p := tree.Apply(&events[i]); p != nil && events[i].Type == progress.EventPhaseStart {
			depth = max(depth, p.Depth+1)
		}
	}
	if roots := tree.Roots(); len(roots) != 1 || tree.Get(roots[0]).Steps != 6 {
		t.Errorf("roots %v, want one of 6 steps", roots)
	}
	if depth < 7 {
		t.Errorf("the tree is %d levels deep, want at least 7", depth)
	}
	if tree.Open() != 0 {
		t.Errorf("%d phases left open after a successful build", tree.Open())
	}
}

// TestServeCancelAndPrecisionNote: a simulated TensorRT 11 --fp16 build converts the model
// first, as a real one does, and says so; a cancel ends it without a plan.
func TestServeCancelAndPrecisionNote(t *testing.T) {
	req := simRequest(t)
	req.FP16 = true
	req.Sim.Step = 5 * time.Millisecond
	events := serve(t, req, `{"v":1,"type":"cancel"}`+"\n")
	converted := false
	for _, e := range events {
		converted = converted || e.Type == progress.EventLog && strings.Contains(e.Message, "converted the ONNX graph to fp16")
	}
	if !converted {
		t.Errorf("no event says the model was converted to fp16: %+v", events)
	}
	last := events[len(events)-1]
	if last.Result == nil || last.Result.Status != progress.StatusCancelled || last.Result.EngineBytes != 0 {
		t.Fatalf("last event %+v, want a cancelled result without a plan", last)
	}
}

func TestServeRefusesBadRequests(t *testing.T) {
	req := simRequest(t)
	req.HardwareCompat = "someday"
	events := serve(t, req, "")
	if r := events[len(events)-1].Result; r == nil || r.Status != progress.StatusFailed || !strings.Contains(r.Error, "hardware compatibility") {
		t.Fatalf("got %+v, want a failed result naming the option", events[len(events)-1])
	}
	for _, bad := range []string{"", "not json\n", `{"v":2,"type":"build"}` + "\n", `{"v":1,"type":"cancel"}` + "\n"} {
		var out bytes.Buffer
		if err := Serve(strings.NewReader(bad), &out, nil); err == nil {
			t.Errorf("Serve accepted control %q", bad)
		}
	}
}

func TestDropNote(t *testing.T) {
	if got := dropNote(cgo.Drops{}); got != "" {
		t.Errorf("no drops: %q", got)
	}
	var d cgo.Drops
	d.Steps = 35
	d.Logs[cgo.SeverityVerbose] = 1200
	d.Logs[cgo.SeverityInfo] = 1
	got := dropNote(d)
	for _, want := range []string{"dropped 1200 verbose log lines, 1 info log line, 35 step reports;", "the phase tree is complete"} {
		if !strings.Contains(got, want) {
			t.Errorf("dropNote = %q, want it to contain %q", got, want)
		}
	}
}

// convnetConv is a Conv node of the bundled convnet model, which the fp16 tests fail.
const convnetConv = "stage2/block1/conv2"

// TestServeSimFP16Failure: the simulated TensorRT 11.2 FP16 failure comes only where the node
// runs in FP16: a --fp16 build (which converts the model) fails on it and is rebuilt once
// keeping it (TestServeRebuildsKeepingFP32); --keep-fp32 naming the node or its op type avoids
// it, and so does a build without --fp16: one attempt, built.
func TestServeSimFP16Failure(t *testing.T) {
	for _, c := range []struct {
		fp16 bool
		keep []string
	}{{true, []string{convnetConv}}, {true, []string{"Conv"}}, {false, nil}} {
		req := simRequest(t)
		req.FP16 = c.fp16
		req.Sim.FP16FailNode = convnetConv
		req.KeepFP32 = c.keep
		events := serve(t, req, "")
		res := events[len(events)-1].Result
		if res == nil || res.Status != progress.StatusBuilt {
			t.Errorf("fp16 %v, keep %q: %+v, want built", c.fp16, c.keep, res)
		}
		for _, e := range events {
			if e.Type == progress.EventLog && strings.Contains(e.Message, "rebuilding once") {
				t.Errorf("fp16 %v, keep %q: %q, want one attempt", c.fp16, c.keep, e.Message)
			}
		}
	}
}

// TestServeRebuildsKeepingFP32: an --fp16 build that fails with TensorRT 11.2's low-precision
// failure is rebuilt once with the failing node kept in float32, in the same event stream: the
// second attempt's phases come after the first's (the first's all finished, the clock going
// on, IDs not reused), the rebuild is announced before it starts, what the first attempt timed
// is merged into the timing cache and found there by the second, and the plan is the second
// attempt's. With the node kept up front there is one attempt.
func TestServeRebuildsKeepingFP32(t *testing.T) {
	for _, keep := range [][]string{nil, {"Conv"}} {
		req := simRequest(t)
		req.FP16 = true
		req.Sim.Step = time.Microsecond
		req.Sim.FP16FailNode = convnetConv
		req.Sim.SkipFinishOnStop = true // as TensorRT may: the worker ends what is left open
		req.KeepFP32 = keep
		req.NoTimingCache = false
		req.TimingCache = filepath.Join(t.TempDir(), "sim.cache")
		events := serve(t, req, "")
		res := events[len(events)-1].Result
		if res == nil || res.Status != progress.StatusBuilt || res.EngineBytes == 0 {
			t.Fatalf("keep %q: result %+v, want built", keep, res)
		}
		tree := progress.NewTree()
		var notes []string
		var rebuildAt time.Duration
		var last time.Duration
		ids := map[int]bool{}
		for i := range events {
			e := &events[i]
			if e.Time < last {
				t.Fatalf("keep %q: event %d (%s) at %v, after an event at %v", keep, i, e.Type, e.Time, last)
			}
			last = e.Time
			if e.Type == progress.EventLog && strings.Contains(e.Message, "rebuilding once") {
				notes = append(notes, e.Message)
				rebuildAt = e.Time
			}
			if e.Type == progress.EventPhaseStart {
				if ids[e.ID] {
					t.Fatalf("keep %q: phase ID %d reused", keep, e.ID)
				}
				ids[e.ID] = true
				if e.Parent == 0 && len(tree.Roots()) > 0 && tree.Open() != 0 {
					t.Errorf("keep %q: root phase %d starts while %d phases of the first attempt are open", keep, e.ID, tree.Open())
				}
			}
			tree.Apply(e)
		}
		if keep != nil {
			if len(notes) != 0 || len(tree.Roots()) != 1 {
				t.Errorf("kept up front: notes %q, %d root phases; want no rebuild", notes, len(tree.Roots()))
			}
			continue
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "node "+convnetConv) || !strings.Contains(notes[0], "--keep-fp32 "+convnetConv) {
			t.Fatalf("notes %q, want one saying node b is kept and how to skip the retry", notes)
		}
		roots := tree.Roots()
		if len(roots) != 2 {
			t.Fatalf("%d root phases, want one per attempt", len(roots))
		}
		if second := tree.Get(roots[1]); second.Start < rebuildAt || !second.Finished {
			t.Errorf("second attempt's root %+v: want it started after the note (%v) and finished", second, rebuildAt)
		}
		// TensorRT tells no hits; the second attempt timed (added to the cache) fewer nodes than
		// a build that starts from nothing.
		if whole := wholeBuildMisses(t, req); res.CacheMisses == 0 || res.CacheMisses >= whole {
			t.Errorf("the second attempt timed %d new tactics, a build from an empty cache %d: it did not find what the first timed", res.CacheMisses, whole)
		}
	}
}

// wholeBuildMisses is how many tactics a build of req keeping its failing node up front adds
// to an empty timing cache.
func wholeBuildMisses(t *testing.T, req Request) uint64 {
	req.KeepFP32 = []string{req.Sim.FP16FailNode}
	req.TimingCache = filepath.Join(t.TempDir(), "empty.cache")
	events := serve(t, req, "")
	res := events[len(events)-1].Result
	if res == nil || res.Status != progress.StatusBuilt {
		t.Fatalf("keeping %s up front: %+v, want built", req.Sim.FP16FailNode, res)
	}
	return res.CacheMisses
}
