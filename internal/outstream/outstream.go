// Package outstream decouples progress output from the process that makes it. A Writer
// accepts every Write at once, into memory, and a goroutine of its own copies the bytes to the
// real output (stdout, a --trace FIFO). A reader that stops reading (a pipe nobody drains, a
// terminal paused with Ctrl-S) therefore never delays the caller: signals, time budgets and
// the kill timer of a build act on time whatever stdout does.
//
// When the output fails (EPIPE, or on Windows ERROR_BROKEN_PIPE or ERROR_NO_DATA: the reader
// went away, as with `| head -1`; see exitcode.IsClosedPipe) the Writer stops writing, calls
// OnError once, and from then on discards: the build goes on and its outcome does not change.
package outstream

import (
	"io"
	"sync"
	"time"
)

// DefaultLimit bounds the bytes held for a reader that does not read; beyond it, whole writes
// are dropped (and counted) rather than memory grown without end.
const DefaultLimit = 64 << 20

// Options configure a Writer.
type Options struct {
	// Limit is the most bytes held; 0 means DefaultLimit.
	Limit int
	// OnError, when set, is called once, from the copying goroutine, with the first error the
	// output returned.
	OnError func(error)
}

// Writer is an io.Writer that never blocks. Its methods are safe for concurrent use.
type Writer struct {
	dst  io.Writer
	opts Options

	mu       sync.Mutex
	buf      []byte
	err      error
	closed   bool
	dropped  int64
	written  int64
	wake     chan struct{} // has data or closed
	progress chan struct{} // bytes reached the output
	done     chan struct{} // the copier ended
}

// New starts a Writer that copies to dst.
func New(dst io.Writer, opts Options) *Writer {
	if opts.Limit <= 0 {
		opts.Limit = DefaultLimit
	}
	w := &Writer{
		dst: dst, opts: opts,
		wake: make(chan struct{}, 1), progress: make(chan struct{}, 1), done: make(chan struct{}),
	}
	go w.copy()
	return w
}

// Write queues p and returns len(p), nil: it never blocks and never fails, so a renderer
// never sees the output's trouble. After an output error or past Limit the bytes are dropped.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	switch {
	case w.err != nil || w.closed:
	case len(w.buf)+len(p) > w.opts.Limit:
		w.dropped += int64(len(p))
	default:
		w.buf = append(w.buf, p...)
		signal(w.wake)
	}
	w.mu.Unlock()
	return len(p), nil
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (w *Writer) copy() {
	defer close(w.done)
	var chunk []byte
	for {
		w.mu.Lock()
		for len(w.buf) == 0 && !w.closed {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if len(w.buf) == 0 {
			w.mu.Unlock()
			return
		}
		chunk, w.buf = w.buf, chunk[:0]
		w.mu.Unlock()

		n, err := w.dst.Write(chunk)
		if err == nil && n < len(chunk) {
			err = io.ErrShortWrite
		}
		w.mu.Lock()
		w.written += int64(n)
		if err != nil {
			w.err = err
			w.buf = nil
		}
		w.mu.Unlock()
		signal(w.progress)
		if err != nil {
			if w.opts.OnError != nil {
				w.opts.OnError(err)
			}
			return
		}
	}
}

// Close stops accepting writes and waits until everything queued reached the output, the
// output failed, the output accepted nothing for stall (a reader that stopped reading; 0
// waits without limit), or stop is closed or receives. It returns how many bytes were not
// written (queued, or dropped past Limit) and the output's error.
func (w *Writer) Close(stall time.Duration, stop <-chan struct{}) (unwritten int64, err error) {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	signal(w.wake)
	var timer *time.Timer
	var expired <-chan time.Time
	if stall > 0 {
		timer = time.NewTimer(stall)
		defer timer.Stop()
		expired = timer.C
	}
wait:
	for {
		select {
		case <-w.done:
			break wait
		case <-w.progress:
			if timer != nil {
				timer.Reset(stall)
			}
		case <-expired:
			break wait
		case <-stop:
			break wait
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return int64(len(w.buf)) + w.dropped, w.err
}
