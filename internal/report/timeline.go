package report

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Chart geometry, in CSS pixels.
const (
	chartWidth = 1100.0
	axisHeight = 26.0
	rowHeight  = 20.0
	rowGap     = 2.0
	depthGap   = 6.0
	// maxBars caps the bars drawn: a TensorRT build can report tens of thousands of phases
	// ("Measuring tactic time" per tactic), which no one can read and which would make the page
	// slow. minBarPx hides phases too short to be seen at the chart's scale.
	maxBars  = 2500
	minBarPx = 0.5
)

// barColors colours bars by depth; the HTML test finds the chart in a screenshot by these.
var barColors = []string{"#3b6fb6", "#e8862a", "#2f9e6e", "#c2417a", "#7a5cc4", "#b5942a", "#2a9fb5", "#d0553c"}

// bar is one drawn phase.
type bar struct {
	p    *Phase
	x, w float64
	row  int
}

// timeline is the laid-out chart.
type timeline struct {
	bars      []bar
	rowY      []float64 // top of each row
	height    float64
	ticks     []tick
	drawn     int
	tooShort  int // phases (with their descendants) narrower than minBarPx
	overLimit int // phases left out because maxBars was reached
}

type tick struct {
	x     float64
	label string
}

// layout places the phases on rows: one group of rows per depth, and within a depth one row
// per builder thread (more when one thread's phases overlap), so parallel work is side by side
// and a child sits on its parent's thread row.
func layout(r *Report) timeline {
	var tl timeline
	span := float64(r.Span)
	if span <= 0 {
		span = 1e-6
	}
	scale := chartWidth / span
	// Breadth-first, so that when the cap is reached the shallow (long) phases are the ones
	// drawn.
	level := r.Phases
	// The phase a build failed or stopped in is drawn however short it was (a failure often
	// comes microseconds after its phase started), with the phases above it.
	where := map[int]bool{}
	if w := r.Result.Where; w != nil {
		markPath(r.Phases, w.ID, where)
	}
	var byDepth [][]*Phase
	for len(level) > 0 {
		var next, kept []*Phase
		for _, p := range level {
			switch {
			case where[p.ID]:
			case float64(p.Duration)*scale < minBarPx:
				tl.tooShort += 1 + descendants(p)
				continue
			case tl.drawn == maxBars:
				tl.overLimit += 1 + descendants(p)
				continue
			}
			tl.drawn++
			kept = append(kept, p)
			next = append(next, p.Children...)
		}
		if len(kept) > 0 {
			byDepth = append(byDepth, kept)
		}
		level = next
	}
	y := axisHeight
	row := 0
	for _, phases := range byDepth {
		lanes := assignLanes(phases)
		n := 0
		for i, p := range phases {
			tl.bars = append(tl.bars, bar{p: p, x: float64(p.Start) * scale, w: max(float64(p.Duration)*scale, minBarPx), row: row + lanes[i]})
			n = max(n, lanes[i]+1)
		}
		for range n {
			tl.rowY = append(tl.rowY, y)
			y += rowHeight + rowGap
			row++
		}
		y += depthGap
	}
	tl.height = y + 4
	tl.ticks = ticks(span, scale)
	return tl
}

// markPath marks the phase with the given ID and its ancestors; false if it is not there.
func markPath(phases []*Phase, id int, marks map[int]bool) bool {
	for _, p := range phases {
		if p.ID == id || markPath(p.Children, id, marks) {
			marks[p.ID] = true
			return true
		}
	}
	return false
}

func descendants(p *Phase) int {
	n := 0
	for _, c := range p.Children {
		n += 1 + descendants(c)
	}
	return n
}

// assignLanes gives each phase of one depth a lane: threads in increasing order, and within a
// thread the first lane whose last phase has ended (one lane unless the phases overlap).
func assignLanes(phases []*Phase) []int {
	idx := make([]int, len(phases))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := phases[a], phases[b]
		if c := cmp.Compare(pa.Thread, pb.Thread); c != 0 {
			return c
		}
		return cmp.Compare(pa.Start, pb.Start)
	})
	lanes := make([]int, len(phases))
	base := 0
	var ends []Seconds
	var thread uint64
	for k, i := range idx {
		p := phases[i]
		if k == 0 || p.Thread != thread {
			base += len(ends)
			ends = ends[:0]
			thread = p.Thread
		}
		lane := -1
		for l, end := range ends {
			if end <= p.Start {
				lane = l
				break
			}
		}
		if lane < 0 {
			lane = len(ends)
			ends = append(ends, 0)
		}
		ends[lane] = p.End
		lanes[i] = base + lane
	}
	return lanes
}

