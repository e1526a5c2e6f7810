package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Layout limits of the live view.
const (
	// maxVisibleDepth is how many levels of the phase tree get rows; deeper open phases are
	// summarised on one row under the deepest visible one. TensorRT 10.16 and 11.x nest eight
	// levels deep ("Building engine" › … › "Timing tensor reformats" › "Computing reformatting
	// costs" › "Evaluating tactic times" › "Measuring tactic time").
	maxVisibleDepth = 8
	// keepDone is how many finished children stay visible under a running parent.
	keepDone = 3
	// maxContentWidth keeps rows readable on very wide terminals.
	maxContentWidth = 120
	// silenceAfter is how long without a phase event before the footer says so.
	silenceAfter = 5 * time.Second
	// spinnerStep is how long each spinner frame shows.
	spinnerStep = 100 * time.Millisecond
	// timeWidth fits every FormatDuration result up to "99h59m"; the column grows beyond.
	timeWidth = 6
	// defaultWidth and defaultHeight are used until the terminal reports its size.
	defaultWidth, defaultHeight = 80, 24
)

// viewState is everything a frame is drawn from: the newest snapshot of the session's state
// (tree, clocks, cancel ladder) and the layout. frame is a pure function of it and of the
// time, so it can be tested and measured without a terminal.
type viewState struct {
	theme         theme
	info          progress.BuildInfo
	tree          *progress.Tree
	width, height int
	verbose       bool
	// begin is the wall time the build started; lastProgress the wall time of the newest
	// phase event.
	begin, lastProgress time.Time
	// skew maps build time to wall time: buildNow = now - begin - skew. It is the smallest
	// delay seen between an event's build time and its arrival, i.e. the worker's start-up.
	skew      time.Duration
	skewKnown bool
	cancel    progress.Cancel
	// pace is the timing phase's pace, for the time left the footer shows.
	pace progress.Pace

	rows []row // reused between frames
	// tallest is the most lines a frame has had at this size. Shorter frames are padded to
	// it, so the footer does not jump as phases come and go, and the renderer does not have
	// to redraw everything (which tmux, at the top of a cleared screen, copies into its
	// history) each time the height changes.
	tallest int
}

// rowKind says what a row of the tree shows.
type rowKind int

const (
	rowOpen    rowKind = iota // a running phase
	rowDone                   // a recently finished child, collapsed to its duration
	rowHidden                 // running phases below the visible depth
	rowMore                   // rows left out for lack of height
	rowWaiting                // nothing running yet
)

type row struct {
	kind  rowKind
	depth int
	p     *progress.Phase
	leaf  bool // an open phase with no open children: where the work happens
	n     int  // rowHidden: open phases below; rowMore: rows left out
}

// buildNow estimates the builder's clock at wall time now, never behind the newest event.
func (v *viewState) buildNow(now time.Time) time.Duration {
	d := now.Sub(v.begin)
	if v.skewKnown {
		d -= v.skew
	}
	if d < v.tree.Last {
		d = v.tree.Last
	}
	return d
}

// size returns the width and height to lay out for.
func (v *viewState) size() (int, int) {
	w, h := v.width, v.height
	if w <= 0 {
		w = defaultWidth
	}
	if h <= 0 {
		h = defaultHeight
	}
	return w, h
}

// maxFrameLines is the most lines a frame may take in a terminal h lines high: two thirds of
// it, so that log lines printed above keep room, but at least 6 where the terminal has them.
func maxFrameLines(h int) int {
	n := h * 2 / 3
	if n < 6 {
		n = min(6, h-1)
	}
	return max(n, 1)
}

