package webui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/testtraces"
	"github.com/trtbuild/trtbuild/internal/trt"
	"github.com/trtbuild/trtbuild/internal/webui/webuitest"
)

// realRecording is a real TensorRT fixture (internal/testtraces) as trtbuild serve's event
// stream carries it: its result line as the session writes it, with where the build failed and
// the node of TensorRT's error.
func realRecording(t *testing.T, name string) ([]recordedEvent, progress.Result) {
	t.Helper()
	tr := testtraces.Must(name)
	begin := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st := progress.NewState(tr.Info, begin)
	st.Hinter, st.FailedNode = trt.Hint, trt.FailedNode
	var evs []recordedEvent
	add := func(e progress.Event) {
		data := bytes.TrimSpace(progress.AppendJSON(nil, &e))
		var pe phaseEvent
		if err := json.Unmarshal(data, &pe); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, recordedEvent{string(e.Type), data, pe})
	}
	add(progress.Event{Type: progress.EventBuild, Info: &tr.Info})
	for _, e := range tr.Events {
		st.Apply([]progress.Event{e}, begin.Add(e.Time))
		add(e)
	}
	res := st.End(*tr.Result, begin.Add(tr.Result.Duration))
	add(progress.Event{Type: progress.EventResult, Time: res.Duration, Result: &res})
	return evs, res
}

// TestBrowserRealBuilds follows real TensorRT builds on the page: a failed 10.16.1 build names
// the phase and the node of TensorRT's error; three engine generations are named so; and the
// thousand "Measuring tactic time" phases of 10.16.1 fold into counts, so the page keeps a
// bounded tree.
func TestBrowserRealBuilds(t *testing.T) {
	br := webuitest.New(t, browserTimeout)

	recording, res := realRecording(t, testtraces.TRT10161Failed)
	f := newFakeAPI(t, recording)
	f.delay = 0
	srv := f.start()
	id := f.newBuild("mnist.onnx").ID
	br.Do(t, "opening the failed build", chromedp.Navigate(srv.URL+"/#/builds/"+id))
	br.WaitFor(t, "the failure", `document.getElementById('state').textContent === 'failed'`)
	br.WaitFor(t, "the stream's result", `document.querySelector('#tree .where') !== null`)
	if got := br.Text(t, "node"); got != res.Where.Node {
		t.Errorf("#node = %q, want %q", got, res.Where.Node)
	}
	if got, want := br.Text(t, "where"), strings.Join(res.Where.Path, " › "); got != want {
		t.Errorf("#where = %q, want %q", got, want)
	}
	if n := webuitest.Eval[int](t, br, `document.querySelectorAll('#tree .where').length`); n != 1 {
		t.Errorf("%d phases marked where the build failed", n)
	}

	recording, _ = realRecording(t, testtraces.TRT10161Opt5)
	f = newFakeAPI(t, recording)
	f.delay = 0
	srv = f.start()
	id = f.newBuild("mnist.onnx").ID
	br.Do(t, "opening the build of three generations", chromedp.Navigate(srv.URL+"/#/builds/"+id))
	br.WaitFor(t, "the result", `document.getElementById('state').textContent === 'succeeded'`)
	br.WaitFor(t, "the three generations to end", `document.querySelectorAll('#tree > li.done').length === 3`)
	roots := webuitest.Eval[[]string](t, br, `Array.from(document.querySelectorAll('#tree > li > .row > .name')).map((e) => e.textContent)`)
	if got := strings.Join(roots, "|"); got != "Building engine|Building engine (generation 2)|Building engine (generation 3)" {
		t.Errorf("root phases %q", got)
	}
	phases := 0
	for _, e := range recording {
		if e.typ == "phase_start" {
			phases++
		}
	}
	nodes := webuitest.Eval[int](t, br, `document.querySelectorAll('#tree [data-phase-id]').length`)
	folded := webuitest.Eval[string](t, br, `Array.from(document.querySelectorAll('#tree .folded')).map((e) => e.textContent).join('|')`)
	if nodes > phases/2 || !strings.Contains(folded, "earlier phases") {
		t.Errorf("the page keeps %d of %d phases, folded: %q", nodes, phases, folded)
	}
	br.CheckConsole(t)
}
