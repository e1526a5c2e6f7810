// Package report turns a build's phase tree into a report: a JSON document (phase tree with
// durations and step counts, the slowest phases, phase names by total time, cache hits and
// misses, the worker's peak memory, the result) or a self-contained HTML page with a timeline
// of the phases drawn as an inline SVG chart. The same functions serve `--report FILE` (from
// the tree the session kept) and `trtbuild report TRACE.jsonl` (from a recorded event stream).
package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"
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
	Span    Seconds     `json:"span"`
	Phases  []*Phase    `json:"phases"`
	Count   int         `json:"phase_count"`
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
	ID       int      `json:"id"`
	Name     string   `json:"name"`
	Thread   uint64   `json:"thread"`
	Depth    int      `json:"depth"`
	Start    Seconds  `json:"start"`
	End      Seconds  `json:"end"`
	Duration Seconds  `json:"duration"`
	Self     Seconds  `json:"self"` // Duration less the time covered by any child
	Steps    int      `json:"steps"`
	Done     int      `json:"done"`
	Early    bool     `json:"early,omitempty"`
	Aborted  bool     `json:"aborted,omitempty"` // still open when the build ended
	Children []*Phase `json:"children,omitempty"`
}

// Slow is one of the phases with the most self time.
type Slow struct {
	ID       int      `json:"id"`
	Path     []string `json:"path"`
	Self     Seconds  `json:"self"`
	Duration Seconds  `json:"duration"`
}

// NameTotal sums the phases of one name.
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

// Duration converts back.
func (s Seconds) Duration() time.Duration { return time.Duration(math.Round(float64(s) * 1e9)) }

// FromTree makes the report of a build whose events were applied to tree, which the session
// has ended (progress.State.End): phases still open are reported as open at the newest
// event's time, and tree is not changed. Every time is read as the JSON-lines encoding
// rounds it, so the report of a live build and of its trace are the same. logs are the
// build's log events (only warnings and more severe ones are kept); res is how it ended.
func FromTree(tree *progress.Tree, info progress.BuildInfo, res progress.Result, logs []progress.Event) *Report {
	last := wireTime(tree.Last)
	r := &Report{
		Version: Version,
		Build:   info,
		Span:    Secs(last),
		Result: Result{
			Status: res.Status, Error: res.Error, Engine: res.Engine, EngineBytes: res.EngineBytes,
			Duration: Secs(res.Duration), PeakRSS: res.PeakRSS, DroppedSteps: res.DroppedSteps,
		},
		Cache:   Cache{Used: res.CacheUsed, Hits: res.CacheHits, Misses: res.CacheMisses},
		Phases:  []*Phase{},
		Slowest: []Slow{},
		ByName:  []NameTotal{},
	}
	if n := res.CacheHits + res.CacheMisses; n > 0 {
		r.Cache.HitRate = math.Round(float64(res.CacheHits)/float64(n)*1e4) / 1e4
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
		out.Self = Secs(end - start - covered(spans))
		r.Depth = max(r.Depth, p.Depth)
		return out
	}
	for _, id := range tree.Roots() {
		r.Phases = append(r.Phases, build(id))
	}
	r.Count = len(all)
	r.Slowest = slowest(tree, all)
	r.ByName = byName(all)
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

// covered returns the length of the union of the intervals.
func covered(spans [][2]time.Duration) time.Duration {
	slices.SortFunc(spans, func(a, b [2]time.Duration) int { return cmp.Compare(a[0], b[0]) })
	var total, end time.Duration
	started := false
	var start time.Duration
	for _, s := range spans {
		if s[1] <= s[0] {
			continue
		}
		switch {
		case !started:
			start, end, started = s[0], s[1], true
		case s[0] > end:
			total += end - start
			start, end = s[0], s[1]
		case s[1] > end:
			end = s[1]
		}
	}
	if started {
		total += end - start
	}
	return total
}

func slowest(tree *progress.Tree, all []*Phase) []Slow {
	sorted := slices.Clone(all)
	slices.SortStableFunc(sorted, func(a, b *Phase) int {
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	out := []Slow{}
	for _, p := range sorted {
		if len(out) == slowestCount || p.Self <= 0 {
			break
		}
		out = append(out, Slow{ID: p.ID, Path: tree.Path(p.ID), Self: p.Self, Duration: p.Duration})
	}
	return out
}

func byName(all []*Phase) []NameTotal {
	index := map[string]int{}
	var totals []NameTotal
	for _, p := range all {
		i, ok := index[p.Name]
		if !ok {
			i = len(totals)
			index[p.Name] = i
			totals = append(totals, NameTotal{Name: p.Name})
		}
		t := &totals[i]
		t.Count++
		t.Total = round6(t.Total + p.Duration)
		t.Self = round6(t.Self + p.Self)
		t.Max = max(t.Max, p.Duration)
		t.Steps += p.Done
	}
	slices.SortStableFunc(totals, func(a, b NameTotal) int {
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
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

// FromTrace makes the report of a recorded trace. The events go through a progress.State, as
// in the session, so the report reads the same tree a live build's report does.
func FromTrace(t *trace.Trace) *Report {
	st := progress.NewState(t.Info, time.Time{})
	st.Apply(t.Events, time.Time{})
	res := progress.Result{Status: StatusUnknown}
	if t.Result != nil {
		res = *t.Result
	}
	res = st.End(res, time.Time{})
	r := FromTree(st.Tree(), t.Info, res, t.Events)
	if t.Result == nil {
		r.Notes = append(r.Notes, "the trace ends without a result line: the build was still running, or the trace was cut short")
	}
	return r
}
