package cgo

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Progress sequences, real and the stand-in's, reduced to what a comparison of their shapes
// needs. The real ones are testdata/progress/*.tsv.gz: IProgressMonitor sequences of TensorRT
// 10.16.0, 10.16.1 and 11.0.0 reconstructed from NVIDIA's TensorRT cookbook (their headers say
// how).

// progressEvent is one monitor callback.
type progressEvent struct {
	kind   EventKind
	name   string
	parent string // of a start; "" for a root
	steps  int    // of a start
	step   int    // of a step
	thread uint64
}

// readRealProgress reads a reconstructed sequence: seq, event, depth, phase, arg per line.
func readRealProgress(t *testing.T, name string) []progressEvent {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "progress", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []progressEvent
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 5 {
			t.Fatalf("%s: %q is not 5 columns", name, line)
		}
		ev := progressEvent{name: cols[3], thread: 1}
		switch cols[1] {
		case "phaseStart":
			ev.kind = EventPhaseStart
			n, parent, _ := strings.Cut(cols[4], "|")
			ev.steps, err = strconv.Atoi(n)
			ev.parent = parent
		case "stepComplete":
			ev.kind = EventStep
			ev.step, err = strconv.Atoi(cols[4])
		case "phaseFinish":
			ev.kind = EventPhaseFinish
		default:
			t.Fatalf("%s: event %q", name, cols[1])
		}
		if err != nil {
			t.Fatalf("%s: %q: %v", name, line, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// progressOf keeps the monitor callbacks of a build's events.
func progressOf(events []RawEvent) []progressEvent {
	var out []progressEvent
	for _, ev := range events {
		if ev.Kind == EventLog {
			continue
		}
		out = append(out, progressEvent{kind: ev.Kind, name: ev.Name, parent: ev.Parent, steps: ev.Steps, step: ev.Step, thread: ev.Thread})
	}
	return out
}

// progressStats is the shape of a sequence.
type progressStats struct {
	phases, callbacks int
	names             map[string]bool // phase names
	pairs             map[string]bool // "parent > child" names
	maxDepth          int             // of a phase: 0 for a root
	roots             int
	rootSteps         []int            // nbSteps of each root
	rootLast          []int            // the last step each root reported
	early             map[string]int   // phases that finished before their last step, by name
	measures          int              // "Measuring tactic time" phases
	jumps             int              // steps more than one past the step before
	stepsUnderChild   int              // steps of a phase reported while a child of it was open
	nbSteps           map[string][]int // distinct nbSteps by name
	threads           map[uint64]bool
	concurrent        int // starts while a phase of another thread was open
}

// openPhase is a phase of progressStats' walk.
type openPhase struct {
	name         string
	steps, last  int
	depth        int
	thread       uint64
	parent       *openPhase
	openChildren int
}

// statsOf walks a sequence, failing t where it breaks the contract (a step or finish of no
// open phase, a step out of range or going back, a finish of a phase with open children, a
// phase left open at the end), and returns its shape.
func statsOf(t *testing.T, what string, events []progressEvent) progressStats {
	t.Helper()
	s := progressStats{names: map[string]bool{}, pairs: map[string]bool{}, early: map[string]int{},
		nbSteps: map[string][]int{}, threads: map[uint64]bool{}}
	var open []*openPhase // in start order
	find := func(name string, thread uint64) *openPhase {
		// The innermost open phase of that name, on the same thread if there is one.
		var other *openPhase
		for i := len(open) - 1; i >= 0; i-- {
			if open[i].name == name {
				if open[i].thread == thread {
					return open[i]
				}
				if other == nil {
					other = open[i]
				}
			}
		}
		return other
	}
	for i, ev := range events {
		s.callbacks++
		s.threads[ev.thread] = true
		switch ev.kind {
		case EventPhaseStart:
			s.phases++
			s.names[ev.name] = true
			if ev.steps <= 0 {
				t.Errorf("%s: event %d: %s starts with %d steps", what, i, ev.name, ev.steps)
			}
			p := &openPhase{name: ev.name, steps: ev.steps, last: -1, thread: ev.thread}
			for _, o := range open {
				if o.thread != ev.thread {
					s.concurrent++
					break
				}
			}
			if ev.parent != "" {
				p.parent = find(ev.parent, ev.thread)
				if p.parent == nil {
					t.Errorf("%s: event %d: %s starts under %s, which is not open", what, i, ev.name, ev.parent)
				} else {
					p.depth = p.parent.depth + 1
					p.parent.openChildren++
					s.pairs[ev.parent+" > "+ev.name] = true
				}
			} else {
				s.roots++
				s.rootSteps = append(s.rootSteps, ev.steps)
			}
			s.maxDepth = max(s.maxDepth, p.depth)
			if !containsInt(s.nbSteps[ev.name], ev.steps) {
				s.nbSteps[ev.name] = append(s.nbSteps[ev.name], ev.steps)
			}
			if ev.name == "Measuring tactic time" {
				s.measures++
			}
			open = append(open, p)
		case EventStep:
			p := find(ev.name, ev.thread)
			if p == nil {
				t.Errorf("%s: event %d: step %d of %s, which is not open", what, i, ev.step, ev.name)
				continue
			}
			if ev.step < 0 || ev.step >= p.steps || ev.step < p.last {
				t.Errorf("%s: event %d: step %d of %s (%d steps) after step %d", what, i, ev.step, ev.name, p.steps, p.last)
			}
			if ev.step > p.last+1 {
				s.jumps++
			}
			if p.openChildren > 0 {
				s.stepsUnderChild++
			}
			p.last = ev.step
		case EventPhaseFinish:
			p := find(ev.name, ev.thread)
			if p == nil {
				t.Errorf("%s: event %d: finish of %s, which is not open", what, i, ev.name)
				continue
			}
			if p.openChildren > 0 {
				t.Errorf("%s: event %d: %s finishes with %d children open", what, i, ev.name, p.openChildren)
			}
			if p.last < p.steps-1 {
				s.early[ev.name]++
			}
			if p.parent == nil {
				s.rootLast = append(s.rootLast, p.last)
			} else {
				p.parent.openChildren--
			}
			for k, o := range open {
				if o == p {
					open = append(open[:k], open[k+1:]...)
					break
				}
			}
		}
	}
	for _, o := range open {
		t.Errorf("%s: %s never finished", what, o.name)
	}
	return s
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func (s progressStats) earlyTotal() int {
	n := 0
	for _, c := range s.early {
		n += c
	}
	return n
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// String summarizes the shape for failure messages.
func (s progressStats) String() string {
	return fmt.Sprintf("%d phases, %d callbacks, depth %d, roots %v ending at %v, early %v, %d measures, %d jumps, %d steps under an open child, threads %d",
		s.phases, s.callbacks, s.maxDepth, s.rootSteps, s.rootLast, s.early, s.measures, s.jumps, s.stepsUnderChild, len(s.threads))
}
