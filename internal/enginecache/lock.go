package enginecache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// LockWait is the longest Get and Put wait for another build's lock; the caller's context
// (a signal, a time budget) ends the wait sooner.
const LockWait = 2 * time.Minute

const lockRetry = 20 * time.Millisecond

// outpathKind names a stat mode's kind of file, for messages.
func outpathKind(mode uint32) string { return outpath.KindOf(modeOf(mode)).String() }

// errReadOnly marks a lock file that could not be created in a cache folder this user cannot
// write: a lookup goes on without the lock (entries appear and disappear whole).
var errReadOnly = errors.New("the cache folder is not writable")

// lock takes the cache's flock(2), exclusive or shared, waiting until ctx is done or LockWait
// has passed. The lock file is opened as every file of the cache is: never through a link
// (O_NOFOLLOW: a planted link would make trtbuild create its target), without blocking
// (O_NONBLOCK: a FIFO planted there would block open(2) forever), and only when it is a regular
// file. Its owner does not matter: any user of a shared cache takes the same lock.
func (c *Cache) lock(parent context.Context, exclusive bool) (unlock func(), err error) {
	name := pathtext.Q(c.path(lockName))
	fd, err := unix.Openat(c.rootFD(), lockName, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0o644)
	if err == unix.EACCES {
		// A link planted in a sticky folder gives EACCES with O_CREAT: say what is there.
		var st unix.Stat_t
		if unix.Fstatat(c.rootFD(), lockName, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
			return nil, fmt.Errorf("the lock file %s is %s, not a regular file; remove it", name, outpathKind(st.Mode))
		}
	}
	switch {
	case err == unix.ELOOP:
		return nil, fmt.Errorf("the lock file %s is a symbolic link; trtbuild does not follow links in the engine cache: remove it", name)
	case (err == unix.EACCES || err == unix.EROFS) && !exclusive:
		return nil, errReadOnly
	case err != nil:
		return nil, fmt.Errorf("opening the lock file %s: %w", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("opening the lock file %s: %w", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("the lock file %s is %s, not a regular file; remove it", name, outpathKind(st.Mode))
	}
	if int(st.Uid) == os.Geteuid() && st.Mode&0o444 != 0o444 {
		// Created under a strict umask: every user of the cache must be able to open it.
		_ = unix.Fchmod(fd, st.Mode&0o777|0o444)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	ctx, cancel := context.WithTimeout(parent, LockWait)
	defer cancel()
	tick := time.NewTicker(lockRetry)
	defer tick.Stop()
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Close(fd) }, nil // closing releases the lock
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			unix.Close(fd)
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			unix.Close(fd)
			if parent.Err() != nil {
				return nil, fmt.Errorf("waiting for the lock %s: %w", name, context.Cause(parent))
			}
			return nil, fmt.Errorf("another build held the lock %s for %s: %w", name, LockWait, ctx.Err())
		case <-tick.C:
		}
	}
}