// frame renders the live view at wall time now: the phase tree and the footer. (The header
// is printed once above the view, see headerLines.) No line is wider than the terminal and
// the frame is never taller than maxFrameLines.
func (v *viewState) frame(now time.Time) string {
	w, h := v.size()
	cw := min(w, maxContentWidth)
	var b strings.Builder
	b.Grow(cw * 16)

	maxLines := maxFrameLines(h)
	footer := v.footer(now, cw)
	footerLines := strings.Split(footer, "\n")
	if len(footerLines) > maxLines {
		footerLines = footerLines[len(footerLines)-maxLines:]
	}
	room := maxLines - len(footerLines)
	if room > 0 {
		v.rows = v.collect(v.rows[:0])
		v.rows = fit(v.rows, room)
		bnow := v.buildNow(now)
		lay := v.layout(cw, bnow)
		var line strings.Builder
		for i := range v.rows {
			line.Reset()
			v.writeRow(&line, &v.rows[i], lay, bnow, now)
			b.WriteString(fitLine(line.String(), cw))
			b.WriteByte('\n')
		}
	}
	lines := strings.Count(b.String(), "\n") + len(footerLines)
	for ; lines < min(v.tallest, maxLines); lines++ {
		b.WriteByte('\n')
	}
	v.tallest = max(v.tallest, lines)
	for i, l := range footerLines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(fitLine(l, cw))
	}
	return b.String()
}

// fitLine cuts a styled line to cw cells; only the narrowest terminals need it.
func fitLine(s string, cw int) string {
	if ansi.StringWidth(s) <= cw {
		return s
	}
	return ansi.Truncate(s, cw, "…")
}

// headerLines returns the header printed above the view when it starts: what is built into
// what, then how. It goes into the terminal's history rather than into the frame, so that it
// stays readable above the builder's log lines, and so that the frame never starts at the top
// of a cleared screen (where tmux, erasing from there, copies the screen into its history).
func (v *viewState) headerLines() []string {
	t := &v.theme
	w, _ := v.size()
	cw := min(w, maxContentWidth)
	model, engine := clean(v.info.Model), clean(v.info.Engine)
	const verb, arrow = "Building ", " → "
	room := cw - ansi.StringWidth(verb) - ansi.StringWidth(arrow)
	if engine == "" {
		room += ansi.StringWidth(arrow)
	}
	model, engine = shortenPair(model, engine, room)
	first := t.title.Render(verb + model)
	if engine != "" {
		first += t.dim.Render(arrow) + engine
	}

	var parts []string
	if v.info.Backend != "" {
		parts = append(parts, "backend "+clean(v.info.Backend))
	}
	if v.info.Precision != "" {
		parts = append(parts, clean(v.info.Precision))
	}
	if v.info.TensorRT != "" {
		parts = append(parts, "TensorRT "+clean(v.info.TensorRT))
	}
	if v.info.Layers > 0 {
		parts = append(parts, plural(v.info.Layers, "layer"))
	}
	return []string{fitLine(first, cw), t.dim.Render(ansi.Truncate(strings.Join(parts, " · "), cw, "…"))}
}

// shortenPair fits "a → b" into room cells, cutting the start of the longer path first, since
// the end of a path (the file name) says the most.
func shortenPair(a, b string, room int) (string, string) {
	wa, wb := ansi.StringWidth(a), ansi.StringWidth(b)
	if wa+wb <= room {
		return a, b
	}
	half := max(room/2, 1)
	switch {
	case wa <= half:
		b = cutLeft(b, max(room-wa, 1))
	case wb <= half:
		a = cutLeft(a, max(room-wb, 1))
	default:
		a = cutLeft(a, half)
		b = cutLeft(b, max(room-half, 1))
	}
	return a, b
}

// cutLeft keeps the last n cells of s, marking the cut with "…".
func cutLeft(s string, n int) string {
	w := ansi.StringWidth(s)
	if w <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return ansi.TruncateLeft(s, w-n+1, "…")
}

