// Package sseclient is the client side of trtbuild serve's event stream (Server-Sent Events,
// GET /v1/builds/<id>/events) for the scripts that load and attack the server: it opens a
// stream, resuming after an event with Last-Event-ID, and reads its events as they arrive.
package sseclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Event is one event as the client received it.
type Event struct {
	Seq      int64  // its id: the event's sequence number in the build's log
	Type     string // its event field: "phase", "result", ...
	Data     []byte // its data lines, joined
	Received time.Time
}

// Open requests the event stream at url with c; after > 0 asks for the events after that one
// (Last-Event-ID). The caller checks the status and closes the body.
func Open(ctx context.Context, c *http.Client, url string, after int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	return c.Do(req)
}

// Read reads an event stream, calling fn for each event until fn returns false or the stream
// ends (a clean end is no error). Comments (keep-alives) are skipped.
func Read(r io.Reader, fn func(Event) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var ev Event
	var long []byte // a line longer than the reader's buffer, so far
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line, long = append(long, line...), nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if ev.Type != "" || ev.Data != nil {
				ev.Received = time.Now()
				if !fn(ev) {
					return nil
				}
			}
			ev = Event{}
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("id: ")):
			ev.Seq, _ = strconv.ParseInt(string(line[4:]), 10, 64)
		case bytes.HasPrefix(line, []byte("event: ")):
			ev.Type = string(line[7:])
		case bytes.HasPrefix(line, []byte("data: ")):
			ev.Data = append(ev.Data, line[6:]...)
		}
	}
}
