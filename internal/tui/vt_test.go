package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// vt is a small terminal emulator for tests: it keeps the screen a program's output leaves
// and the lines scrolled off its top, so tests can check what a person would see rather
// than the byte stream (the renderer only rewrites the cells that changed). It knows the
// cursor movements, erasures, insertions, scrolling region and repeat sequence Bubble Tea's
// renderer uses; colours, modes and OSC strings are ignored.
type vt struct {
	w, h        int
	cells       [][]string // "" is a blank cell, "\x00" the right half of a wide character
	x, y        int
	pendingWrap bool
	top, bottom int // scrolling region, inclusive
	savedX      int
	savedY      int
	last        string // the last printed grapheme, for REP
	history     []string
	state       byte
	parser      *ansi.Parser
	partial     []byte
}

func newVT(w, h int) *vt {
	s := &vt{w: w, h: h, bottom: h - 1, parser: ansi.NewParser()}
	s.cells = make([][]string, h)
	for i := range s.cells {
		s.cells[i] = make([]string, w)
	}
	return s
}

// Write feeds output to the emulator.
func (s *vt) Write(b []byte) (int, error) {
	data := append(s.partial, b...)
	s.partial = nil
	for len(data) > 0 {
		seq, width, n, state := ansi.DecodeSequence(data, s.state, s.parser)
		if n == 0 || (state != ansi.NormalState && n == len(data)) {
			// An incomplete sequence at the end: keep it for the next write.
			s.partial = append([]byte(nil), data...)
			break
		}
		s.state = state
		s.handle(seq, width)
		data = data[n:]
	}
	return len(b), nil
}

func (s *vt) handle(seq []byte, width int) {
	switch {
	case width > 0:
		s.print(string(seq), width)
	case len(seq) == 1:
		switch seq[0] {
		case '\r':
			s.x, s.pendingWrap = 0, false
		case '\n', '\v', '\f':
			s.lineFeed()
		case '\b':
			s.x, s.pendingWrap = max(s.x-1, 0), false
		case '\t':
			s.x, s.pendingWrap = min((s.x/8+1)*8, s.w-1), false
		}
	case ansi.HasCsiPrefix(seq):
		s.csi()
	case len(seq) == 2 && seq[0] == ansi.ESC:
		switch seq[1] {
		case '7':
			s.savedX, s.savedY = s.x, s.y
		case '8':
			s.x, s.y, s.pendingWrap = s.savedX, s.savedY, false
		case 'D':
			s.lineFeed()
		case 'E':
			s.x = 0
			s.lineFeed()
		case 'M':
			if s.y == s.top {
				s.scrollDown(1)
			} else {
				s.y = max(s.y-1, 0)
			}
		}
	}
}

func (s *vt) print(g string, width int) {
	if s.pendingWrap || s.x+width > s.w {
		s.x = 0
		s.lineFeed()
	}
	s.cells[s.y][s.x] = g
	for i := 1; i < width && s.x+i < s.w; i++ {
		s.cells[s.y][s.x+i] = "\x00"
	}
	s.last = g
	s.x += width
	if s.x >= s.w {
		s.x, s.pendingWrap = s.w-1, true
	}
}

func (s *vt) lineFeed() {
	s.pendingWrap = false
	if s.y == s.bottom {
		s.scrollUp(1)
		return
	}
	s.y = min(s.y+1, s.h-1)
}

func (s *vt) blankRow() []string { return make([]string, s.w) }

func (s *vt) scrollUp(n int) {
	for ; n > 0; n-- {
		if s.top == 0 {
			s.history = append(s.history, rowText(s.cells[0]))
		}
		copy(s.cells[s.top:s.bottom], s.cells[s.top+1:s.bottom+1])
		s.cells[s.bottom] = s.blankRow()
	}
}

func (s *vt) scrollDown(n int) {
	for ; n > 0; n-- {
		copy(s.cells[s.top+1:s.bottom+1], s.cells[s.top:s.bottom])
		s.cells[s.top] = s.blankRow()
	}
}

