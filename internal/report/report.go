// Package report turns a build's phase tree into a report: a JSON document (phase tree with
// durations and step counts, the slowest phases, phase names by total time, cache hits and
// misses, the worker's peak memory, the result) or a self-contained HTML page with a timeline
// of the phases drawn as an inline SVG chart. The same functions serve `--report FILE` (from
// the tree the session kept) and `trtbuild report TRACE.jsonl` (from a recorded event stream).
package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// Version is the "report_version" of the JSON document. It changes when a field changes
// meaning or is removed; new fields may appear without a change.
const Version = 1

// Limits on what a report lists. The JSON phase tree is always complete.
const (
	slowestCount = 10  // phases in Slowest
	byNameCount  = 15  // names in ByName
	logCount     = 100 // warning and error lines kept
)

// Report is everything a report shows. Times are seconds since the build started, on the
// builder's clock, rounded to microseconds.
type Report struct {
	Version int                `json:"report_version"`
	Build   progress.BuildInfo `json:"build"`
	Result  Result             `json:"result"`
	// Span is the time from the build's start to its last event.
	Span   Seconds  `json:"span"`
	Phases []*Phase `json:"phases"`
	Count  int      `json:"phase_count"`
	// Folded is how many of Count were folded into the totals (not in Phases).
	Folded  int         `json:"folded_phases,omitempty"`
	Depth   int         `json:"max_depth"`
	Slowest []Slow      `json:"slowest"`
	ByName  []NameTotal `json:"by_name"`
	Cache   Cache       `json:"timing_cache"`
	Logs    []Log       `json:"logs,omitempty"`
	// Notes say what the report could not know, e.g. that a trace ends without a result.
	Notes []string `json:"notes,omitempty"`
}

// Result is how the build ended, as progress.Result with the duration in seconds.
type Result struct {
	Status       progress.Status `json:"status"`
	Error        string          `json:"error,omitempty"`
	Engine       string          `json:"engine,omitempty"`
	EngineBytes  int64           `json:"engine_bytes,omitempty"`
	Duration     Seconds         `json:"duration"`
	PeakRSS      int64           `json:"peak_rss_bytes,omitempty"`
	DroppedSteps uint64          `json:"dropped_steps,omitempty"`
	// Where is the phase a build that did not succeed ended in; Hint what to try after a
	// failure (see progress.Result).
	Where *progress.Where `json:"where,omitempty"`
	Hint  string          `json:"hint,omitempty"`
	// Along is how far along the build got, 0 to 1 (progress.Along: the measure of the
	// taskbar, MCP's progress and the service's snapshots), rounded to 4 places; absent when
	// the trace has no phase.
	Along *float64 `json:"along,omitempty"`
}

// StatusUnknown is the status of a report made from a trace that ends without a result.
const StatusUnknown progress.Status = "unknown"

// Cache is what the builder said about the timing cache.
type Cache struct {
	Used    bool    `json:"used"`
	Hits    uint64  `json:"hits"`
	Misses  uint64  `json:"misses"`
	HitRate float64 `json:"hit_rate"` // hits / (hits + misses), 0 when both are 0
}

// Phase is one node of the phase tree.
type Phase struct {
	ID       int     `json:"id"`
	Name     string  `json:"name"`
	Thread   uint64  `json:"thread"`
	Depth    int     `json:"depth"`
	Start    Seconds `json:"start"`
	End      Seconds `json:"end"`
	Duration Seconds `json:"duration"`
	Self     Seconds `json:"self"` // Duration less the time covered by any child
	Steps    int     `json:"steps"`
	Done     int     `json:"done"`
	Early    bool    `json:"early,omitempty"`
	Aborted  bool    `json:"aborted,omitempty"` // still open when the build ended
	// Generation numbers the root phases of a build with several, from 1: TensorRT at
	// optimization level 5 builds the engine once per backend strategy (progress.Phase).
	Generation int      `json:"generation,omitempty"`
	Children   []*Phase `json:"children,omitempty"`
}

// Slow is one of the phases where the time went (progress.Tree.Spent): a phase that is no
// wrapper of its children, whatever its name, by its duration.
type Slow struct {
	ID       int      `json:"id"`
	Path     []string `json:"path"`
	Self     Seconds  `json:"self"`
	Duration Seconds  `json:"duration"`
	// Steps is the phase's step count; Generation that of its root in a build of several
	// (see Phase.Generation).
	Steps      int `json:"steps"`
	Generation int `json:"generation,omitempty"`
}

// NameTotal sums the phases of one kind of name (progress.Kind).
type NameTotal struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	Total Seconds `json:"total"` // sum of durations; may exceed the span when phases overlap
	Self  Seconds `json:"self"`
	Max   Seconds `json:"max"`
	Steps int     `json:"steps"` // steps completed, summed
}

// Log is a warning or error line of the build.
type Log struct {
	Time     Seconds `json:"t"`
	Severity string  `json:"severity"`
	Message  string  `json:"message"`
}

