package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/trtbuild/trtbuild/internal/service"
)

// The event stream's limits.
const (
	keepaliveEvery = 15 * time.Second // a comment after this long without an event
	maxLag         = 4096             // a client this many events behind the head is dropped
	writeWait      = 10 * time.Second // a client whose write blocks this long is dropped
)

// keepalive is the comment sent after keepaliveEvery without an event.
var keepalive = []byte(": keepalive\n\n")

// events streams a build's events as Server-Sent Events: from the start, or after the event
// named by Last-Event-ID or ?after=N; then live until the result event, after which the
// handler returns. A stream of a build that has ended, asked for after its last event, is 204
// (which tells EventSource to stop reconnecting).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	evlog, ok := s.m.Events(id)
	if !ok {
		s.writeServiceError(w, r, service.ErrNotFound)
		return
	}
	after, ok := resumePoint(w, r, evlog.Head())
	if !ok {
		return
	}
	if evlog.Ended() && after >= evlog.Head() {
		w.WriteHeader(http.StatusNoContent) // nothing more will come
		return
	}
	ctx := r.Context()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	// The server's ReadTimeout would end the stream (its connection's read deadline passes
	// while the handler runs): a stream lasts as long as its build. Each write has its own
	// deadline instead, lifted again when the stream ends.
	if err := rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return
	}
	defer rc.SetWriteDeadline(time.Time{})
	if err := rc.SetWriteDeadline(time.Now().Add(writeWait)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return
	}
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	s.m.ClientDelta(1)
	defer s.m.ClientDelta(-1)
	for {
		wait, cancel := context.WithTimeout(ctx, s.keepalive)
		batch, ended, err := evlog.Next(wait, after)
		cancel()
		if ctx.Err() != nil {
			return // the client went away, or the server closes
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			s.log.Error("event stream ended", "build", id, "error", err.Error())
			return
		}
		if len(batch) == 0 && ended {
			return
		}
		// The log keeps each event's frame, made once for every client (Log.SSE).
		frames := keepalive
		if len(batch) > 0 {
			frames = evlog.SSE(batch)
		}
		if err := rc.SetWriteDeadline(time.Now().Add(writeWait)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return
		}
		if _, err := w.Write(frames); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if len(batch) > 0 {
			s.m.CountStreamed(len(batch))
			after = batch[len(batch)-1].Seq
		}
		if ended && after >= evlog.Head() {
			return // the result event was the last
		}
		if evlog.Head()-after > maxLag {
			// Too slow for this build: the stream ends, and the client resumes from
			// Last-Event-ID, reading the log, not slowing the build.
			s.log.Warn("dropped a client of the event stream", "build", id, "client", s.peerFrom(r).addr.String(), "behind", evlog.Head()-after)
			return
		}
	}
}

// resumePoint is the sequence number the stream starts after: Last-Event-ID's, else ?after's,
// else 0. A value that is not a number from 0 to head is answered 400.
func resumePoint(w http.ResponseWriter, r *http.Request, head int64) (int64, bool) {
	name, v := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if v == "" {
		name, v = "after", r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		writeError(w, http.StatusBadRequest, name+" "+quoteHeader(v)+" is not an event number", "give the id: of the last event received (0 for the start)")
		return 0, false
	}
	if n > head {
		writeError(w, http.StatusBadRequest, name+" "+v+" is past this build's last event ("+strconv.FormatInt(head, 10)+")", "give the id: of the last event received from this build's stream")
		return 0, false
	}
	return n, true
}
