package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/testtraces"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// realReport makes the report of a real TensorRT fixture (internal/testtraces), reading it as
// `trtbuild report` reads a trace: as a stream.
func realReport(t *testing.T, name string) *Report {
	t.Helper()
	data, err := testtraces.Bytes(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := FromReader(trace.NewReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRealReportGolden pins the report of every fixture, less its phase tree (which the
// fixture itself is): testdata/real_<fixture>.report.golden.json.
func TestRealReportGolden(t *testing.T) {
	for _, name := range testtraces.Names() {
		t.Run(name, func(t *testing.T) {
			r := realReport(t, name)
			r.Phases = nil
			var buf bytes.Buffer
			if err := WriteJSON(&buf, r); err != nil {
				t.Fatal(err)
			}
			golden(t, "real_"+name+".report.golden.json", buf.Bytes())
		})
	}
}

// TestRealReportSlowest: where the time went leads with the phases that took it: on TensorRT
// 10.16.1 at 5 ms a callback "Timing graph nodes" (28.6 s) and the "Evaluating tactic times"
// of 153 steps (8.4 s), not a phase of 0.025 s whose name holds " for "; no kind of phase is
// made from a name's "for …".
func TestRealReportSlowest(t *testing.T) {
	r := realReport(t, testtraces.TRT10161Paced)
	want := []struct {
		name  string
		steps int
		d     Seconds
	}{{"Timing graph nodes", 12, 28.645}, {"Evaluating tactic times", 153, 8.4}, {"Evaluating tactic times", 153, 8.4}}
	for i, w := range want {
		s := r.Slowest[i]
		if got := s.Path[len(s.Path)-1]; got != w.name || s.Steps != w.steps || s.Duration != w.d {
			t.Errorf("slowest #%d: %q, %d steps, %v; want %q, %d, %v", i+1, got, s.Steps, s.Duration, w.name, w.steps, w.d)
		}
	}
	for _, n := range r.ByName {
		if strings.HasSuffix(n.Name, "…") {
			t.Errorf("by name: %q", n.Name)
		}
	}
	for _, name := range testtraces.Names() {
		for _, s := range realReport(t, name).Slowest {
			switch s.Path[len(s.Path)-1] {
			case "Building engine", "Building engine from subgraph", "Computing profile costs", "Timing tactics":
				t.Errorf("%s: a wrapper is among the slowest: %v", name, s.Path)
			}
		}
	}
}

// TestRealReportFailure: the report of a failed build names the phase and the node of
// TensorRT's error.
func TestRealReportFailure(t *testing.T) {
	r := realReport(t, testtraces.TRT10161Failed)
	w := r.Result.Where
	if w == nil || w.Node != "/model/model.6/Conv + PWN(/model/model.7/LeakyRelu)" || w.Path[len(w.Path)-1] != "Measuring tactic time" {
		t.Fatalf("where %+v", w)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.UnescapeString(buf.String()), "Failed on node: /model/model.6/Conv + PWN(/model/model.7/LeakyRelu)") {
		t.Error("the page does not name the node")
	}
	// How far it got: the measure of the taskbar and the service (progress.Along).
	if r.Result.Along == nil || *r.Result.Along <= 0 || *r.Result.Along >= 1 {
		t.Errorf("a failed build is %v along", r.Result.Along)
	} else if want := fmt.Sprintf("%.0f%% of the way", *r.Result.Along*100); !strings.Contains(buf.String(), want) {
		t.Errorf("the page does not say %q", want)
	}
}

// TestRealTimeline: the HTML timeline of real builds: within its bar cap, labels that never
// shorten a name to its "for …" part, generations named.
func TestRealTimeline(t *testing.T) {
	for _, name := range testtraces.Names() {
		r := realReport(t, name)
		var buf bytes.Buffer
		if err := WriteHTML(&buf, r); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		if n := strings.Count(page, "<rect"); n == 0 || n > maxBars {
			t.Errorf("%s: %d bars", name, n)
		}
		if strings.Contains(page, ">optimization</text>") {
			t.Errorf("%s: a bar labelled by the end of its name", name)
		}
		if strings.Contains(page, "(generation 2)") != (name == testtraces.TRT10161Opt5) {
			t.Errorf("%s: generations named: %v", name, strings.Contains(page, "(generation 2)"))
		}
	}
}

// TestRealReportHTMLGolden pins the whole page of TensorRT 11.0's 22 phases.
func TestRealReportHTMLGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, realReport(t, testtraces.TRT1100)); err != nil {
		t.Fatal(err)
	}
	golden(t, "real_"+testtraces.TRT1100+".report.golden.html", buf.Bytes())
}
