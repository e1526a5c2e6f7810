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
type Log struct {
	mu     sync.Mutex
	events []Event
	ended  bool          // the result event is in
	wake   chan struct{} // closed and replaced at each append
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

// Write appends the complete lines of p, one event each; a line's type is its "type" field.
// It keeps an unfinished line until the rest comes. It never fails: a renderer writing to the
// log must never stall a build.
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
		close(l.wake)
		l.wake = make(chan struct{})
	}
	return n, nil
}

func (l *Log) appendLocked(line []byte) {
	if l.ended {
		return // nothing follows the result
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
	return l.frames[events[0].off:events[len(events)-1].end:events[len(events)-1].end]
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
		if after < int64(len(l.events)) {
			evs := l.events[after:len(l.events):len(l.events)]
			done := l.ended
			l.mu.Unlock()
			return evs, done, nil
		}
		if l.ended {
			l.mu.Unlock()
			return nil, true, nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// Head is the number of the last event (0 while there is none).
func (l *Log) Head() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.events))
}

// Ended reports whether the result event is in.
func (l *Log) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

// Lines is every event's line, each followed by a newline: the build's trace.
func (l *Log) Lines() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	for _, e := range l.events {
		b.Write(e.Data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// result is the result event's line, or nil.
func (l *Log) result() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		return nil
	}
	return l.events[len(l.events)-1].Data
}