// Seconds is a duration that encodes as seconds with microsecond precision.
type Seconds float64

// Secs converts a duration, rounding to microseconds.
func Secs(d time.Duration) Seconds {
	return Seconds(math.Round(float64(d)/1e3) / 1e6)
}

// MarshalJSON writes at most six decimals, so reports compare byte for byte.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%.6f", float64(s)), nil
}

// FromTree makes the report of a build whose events were applied to tree, which the session
// has ended (progress.State.End): phases still open are reported as open at the newest
// event's time, and tree is not changed. Every time is read as the JSON-lines encoding
// rounds it, so the report of a live build and of its trace are the same. logs are the
// build's log events (only warnings and more severe ones are kept); res is how it ended.
func FromTree(tree *progress.Tree, info progress.BuildInfo, res progress.Result, logs []progress.Event) *Report {
	// What the tree noted to fold is folded, whichever batch it was noted in: a live build's
	// report and its trace's are the same.
	tree.FoldPending()
	last := wireTime(tree.Last)
	r := &Report{
		Version: Version,
		Build:   info,
		Span:    Secs(last),
		Result: Result{
			Status: res.Status, Error: res.Error, Engine: res.Engine, EngineBytes: res.EngineBytes,
			Duration: Secs(res.Duration), PeakRSS: res.PeakRSS, DroppedSteps: res.DroppedSteps,
			Where: res.Where, Hint: res.Hint,
		},
		Cache:   Cache{Used: res.CacheUsed, Hits: res.CacheHits, Misses: res.CacheMisses},
		Phases:  []*Phase{},
		Slowest: []Slow{},
		ByName:  []NameTotal{},
	}
	if n := res.CacheHits + res.CacheMisses; n > 0 {
		r.Cache.HitRate = math.Round(float64(res.CacheHits)/float64(n)*1e4) / 1e4
	}
	if done, total, ok := progress.Along(tree, res.Status == progress.StatusBuilt); ok && total > 0 {
		f := math.Round(done/total*1e4) / 1e4
		r.Result.Along = &f
	}
	var all []*Phase
	var build func(id int) *Phase
	build = func(id int) *Phase {
		p := tree.Get(id)
		start, end, aborted := span(p, last)
		out := &Phase{
			ID: p.ID, Name: p.Name, Thread: p.Thread, Depth: p.Depth,
			Start: Secs(start), End: Secs(end), Duration: Secs(end - start),
			Steps: p.Steps, Done: p.Done, Early: p.Early || (aborted && p.Done < p.Steps), Aborted: aborted,
		}
		all = append(all, out)
		spans := make([][2]time.Duration, 0, len(p.Children))
		for _, c := range p.Children {
			out.Children = append(out.Children, build(c))
			cs, ce, _ := span(tree.Get(c), last)
			spans = append(spans, [2]time.Duration{max(cs, start), min(ce, end)})
		}
		out.Self = Secs(end - start - progress.Covered(spans))
		r.Depth = max(r.Depth, p.Depth)
		return out
	}
	for _, id := range tree.Roots() {
		r.Phases = append(r.Phases, build(id))
	}
	if len(r.Phases) > 1 {
		for _, p := range r.Phases {
			p.Generation = tree.Get(p.ID).Generation
		}
	}
	r.Count = len(all)
	folded := tree.Folded()
	if folded != nil {
		r.Count += folded.Count
		r.Folded = folded.Count
		r.Notes = append(r.Notes, fmt.Sprintf("%d finished phases were folded into totals to keep memory bounded; the phase tree lists the other %d, the tables count them all", folded.Count, len(all)))
	}
	r.Slowest = slowest(tree, all)
	r.ByName = byName(all, folded)
	for _, e := range logs {
		if e.Type != progress.EventLog || e.Severity > progress.SeverityWarning {
			continue
		}
		if len(r.Logs) == logCount {
			r.Notes = append(r.Notes, fmt.Sprintf("only the first %d warnings and errors are listed", logCount))
			break
		}
		r.Logs = append(r.Logs, Log{Time: Secs(e.Time), Severity: e.Severity.String(), Message: e.Message})
	}
	return r
}

// span returns a phase's start and end as a trace reads them back, a phase still open ending
// at last, and whether it was still open when the build ended.
func span(p *progress.Phase, last time.Duration) (start, end time.Duration, aborted bool) {
	start = wireTime(p.Start)
	if !p.Finished || p.Aborted {
		// Ended by the build's end: at the newest event, which a trace also knows.
		return start, max(last, start), true
	}
	return start, max(wireTime(p.End), start), p.Aborted
}

