package cgo

/*
#include <stdlib.h>
#include "trtb.h"
*/
import "C"

import (
	"bytes"
	"unsafe"
)

// MergeTimingCache combines disk, the timing cache as it is on disk now (nil when there is no
// file yet), with this build's cache (TimingCache) and returns the bytes to save; nil means
// there is nothing to save. Entries already on disk are kept; the build adds those the disk
// lacks. When disk is not a cache this backend can read (corrupt, or made by another builder,
// TensorRT version or GPU) the error is an *Error with CodeCacheRejected, and the file must be
// left alone.
//
// Call it after Run has returned, from one goroutine at a time (internal/timingcache calls it
// with the cache file locked), and, as Run, from a goroutine that holds runtime.LockOSThread:
// the TensorRT backend selects the build's device on the calling thread and creates a builder
// there for the merge. disk is copied into C memory for the call; the result is a Go copy.
func (b *Build) MergeTimingCache(disk []byte) ([]byte, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return nil, errClosed()
	}
	var in unsafe.Pointer
	if len(disk) > 0 {
		in = C.CBytes(disk)
		defer C.free(in)
	}
	var out unsafe.Pointer
	var size C.uint64_t
	var st C.trtb_status
	if C.trtb_build_merge_timing_cache(b.h, in, C.uint64_t(len(disk)), &out, &size, &st) != C.TRTB_OK {
		return nil, statusError(&st)
	}
	if size == 0 || out == nil {
		return nil, nil
	}
	return bytes.Clone(unsafe.Slice((*byte)(out), int(size))), nil
}
