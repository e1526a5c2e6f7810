package service

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
)

// Event is one event of a build's log: a v1 JSON line exactly as `trtbuild --progress json`
// prints it (without the newline), its type, and its sequence number (1, 2, 3 … in order).
type Event struct {
	Seq  int64
	Type string
	Data []byte
	// off and end are where the event's Server-Sent Events frame is in the log's frames.
	off, end int
}

// Log is the append-only event log of one build. The build appends; any number of readers
// follow it with Next, each at its own place, so a slow reader holds up no one: the log keeps
// every event, and a reader that falls behind reads on from where it was. Events are never
// changed once appended, so the slices Next returns may be read without a lock.
//
// A build that follows a shared run (see run) has a log that is a view of the run's: the
// run's events, the same numbers and frames, without a copy. When the build leaves the run
// before it ends (its client cancelled, its time budget ran out), end cuts the view: the log
// keeps the run's events up to then and ends with a result of its own.
type Log struct {
	mu sync.Mutex
	// src is the run's log this one shows, until end cuts it (nil: a log of its own). Lock
	// order: a view's mu, then its src's.
	src *Log
	// hold hides src's result event: the build ends with a result of its own (end), which
	// may come after the run's.
	hold   bool
	events []Event
	ended  bool          // the result event is in
	wake   chan struct{} // closed and replaced at each append, and when a view is cut
	part   []byte        // a line not yet complete (Write)
	// frames are every event as a Server-Sent Events frame, one after the other, made once
	// when the event is appended: a thousand clients of one build send the same bytes.
	frames []byte
	// shown rewrites the server's paths in each line as clients are shown them (nil: none).
	shown *shownPaths
}

// NewLog is an empty log.
func NewLog() *Log { return &Log{wake: make(chan struct{})} }

// newShownLog is an empty log whose lines show the server's paths as shown does.
func newShownLog(shown *shownPaths) *Log {
	l := NewLog()
	l.shown = shown
	return l
}

// view is a log that shows l's events, for a build that follows l's run.
func (l *Log) view() *Log { return &Log{src: l, wake: make(chan struct{})} }

// Write appends the complete lines of p, one event each; a line's type is its "type" field.
// It keeps an unfinished line until the rest comes. It never fails: a renderer writing to the
// log must never stall a build. A view is not written (its run's log is).
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if len(l.part) > 0 {
		p = append(l.part, p...)
		l.part = nil
	}
	appended := false
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		if i > 0 {
			l.appendLocked(bytes.Clone(p[:i]))
			appended = true
		}
		p = p[i+1:]
	}
	if len(p) > 0 {
		l.part = bytes.Clone(p)
	}
	if appended {
		l.wakeLocked()
	}
	return n, nil
}

func (l *Log) wakeLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

func (l *Log) appendLocked(line []byte) {
	if l.ended || l.src != nil {
		return // nothing follows the result; a view shows its run's events
	}
	line = l.shown.line(line)
	t := lineType(line)
	seq := int64(len(l.events)) + 1
	off := len(l.frames)
	l.frames = appendFrame(l.frames, seq, t, line)
	l.events = append(l.events, Event{Seq: seq, Type: t, Data: line, off: off, end: len(l.frames)})
	if t == "result" {
		l.ended = true
	}
}

// shownLocked is what the log shows now: its events (capped, so that the caller's appends
// never reach the log's), whether they end with the result, its frames, and the channels a
// change of them closes. l.mu is held.
func (l *Log) shownLocked() (events []Event, ended bool, frames []byte, wakes [2]chan struct{}) {
	wakes[0] = l.wake
	if l.src == nil {
		return l.events[:len(l.events):len(l.events)], l.ended, l.frames, wakes
	}
	s := l.src
	s.mu.Lock()
	defer s.mu.Unlock()
	events, ended, frames, wakes[1] = s.events[:len(s.events):len(s.events)], s.ended, s.frames, s.wake
	if l.hold && ended {
		events, ended = events[:len(events)-1], false
	}
	return events, ended, frames, wakes
}

// end cuts a view from its run's log: the log keeps the events it shows now (the run's result
// not among them) and ends with line, a result of its own. Readers go on from where they were.
// It does nothing to a log that has ended.
func (l *Log) end(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src != nil {
		l.hold = true
		events, _, frames, _ := l.shownLocked()
		l.src = nil
		l.events = append([]Event(nil), events...)
		n := 0
		if len(events) > 0 {
			n = events[len(events)-1].end
		}
		l.frames = frames[:n:n] // shared with the run's; the next append copies
	}
	if l.ended {
		return
	}
	l.appendLocked(bytes.Clone(line))
	l.wakeLocked()
}

// holdResult makes a view hide its run's result event: the build takes a result of its own
// when the run ends (end).
func (l *Log) holdResult() {
	l.mu.Lock()
	l.hold = true
	l.mu.Unlock()
}

// appendFrame appends an event as a Server-Sent Events frame: its number as the id, its type
// as the event name, its line as the data (a line is one line: JSON escapes line breaks).
func appendFrame(b []byte, seq int64, typ string, line []byte) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "\nevent: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, line...)
	return append(b, "\n\n"...)
}

// SSE is the Server-Sent Events frames of events, a run of consecutive events that Next
// returned, as one slice to send (it must not be changed).
func (l *Log) SSE(events []Event) []byte {
	if len(events) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// A view's frames are its run's, and stay at the same places once it is cut.
	_, _, frames, _ := l.shownLocked()
	return frames[events[0].off:events[len(events)-1].end:events[len(events)-1].end]
}

// lineType is the "type" field of a v1 JSON line ("" when it has none).
func lineType(line []byte) string {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &head) != nil {
		return ""
	}
	return head.Type
}

// Next returns the events after the one numbered after (all of them for 0), waiting until
// there is at least one, the log has ended, or ctx ends. ended is true when the events returned
// reach the result event, the last one.
func (l *Log) Next(ctx context.Context, after int64) (events []Event, ended bool, err error) {
	if after < 0 {
		after = 0
	}
	for {
		l.mu.Lock()
		evs, done, _, wakes := l.shownLocked()
		l.mu.Unlock()
		if after < int64(len(evs)) {
			return evs[after:], done, nil
		}
		if done {
			return nil, true, nil
		}
		select {
		case <-wakes[0]:
		case <-wakes[1]: // nil (never) for a log of its own
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// Head is the number of the last event (0 while there is none).
func (l *Log) Head() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs, _, _, _ := l.shownLocked()
	return int64(len(evs))
}

// Ended reports whether the result event is in.
func (l *Log) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ended, _, _ := l.shownLocked()
	return ended
}

// Lines is every event's line, each followed by a newline: the build's trace.
func (l *Log) Lines() []byte {
	l.mu.Lock()
	evs, _, _, _ := l.shownLocked()
	l.mu.Unlock()
	var b bytes.Buffer
	for _, e := range evs {
		b.Write(e.Data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// lines is Lines as a list, for reading the events back (budgetResult).
func (l *Log) lines() [][]byte {
	l.mu.Lock()
	evs, _, _, _ := l.shownLocked()
	l.mu.Unlock()
	out := make([][]byte, len(evs))
	for i, e := range evs {
		out[i] = e.Data
	}
	return out
}

// result is the result event's line, or nil.
func (l *Log) result() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs, ended, _, _ := l.shownLocked()
	if !ended {
		return nil
	}
	return evs[len(evs)-1].Data
}