// slowest lists where the time went: the longest phases that are no wrapper of their children
// (progress.Phase.Wrapper), whatever their names, folded ones included (progress.Tree.Spent):
// "Timing graph nodes" that took 28.6 s leads, then the "Evaluating tactic times" of 8.4 s
// under it. The phases still in the tree are ranked by the report's own times (as a trace
// rounds them, open phases ending at the newest event), so that the report of a live build and
// of its trace agree.
func slowest(tree *progress.Tree, all []*Phase) []Slow {
	generations := len(tree.Roots()) > 1
	var cands []Slow
	in := make(map[int]bool, len(all))
	var visit func(p *Phase, gen int, path []string)
	visit = func(p *Phase, gen int, path []string) {
		in[p.ID] = true
		path = append(path, p.Name)
		if q := tree.Get(p.ID); p.Duration > 0 && q != nil && !q.Wrapper(tree.Last) {
			s := Slow{ID: p.ID, Path: slices.Clone(path), Self: p.Self, Duration: p.Duration, Steps: p.Steps}
			if generations {
				s.Generation = gen
			}
			cands = append(cands, s)
		}
		for _, c := range p.Children {
			visit(c, gen, path)
		}
	}
	for _, r := range all {
		if r.Depth == 0 {
			visit(r, tree.Get(r.ID).Generation, nil)
		}
	}
	for _, sp := range tree.Spent() {
		if in[sp.ID] {
			continue
		}
		s := Slow{ID: sp.ID, Path: sp.Path, Self: Secs(sp.Self), Steps: sp.Steps,
			Duration: Secs(wireTime(sp.Start+sp.Duration) - wireTime(sp.Start))}
		if generations {
			s.Generation = sp.Generation
		}
		cands = append(cands, s)
	}
	slices.SortStableFunc(cands, func(a, b Slow) int {
		return cmp.Or(cmp.Compare(b.Duration, a.Duration), cmp.Compare(a.ID, b.ID))
	})
	out := []Slow{}
	for _, c := range cands {
		if len(out) == slowestCount {
			break
		}
		out = append(out, c)
	}
	return out
}

// byName sums the phases by kind of name (every "Finding fastest tactic for …" together, see
// progress.Kind), folded ones included, most total time first.
func byName(all []*Phase, folded *progress.Folded) []NameTotal {
	index := map[string]int{}
	var totals []NameTotal
	if folded != nil {
		for _, k := range folded.Kinds {
			index[k.Kind] = len(totals)
			totals = append(totals, NameTotal{Name: k.Kind, Count: k.Count, Total: Secs(k.Total), Self: Secs(k.Self), Max: Secs(k.Max), Steps: k.Steps})
		}
	}
	for _, p := range all {
		name := progress.Kind(p.Name)
		i, ok := index[name]
		if !ok {
			i = len(totals)
			index[name] = i
			totals = append(totals, NameTotal{Name: name})
		}
		t := &totals[i]
		t.Count++
		t.Total = round6(t.Total + p.Duration)
		t.Self = round6(t.Self + p.Self)
		t.Max = max(t.Max, p.Duration)
		t.Steps += p.Done
	}
	slices.SortStableFunc(totals, func(a, b NameTotal) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if len(totals) > byNameCount {
		totals = totals[:byNameCount]
	}
	if totals == nil {
		totals = []NameTotal{}
	}
	return totals
}

func round6(s Seconds) Seconds { return Seconds(math.Round(float64(s)*1e6) / 1e6) }

// FromReader makes the report of a trace read as a stream: memory stays bounded however long
// the trace is (the session's state folds old phases, see progress.FoldKeep).
func FromReader(tr *trace.Reader) (*Report, error) {
	return fromEvents(func() progress.BuildInfo { return tr.Info }, tr.Next, func() *progress.Result { return tr.Result })
}

// fromEvents applies the events to a progress.State in batches, as the session does, so the
// report reads the same tree a live build's report does (and names a failure's node from
// TensorRT's error, as the session does), and keeps the warnings and errors.
func fromEvents(info func() progress.BuildInfo, next func() (progress.Event, error), result func() *progress.Result) (*Report, error) {
	st := progress.NewState(progress.BuildInfo{}, time.Time{})
	st.FailedNode = trt.FailedNode
	batch := make([]progress.Event, 0, 1024)
	var logs []progress.Event
	var err error
	for err == nil {
		batch = batch[:0]
		for len(batch) < cap(batch) {
			var e progress.Event
			if e, err = next(); err != nil {
				break
			}
			batch = append(batch, e)
			if e.Type == progress.EventLog && e.Severity <= progress.SeverityWarning && len(logs) <= logCount {
				logs = append(logs, e)
			}
		}
		st.Apply(batch, time.Time{})
	}
	if err != io.EOF {
		return nil, err
	}
	res := progress.Result{Status: StatusUnknown}
	if r := result(); r != nil {
		res = *r
	}
	res = st.End(res, time.Time{})
	// The TensorRT and GPU the result names, as a live build's report has them (its State took
	// them from the result too).
	bi := info()
	if res.TensorRT != "" {
		bi.TensorRT = res.TensorRT
	}
	if res.GPU != "" {
		bi.GPU = res.GPU
	}
	r := FromTree(st.Tree(), bi, res, logs)
	if result() == nil {
		r.Notes = append(r.Notes, "the trace ends without a result line: the build was still running, or the trace was cut short")
	}
	return r, nil
}