// ticks returns about eight labelled ticks at a round step (1, 2 or 5 times a power of ten).
func ticks(span, scale float64) []tick {
	raw := span / 8
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	var out []tick
	for i := 0; ; i++ {
		t := float64(i) * step
		if t > span*1.0001 {
			break
		}
		out = append(out, tick{x: t * scale, label: axisLabel(t, step)})
	}
	return out
}

// axisLabel writes t seconds with as many decimals as the step needs.
func axisLabel(t, step float64) string {
	switch {
	case step >= 60 && t >= 60:
		return fmt.Sprintf("%dm%02ds", int(t)/60, int(t)%60)
	case step >= 1:
		return fmt.Sprintf("%gs", math.Round(t))
	case step >= 0.001:
		return fmt.Sprintf("%gms", math.Round(t*1e4)/10)
	default:
		return fmt.Sprintf("%gµs", math.Round(t*1e7)/10)
	}
}

// svg draws the timeline as an inline SVG element. Every bar has a <title> shown on hover.
func (tl timeline) svg() string {
	var b strings.Builder
	width := chartWidth + 20
	fmt.Fprintf(&b, `<svg class="timeline" role="img" aria-label="Timeline of the build's phases" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", width, tl.height, width, tl.height)
	b.WriteString(`<g transform="translate(10,0)">` + "\n")
	for _, t := range tl.ticks {
		fmt.Fprintf(&b, `<line class="grid" x1="%.2f" y1="%.0f" x2="%.2f" y2="%.0f"/>`, t.x, axisHeight-6, t.x, tl.height)
		anchor := "middle"
		if t.x == 0 {
			anchor = "start"
		} else if t.x > chartWidth-30 {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text class="tick" x="%.2f" y="14" text-anchor="%s">%s</text>`+"\n", t.x, anchor, html.EscapeString(t.label))
	}
	for _, br := range tl.bars {
		p := br.p
		y := tl.rowY[br.row]
		class := "bar"
		if p.Aborted {
			class += " aborted"
		}
		fmt.Fprintf(&b, `<g class="%s"><title>%s</title><rect x="%.2f" y="%.1f" width="%.2f" height="%.0f" fill="%s"/>`,
			class, html.EscapeString(barTitle(p)), br.x, y, br.w, rowHeight, barColors[p.Depth%len(barColors)])
		if label := fitLabel(p, br.w); label != "" {
			fmt.Fprintf(&b, `<text x="%.2f" y="%.1f">%s</text>`, br.x+4, y+14, html.EscapeString(label))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n</svg>")
	return b.String()
}

func barTitle(p *Phase) string {
	s := fmt.Sprintf("#%d %s\n%s (self %s), from %s to %s\n%d/%d steps, thread %d",
		p.ID, phaseLabel(p), seconds(p.Duration), seconds(p.Self), seconds(p.Start), seconds(p.End), p.Done, p.Steps, p.Thread)
	switch {
	case p.Aborted:
		s += "\nstill running when the build ended"
	case p.Early:
		s += "\nfinished before all of its steps"
	}
	return s
}

// phaseLabel is a phase's name as the page shows it: a root phase of a build of several with
// its generation ("Building engine (generation 2)").
func phaseLabel(p *Phase) string {
	if p.Generation > 1 {
		return fmt.Sprintf("%s (generation %d)", p.Name, p.Generation)
	}
	return p.Name
}

// fitLabel cuts a phase's label to what fits in a bar w pixels wide (about 6.5 pixels a
// character at the chart's font size), or returns "" when not even a few characters fit. A
// name that names a layer (progress.Layer: "Finding fastest tactic for stem/conv1") and does
// not fit shows only the layer, which is what tells the bars of one row apart; other names
// ("Preparing graph for optimization") are cut at their end.
func fitLabel(p *Phase, w float64) string {
	n := int((w - 8) / 6.5)
	if n < 4 {
		return ""
	}
	name := phaseLabel(p)
	r := []rune(name)
	if len(r) <= n {
		return name
	}
	if layer := progress.Layer(p.Name); layer != "" {
		r = []rune(layer)
		if len(r) <= n {
			return layer
		}
	}
	return string(r[:n-1]) + "…"
}
