package enginecache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// LockWait is the longest Get and Put wait for another build's lock; the caller's context
// (a signal, a time budget) ends the wait sooner.
const LockWait = 2 * time.Minute

const lockRetry = 20 * time.Millisecond

// outpathKind names the kind of file a is, for messages.
func outpathKind(a *attr) string { return outpath.KindOf(a.kind()).String() }

// errReadOnly marks a lock file that could not be created in a cache folder this user cannot
// write: a lookup goes on without the lock (entries appear and disappear whole).
var errReadOnly = errors.New("the cache folder is not writable")

// lockLinkError and lockKindError are the refusals of a lock file planted as something else.
func lockLinkError(name string) error {
	return fmt.Errorf("the lock file %s is a symbolic link; trtbuild does not follow links in the engine cache: remove it", name)
}

func lockKindError(name string, a *attr) error {
	return fmt.Errorf("the lock file %s is %s, not a regular file; remove it", name, outpathKind(a))
}

// lock takes the cache's lock, exclusive or shared, waiting until ctx is done or LockWait has
// passed: flock(2) on Unix, LockFileEx on Windows (lock_unix.go, lock_windows.go), tried
// without blocking and retried every lockRetry. The lock file is opened as every file of the
// cache is: never through a link (a planted link would make trtbuild create its target),
// without blocking (a FIFO planted there would block the open forever), and only when it is a
// regular file. Its owner does not matter: any user of a shared cache takes the same lock.
// Closing the file, or the end of the process however it ends, releases the lock.
func (c *Cache) lock(parent context.Context, exclusive bool) (unlock func(), err error) {
	name := pathtext.Q(c.path(lockName))
	lf, err := openLock(c.root, name, exclusive)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(parent, LockWait)
	defer cancel()
	tick := time.NewTicker(lockRetry)
	defer tick.Stop()
	for {
		ok, err := tryLock(lf, exclusive)
		if ok {
			return func() { lf.Close() }, nil // closing releases the lock
		}
		if err != nil {
			lf.Close()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			lf.Close()
			if parent.Err() != nil {
				return nil, fmt.Errorf("waiting for the lock %s: %w", name, context.Cause(parent))
			}
			return nil, fmt.Errorf("another build held the lock %s for %s: %w", name, LockWait, ctx.Err())
		case <-tick.C:
		}
	}
}