// footer returns the status line, preceded by the cancel state when there is one. It ends
// without a newline.
func (v *viewState) footer(now time.Time, cw int) string {
	t := &v.theme
	var b strings.Builder
	c := &v.cancel
	hint := "ctrl+c cancel"
	switch {
	case c.Forced:
		msg := c.ForceBy
		if msg == "" {
			msg = "Stopping now: the build worker is being killed."
		}
		if ansi.StringWidth(msg) > 2*cw {
			msg = "Stopping now."
		}
		b.WriteString(wrapLines(t.err, clean(msg), cw))
		b.WriteByte('\n')
		hint = ""
	case c.Kind != 0:
		// Only a step boundary stops the builder, and one step of TensorRT can take minutes
		// (a Myelin node is one step): say how long it has been silent.
		quiet := now.Sub(v.lastProgress).Truncate(time.Second)
		waits := v.builderName() + " stops at its next step; " + progress.FormatDuration(quiet) + " since its last."
		const again = " Ctrl-C again to stop now."
		// The longest that fits in two lines: why, what it waits for, the way out.
		msgs := []string{"Cancelling: " + waits + again}
		if c.Kind == progress.NoticeTimeout && c.Message != "" {
			why := clean(strings.TrimSuffix(c.Message, "; cancelling"))
			msgs = []string{why + "; cancelling: " + waits + again, why + "; cancelling." + again, msgs[0]}
		}
		msg := "Cancelling… Ctrl-C again stops now."
		for _, m := range msgs {
			if ansi.StringWidth(m) <= 2*cw {
				msg = m
				break
			}
		}
		b.WriteString(wrapLines(t.warn, msg, cw))
		b.WriteByte('\n')
		hint = "ctrl+c stop now"
	}

	spin := t.spinner[int(now.Sub(v.begin)/spinnerStep)%len(t.spinner)]
	status := progress.FormatDuration(now.Sub(v.begin)) + " elapsed"
	switch {
	case c.Forced:
		status = "stopping " + progress.FormatDuration(now.Sub(c.ForceAt)) + " · " + status
	case c.Kind != 0:
		status = "cancel requested " + progress.FormatDuration(now.Sub(c.At)) + " ago · " + status
	default:
		if left, ok := v.pace.Left(v.tree, v.buildNow(now)); ok {
			status += " · " + left.String()
		}
		if quiet := now.Sub(v.lastProgress); quiet >= silenceAfter {
			status += " · no progress reported for " + progress.FormatDuration(quiet.Truncate(time.Second))
		}
	}
	left := spin + " " + status
	lw := ansi.StringWidth(left)
	if hint != "" && lw+2+len(hint) <= cw {
		b.WriteString(t.accent.Render(spin) + " " + t.dim.Render(status))
		b.WriteString(spaces(cw - lw - len(hint)))
		b.WriteString(t.key.Render(hint[:6]) + t.dim.Render(hint[6:]))
	} else {
		left = ansi.Truncate(left, cw, "…")
		b.WriteString(t.dim.Render(left))
	}
	return b.String()
}

// builderName is what the builder is called in the view: TensorRT, or the builder.
func (v *viewState) builderName() string {
	if v.info.Backend == "tensorrt" {
		return "TensorRT"
	}
	return "the builder"
}

