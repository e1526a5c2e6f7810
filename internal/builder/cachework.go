package builder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// cacheWork is the engine cache's work before and after a build (hashing the model, waiting
// for the cache's lock, copying an engine): a signal or the --timeout budget cancels ctx, which
// the cache looks at while it waits and between chunks it copies, so Ctrl-C, SIGTERM and the
// budget act there as during a build.
type cacheWork struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	sig     os.Signal
	timeout time.Duration
	expired bool
	stopped bool // the caller's context ended
}

// errStopped is the cause of a context ended by the caller's context.
var errStopped = errors.New("the build was cancelled")

// errBudget is the cause of a context ended by the --timeout budget.
var errBudget = errors.New("the --timeout budget ran out")

// watchCacheWork watches sigs, parent (a caller's cancel) and the budget (timeout from began;
// none when zero) until end.
func watchCacheWork(parent context.Context, sigs <-chan os.Signal, began time.Time, timeout time.Duration) *cacheWork {
	ctx, cancel := context.WithCancelCause(context.Background())
	w := &cacheWork{ctx: ctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{}), timeout: timeout}
	var budget <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Until(began.Add(timeout)))
		budget = t.C
		defer func() {
			go func() { <-w.done; t.Stop() }()
		}()
	}
	go func() {
		defer close(w.done)
		select {
		case sig := <-sigs:
			w.mu.Lock()
			w.sig = sig
			w.mu.Unlock()
			cancel(fmt.Errorf("%s", exitcode.SignalName(sig)))
		case <-budget:
			w.mu.Lock()
			w.expired = true
			w.mu.Unlock()
			cancel(errBudget)
		case <-parent.Done():
			w.mu.Lock()
			w.stopped = true
			w.mu.Unlock()
			cancel(errStopped)
		case <-w.stop:
		}
	}()
	return w
}

// end stops watching and returns the exit error of a signal or budget that came meanwhile
// (when says when: "during the engine cache lookup"), or nil. Signals after end go to whoever
// reads sigs next.
func (w *cacheWork) end(when string) error {
	close(w.stop)
	<-w.done
	w.cancel(nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.sig != nil:
		return exitcode.SignalError(w.sig, when)
	case w.expired:
		return &exitcode.Error{Code: exitcode.TimedOut, Err: fmt.Errorf("build exceeded --timeout %s %s", w.timeout, when)}
	case w.stopped:
		return &exitcode.Error{Code: exitcode.Interrupted, Err: fmt.Errorf("cancelled %s", when)}
	}
	return nil
}

// abandonable runs fn, returning early with ctx's cause when ctx ends first; fn must only read
// (it is left to finish on its own).
func abandonable[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}
