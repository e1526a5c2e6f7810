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
	"github.com/trtbuild/trtbuild/internal/trt"
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
		NodeNames: []string{"a", "b", "c"},
		Sim:       SimConfig{Threads: 2, Step: 100 * time.Microsecond},
	}
}

func TestServeBuilds(t *testing.T) {
	events := serve(t, simRequest(t), "")
	last := events[len(events)-1]
	if last.Type != progress.EventResult || last.Result.Status != progress.StatusBuilt || last.Result.EngineBytes == 0 {
		t.Fatalf("last event %+v, want a built result with a plan", last)
	}
	tree := progress.NewTree()
	layers := 0
	for i := range events {
		if p := tree.Apply(&events[i]); p != nil && events[i].Type == progress.EventPhaseStart && strings.HasPrefix(p.Name, "Finding fastest tactic for ") {
			layers++
			if p.Depth != 4 {
				t.Errorf("%s at depth %d, want 4", p.Name, p.Depth)
			}
		}
	}
	if layers != 3 {
		t.Errorf("%d layers timed, want the 3 named in the request", layers)
	}
	if tree.Open() != 0 {
		t.Errorf("%d phases left open after a successful build", tree.Open())
	}
}

func TestServeCancelAndPrecisionNote(t *testing.T) {
	req := simRequest(t)
	req.FP16 = true
	req.Sim.Step = 5 * time.Millisecond
	events := serve(t, req, `{"v":1,"type":"cancel"}`+"\n")
	if events[0].Type != progress.EventLog || !strings.Contains(events[0].Message, "does not change precision") {
		t.Errorf("first event %+v, want the simulated builder's precision note", events[0])
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

// TestServeSimFP16Failure: the simulated TensorRT 11.2 FP16 failure reaches the result with
// the failing node named as trt.LowPrecisionFailingNode reads it, and --keep-fp32 naming the
// node (or its op type) avoids it.
func TestServeSimFP16Failure(t *testing.T) {
	for _, keep := range [][]string{nil, {"b"}, {"Conv"}} {
		req := simRequest(t)
		req.LayerOps = []string{"Relu", "Conv", "Softmax"}
		req.Sim.FP16FailNode = "b"
		req.KeepFP32 = keep
		events := serve(t, req, "")
		res := events[len(events)-1].Result
		if keep != nil {
			if res == nil || res.Status != progress.StatusBuilt {
				t.Errorf("keep %q: %+v, want built", keep, res)
			}
			continue
		}
		if res == nil || res.Status != progress.StatusFailed {
			t.Fatalf("no keep: %+v, want failed", res)
		}
		if node, ok := trt.LowPrecisionFailingNode(res.Error); !ok || node != "b" {
			t.Errorf("failure %q: failing node %q, %v; want b", res.Error, node, ok)
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
		req.NodeNames = []string{"a", "b", "c"}
		req.LayerOps = []string{"Relu", "Conv", "Softmax"}
		req.Sim.Threads = 1
		req.Sim.FP16FailNode = "b"
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
		if len(notes) != 1 || !strings.Contains(notes[0], "node b") || !strings.Contains(notes[0], "--keep-fp32 b") {
			t.Fatalf("notes %q, want one saying node b is kept and how to skip the retry", notes)
		}
		roots := tree.Roots()
		if len(roots) != 2 {
			t.Fatalf("%d root phases, want one per attempt", len(roots))
		}
		if second := tree.Get(roots[1]); second.Start < rebuildAt || !second.Finished || second.Early {
			t.Errorf("second attempt's root %+v: want it started after the note (%v) and finished", second, rebuildAt)
		}
		if res.CacheHits == 0 {
			t.Errorf("the second attempt found nothing the first timed in the cache (hits %d, misses %d)", res.CacheHits, res.CacheMisses)
		}
	}
}