// wrapLines word-wraps s to width cells and styles each line.
func wrapLines(st interface{ Render(...string) string }, s string, width int) string {
	lines := strings.Split(ansi.Wrap(s, max(width, 10), ""), "\n")
	for i, l := range lines {
		lines[i] = st.Render(strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n")
}

// collect appends the tree's rows in display order.
func (v *viewState) collect(rows []row) []row {
	if v.tree.Len() == 0 {
		return append(rows, row{kind: rowWaiting})
	}
	rows = v.collectLevel(rows, v.tree.Roots(), 0, -1, true)
	if len(rows) == 0 || v.tree.Open() == 0 {
		rows = append(rows, row{kind: rowWaiting})
	}
	return rows
}

// collectLevel appends rows for siblings ids at depth: every running one with its subtree,
// and, when showDone, the last keepDone finished ones. Finished rows appear only at the
// shallowest level of a path that has any: below a layer that shows its finished tactics,
// the hundreds of short measuring phases would only flicker. open is how many of ids are
// running (-1: unknown), so that the scan of a long list of finished siblings can stop early.
func (v *viewState) collectLevel(rows []row, ids []int, depth, open int, showDone bool) []row {
	keep := 0
	if showDone {
		keep = keepDone
	}
	first := len(ids)   // the earliest sibling that gets a row
	cutDone := len(ids) // finished siblings before this index stay collapsed
	done, seenOpen := 0, 0
	for i := len(ids) - 1; i >= 0; i-- {
		if v.tree.Get(ids[i]).Finished {
			if done < keep {
				done++
				cutDone, first = i, i
			} else if open >= 0 && seenOpen >= open {
				break
			}
			continue
		}
		seenOpen++
		first = i
		if open >= 0 && seenOpen >= open && done >= keep {
			break
		}
	}
	for i := first; i < len(ids); i++ {
		p := v.tree.Get(ids[i])
		if p.Finished {
			if i >= cutDone {
				rows = append(rows, row{kind: rowDone, depth: depth, p: p})
			}
			continue
		}
		rows = append(rows, row{kind: rowOpen, depth: depth, p: p, leaf: p.Open == 0})
		if p.Open == 0 {
			continue
		}
		if depth+1 < maxVisibleDepth {
			rows = v.collectLevel(rows, p.Children, depth+1, p.Open, showDone && done == 0)
		} else {
			n, deepest := v.openBelow(p)
			rows = append(rows, row{kind: rowHidden, depth: depth + 1, p: deepest, n: n})
		}
	}
	return rows
}

// openBelow counts the running phases under p and returns the deepest, newest of them.
func (v *viewState) openBelow(p *progress.Phase) (int, *progress.Phase) {
	n := 0
	var deepest *progress.Phase
	var visit func(q *progress.Phase)
	visit = func(q *progress.Phase) {
		if q.Open == 0 {
			return
		}
		seen := 0
		for i := len(q.Children) - 1; i >= 0 && seen < q.Open; i-- {
			c := v.tree.Get(q.Children[i])
			if c.Finished {
				continue
			}
			seen++
			n++
			if deepest == nil || c.Depth > deepest.Depth || (c.Depth == deepest.Depth && c.Start > deepest.Start) {
				deepest = c
			}
			visit(c)
		}
	}
	visit(p)
	return n, deepest
}

// fit trims rows to at most budget: first the finished rows, oldest first, then the tail,
// which is replaced by one row saying how many were left out.
func fit(rows []row, budget int) []row {
	if len(rows) <= budget {
		return rows
	}
	excess := len(rows) - budget
	kept := rows[:0]
	for _, r := range rows {
		if excess > 0 && r.kind == rowDone {
			excess--
			continue
		}
		kept = append(kept, r)
	}
	rows = kept
	if len(rows) <= budget {
		return rows
	}
	cut := budget - 1
	left := 0
	for _, r := range rows[cut:] {
		switch r.kind {
		case rowOpen:
			left++
		case rowHidden:
			left += r.n
		}
	}
	rows = rows[:cut]
	return append(rows, row{kind: rowMore, n: left})
}

// layout is the column plan of the tree rows.
type layout struct {
	indent                 int // cells per level
	name, bar, count, time int
	total                  int // the whole row
}

// layout sizes the columns for content width cw: a name column, an optional bar, the step
// count and the elapsed time. The bar shrinks, then goes, on narrow terminals.
func (v *viewState) layout(cw int, bnow time.Duration) layout {
	count, tw := 3, timeWidth
	for _, r := range v.rows {
		if r.kind == rowOpen || r.kind == rowDone {
			count = max(count, len(countText(r.p)))
			tw = max(tw, len(progress.FormatDuration(r.p.Duration(bnow))))
		}
	}
	bar := 0
	switch {
	case cw >= 100:
		bar = 24
	case cw >= 80:
		bar = 20
	case cw >= 64:
		bar = 14
	case cw >= 50:
		bar = 10
	}
	fixed := 1 + count + 2 + tw
	name := cw - fixed
	if bar > 0 {
		name -= bar + 2
	}
	if bar > 0 && name < 16 {
		name += bar + 2
		bar = 0
	}
	name = max(name, 4)
	total := name + fixed
	if bar > 0 {
		total += bar + 2
	}
	indent := 2
	if cw < 50 {
		indent = 1
	}
	return layout{indent: indent, name: name, bar: bar, count: count, time: tw, total: total}
}

// spaces returns n spaces, or none when n is not positive.
func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(" ", n)
}

// cellWidth is the number of terminal cells s takes.
func cellWidth(s string) int { return ansi.StringWidth(s) }

// cutMiddle fits a phase name into n cells by cutting out its middle, marked with "…": the
// start says what the phase does, and the end which layer it works on, which is what tells
// rows apart ("Finding fastest tactic for /features/features.3/block/block.0/block.0.0/Conv"
// becomes "Finding fastest…block.0.0/Conv", not "Finding fastest tactic for /feat…"). A
// third of the room goes to the start, the rest to the end. Wide characters and grapheme
// clusters are never split.
func cutMiddle(s string, n int) string { return cutAt(s, n, n/3) }

// cutAt is cutMiddle keeping head cells of the start.
func cutAt(s string, n, head int) string {
	w := ansi.StringWidth(s)
	if w <= n {
		return s
	}
	if n <= 8 {
		return ansi.Truncate(s, n, "…")
	}
	tail := n - head - 1
	h := ansi.Truncate(s, head, "")
	t := ansi.TruncateLeft(s, w-tail, "")
	// A wide character at either cut may leave a cell over: pad to exactly n.
	out := h + "…" + t
	return out + spaces(n-ansi.StringWidth(out))
}

// fitName fits a phase's label into n cells: whole when it fits; else its abbreviated kind
// ("tactic", "tactic reformat in 0 →") stays whole, where it takes at most two thirds of the
// room, and the layer name is cut in the middle, keeping a quarter of its room for its start
// and the rest for its end, so that rows of layers with a long common prefix stay apart. A kind
// too long for that keeps its first words, up to half the room ("tactic reformat …"), so that
// a reformatting layer still reads apart from the layer it feeds.
func fitName(l progress.Label, n int) string {
	s := l.String()
	if ansi.StringWidth(s) <= n || l.Kind == "" || l.Subject == "" {
		return cutMiddle(s, n)
	}
	if kw := ansi.StringWidth(l.Kind) + 1; kw <= n*2/3 {
		return l.Kind + " " + cutAt(l.Subject, n-kw, (n-kw)/4)
	}
	head := ""
	for _, word := range strings.Fields(l.Kind) {
		next := strings.TrimPrefix(head+" "+word, " ")
		if ansi.StringWidth(next) > n/2 {
			break
		}
		head = next
	}
	room := n - ansi.StringWidth(head) - 2
	if head == "" || room < 8 {
		return cutMiddle(s, n)
	}
	tail := l.Subject
	if w := ansi.StringWidth(tail); w > room {
		tail = ansi.TruncateLeft(tail, w-room, "")
	}
	out := head + " …" + tail
	return out + spaces(n-ansi.StringWidth(out))
}

func countText(p *progress.Phase) string {
	return strconv.Itoa(p.Done) + "/" + strconv.Itoa(p.Steps)
}

// writeRow writes one tree row: indent, marker, name, bar, count, elapsed.
func (v *viewState) writeRow(b *strings.Builder, r *row, lay layout, bnow time.Duration, now time.Time) {
	t := &v.theme
	indent := lay.indent * r.depth
	nameRoom := max(lay.name-indent-2, 1)
	wide := max(lay.total-indent-2, 1) // for rows that span every column
	spin := t.spinner[int(now.Sub(v.begin)/spinnerStep)%len(t.spinner)]
	b.WriteString(spaces(indent))
	switch r.kind {
	case rowWaiting:
		msg := "waiting for the builder to report a phase"
		if v.tree.Len() > 0 {
			msg = "waiting for the builder"
		}
		b.WriteString(t.accent.Render(spin) + " " + t.dim.Render(ansi.Truncate(msg, wide, "…")))
		return
	case rowMore:
		msg := fmt.Sprintf("%d more running phases not shown (the terminal is too short)", r.n)
		if r.n == 0 {
			msg = "more finished phases not shown"
		}
		b.WriteString(t.dim.Render(t.hidden + " " + ansi.Truncate(msg, wide, "…")))
		return
	case rowHidden:
		msg := fmt.Sprintf("%s deeper", plural(r.n, "phase"))
		if r.p != nil {
			msg += ": " + progress.ShortLabel(clean(r.p.Label())).String() + " " + countText(r.p)
		}
		b.WriteString(t.dim.Render(t.hidden + " " + ansi.Truncate(msg, wide, "…")))
		return
	}

	p := r.p
	name := fitName(progress.ShortLabel(clean(p.Label())), nameRoom)
	pad := nameRoom - ansi.StringWidth(name)
	cut := r.kind == rowDone && v.cancel.CutShort(p)
	switch {
	case cut:
		b.WriteString(t.warn.Render(t.failed) + " " + t.dim.Render(name))
	case r.kind == rowDone:
		b.WriteString(t.ok.Render(t.done) + " " + t.dim.Render(name))
	case r.leaf:
		b.WriteString(t.accent.Render(spin) + " " + name)
	default:
		b.WriteString(t.dim.Render(t.open) + " " + name)
	}
	b.WriteString(spaces(pad))

	if lay.bar > 0 {
		b.WriteString("  ")
		if r.kind == rowDone {
			// A phase that ended before its last step is TensorRT's normal case (its root
			// ends at step 5 of 6): the count says so, dimmed like any finished row.
			note, style := "", t.warn
			switch {
			case cut:
				note = "cancelled"
			case p.Early && p.Done == 0:
				// No step ran: nothing to measure (a timing-cache hit), not a problem.
				note, style = "no steps", t.dim
			}
			b.WriteString(spaces(lay.bar - len(note)))
			if note != "" {
				b.WriteString(style.Render(note))
			}
		} else {
			v.writeBar(b, p, lay.bar)
		}
	}
	count := countText(p)
	b.WriteByte(' ')
	b.WriteString(spaces(lay.count - len(count)))
	if r.kind == rowDone {
		b.WriteString(t.dim.Render(count))
	} else {
		b.WriteString(count)
	}
	el := progress.FormatDuration(p.Duration(bnow))
	b.WriteString("  ")
	b.WriteString(spaces(timeWidth - len(el)))
	b.WriteString(t.dim.Render(el))
}

// writeBar draws the phase's completed fraction of steps. It fills a cell only once the cell
// is complete, so a bar is full only when every step was reported.
func (v *viewState) writeBar(b *strings.Builder, p *progress.Phase, width int) {
	t := &v.theme
	full := 0
	if p.Steps > 0 {
		full = p.Done * width / p.Steps
	}
	full = min(max(full, 0), width)
	if full > 0 {
		b.WriteString(t.barFull.Render(strings.Repeat(t.barFullGlyph, full)))
	}
	if full < width {
		b.WriteString(t.barEmpty.Render(strings.Repeat(t.barEmptyGlyph, width-full)))
	}
}

// overall is the taskbar fraction in percent: how far along the build is (progress.Along, the
// measure MCP's notifications use too). It returns -1 when no phase is running.
func (v *viewState) overall() int {
	roots := v.tree.Roots()
	if len(roots) == 0 || v.tree.Get(roots[len(roots)-1]).Finished {
		return -1
	}
	done, total, ok := progress.Along(v.tree, false)
	if !ok || total <= 0 {
		return -1
	}
	return int(done * 100 / total)
}
