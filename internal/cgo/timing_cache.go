package cgo

/*
#include <stdlib.h>
#include "trtb.h"
*/
import "C"

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"
)

// CBuffer is bytes in the C heap: data the builder reads in place, such as a timing cache of
// hundreds of MB, which would otherwise be held twice (once by Go, once by C) or more. Its
// owner frees it with Free; a nil *CBuffer is empty.
type CBuffer struct {
	p unsafe.Pointer
	n int
}

// NewCBuffer allocates n bytes in the C heap (zeroed); n 0 gives an empty buffer.
func NewCBuffer(n int) (*CBuffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("a buffer of %d bytes", n)
	}
	if n == 0 {
		return &CBuffer{}, nil
	}
	p := C.calloc(1, C.size_t(n))
	if p == nil {
		return nil, fmt.Errorf("out of memory for %d bytes", n)
	}
	return &CBuffer{p: p, n: n}, nil
}

// ReadCBuffer reads r, which holds size bytes, into a new CBuffer.
func ReadCBuffer(r io.Reader, size int64) (*CBuffer, error) {
	if size < 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("cannot hold %d bytes", size)
	}
	buf, err := NewCBuffer(int(size))
	if err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(r, buf.Bytes()); err != nil {
		buf.Free()
		return nil, err
	}
	return buf, nil
}

// Bytes returns the buffer's memory as a slice, valid until Free.
func (c *CBuffer) Bytes() []byte {
	if c == nil || c.n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(c.p), c.n)
}

// Len returns the buffer's size.
func (c *CBuffer) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}

// Free releases the memory; the buffer is empty afterwards. Freeing twice, or a nil buffer,
// is harmless.
func (c *CBuffer) Free() {
	if c == nil || c.p == nil {
		return
	}
	C.free(c.p)
	c.p, c.n = nil, 0
}

// DiskCache is what a timing cache file holds when a build's cache is written into it.
type DiskCache struct {
	// Given means the file holds exactly the cache given in Options.TimingCache (none: there
	// is no file, or it is empty), so that a file nobody changed since the build loaded it is
	// not read again.
	Given bool
	// Data is the file's bytes otherwise; nil for no file or an empty one. Only read during
	// the call.
	Data *CBuffer
}

// WriteTimingCache merges what this build's cache holds (Options.TimingCache plus what the
// build learned) into the cache file's and, when the result differs from what the file holds,
// writes it to out from out's current offset and returns true. Entries already in the file are
// kept; the build adds those the file lacks. A build whose cache holds no entry (nothing given
// nor timed) writes nothing, whatever the file holds. With out nil it writes nothing and only
// tells whether there is something to save. When the file is not a cache this backend can read
// (corrupt, or made by another builder, TensorRT version or GPU) the error is an *Error with
// CodeCacheRejected, and the file must be left alone.
//
// Call it after Run has returned, from one goroutine at a time (internal/timingcache calls it
// with the cache file locked), and, as Run, from a goroutine that holds runtime.LockOSThread:
// the TensorRT backend selects the build's device on the calling thread and merges there
// through a new config of the build's own builder, which it keeps from Run until Close. Nothing is copied: disk.Data is read in place, and the merged cache is
// written straight to out by C.
func (b *Build) WriteTimingCache(disk DiskCache, out *os.File) (bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return false, errClosed()
	}
	given := C.int32_t(0)
	if disk.Given {
		given = 1
		disk.Data = nil
	}
	fd := C.int32_t(-1)
	if out != nil {
		fd = C.int32_t(out.Fd())
	}
	var changed C.int32_t
	var st C.trtb_status
	code := C.trtb_build_write_timing_cache(b.h, given, disk.Data.pointer(), C.uint64_t(disk.Data.Len()), fd, &changed, &st)
	runtime.KeepAlive(out) // its descriptor must stay open until C is done with it
	if code != C.TRTB_OK {
		return false, statusError(&st)
	}
	return changed != 0, nil
}

func (c *CBuffer) pointer() unsafe.Pointer {
	if c == nil {
		return nil
	}
	return c.p
}