func (s *vt) csi() {
	cmd := ansi.Cmd(s.parser.Command())
	params := s.parser.Params()
	arg := func(i, def int) int {
		v, _, ok := params.Param(i, def)
		if !ok || v == 0 {
			return def
		}
		return v
	}
	if cmd.Prefix() != 0 || cmd.Intermediate() != 0 {
		return // private modes, queries, cursor styles
	}
	s.pendingWrap = false
	switch cmd.Final() {
	case 'A':
		s.y = max(s.y-arg(0, 1), 0)
	case 'B':
		s.y = min(s.y+arg(0, 1), s.h-1)
	case 'C':
		s.x = min(s.x+arg(0, 1), s.w-1)
	case 'D':
		s.x = max(s.x-arg(0, 1), 0)
	case 'E':
		s.x, s.y = 0, min(s.y+arg(0, 1), s.h-1)
	case 'F':
		s.x, s.y = 0, max(s.y-arg(0, 1), 0)
	case 'G', '`':
		s.x = min(arg(0, 1)-1, s.w-1)
	case 'd':
		s.y = min(arg(0, 1)-1, s.h-1)
	case 'H', 'f':
		s.y, s.x = min(arg(0, 1)-1, s.h-1), min(arg(1, 1)-1, s.w-1)
	case 'J':
		switch v, _, _ := params.Param(0, 0); v {
		case 0:
			s.eraseLine(s.y, s.x, s.w)
			for y := s.y + 1; y < s.h; y++ {
				s.cells[y] = s.blankRow()
			}
		case 1:
			s.eraseLine(s.y, 0, s.x+1)
			for y := 0; y < s.y; y++ {
				s.cells[y] = s.blankRow()
			}
		default:
			for y := range s.cells {
				s.cells[y] = s.blankRow()
			}
		}
	case 'K':
		switch v, _, _ := params.Param(0, 0); v {
		case 0:
			s.eraseLine(s.y, s.x, s.w)
		case 1:
			s.eraseLine(s.y, 0, s.x+1)
		default:
			s.eraseLine(s.y, 0, s.w)
		}
	case 'X':
		s.eraseLine(s.y, s.x, min(s.x+arg(0, 1), s.w))
	case 'L', 'M':
		if s.y < s.top || s.y > s.bottom {
			return
		}
		top := s.top
		s.top = s.y
		if cmd.Final() == 'L' {
			s.scrollDown(arg(0, 1))
		} else {
			s.scrollUp(arg(0, 1))
		}
		s.top = top
		s.x = 0
	case 'S':
		s.scrollUp(arg(0, 1))
	case 'T':
		s.scrollDown(arg(0, 1))
	case '@':
		n := arg(0, 1)
		row := s.cells[s.y]
		copy(row[min(s.x+n, s.w):], row[s.x:])
		s.eraseLine(s.y, s.x, min(s.x+n, s.w))
	case 'P':
		n := arg(0, 1)
		row := s.cells[s.y]
		copy(row[s.x:], row[min(s.x+n, s.w):])
		s.eraseLine(s.y, max(s.w-n, s.x), s.w)
	case 'b':
		for n := arg(0, 1); n > 0 && s.last != ""; n-- {
			s.print(s.last, ansi.StringWidth(s.last))
		}
	case 'r':
		s.top, s.bottom = arg(0, 1)-1, min(arg(1, s.h), s.h)-1
		s.x, s.y = 0, 0
	}
}

func (s *vt) eraseLine(y, from, to int) {
	for x := max(from, 0); x < min(to, s.w); x++ {
		s.cells[y][x] = ""
	}
}

func rowText(row []string) string {
	var b strings.Builder
	for _, c := range row {
		switch c {
		case "":
			b.WriteByte(' ')
		case "\x00":
		default:
			b.WriteString(c)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// Screen returns the visible lines, trailing blank lines dropped.
func (s *vt) Screen() string {
	lines := make([]string, s.h)
	for y := range s.cells {
		lines[y] = rowText(s.cells[y])
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// All returns the history followed by the screen: the whole scrollback a person could read.
func (s *vt) All() string {
	return strings.TrimLeft(strings.Join(append(append([]string(nil), s.history...), s.Screen()), "\n"), "\n")
}
