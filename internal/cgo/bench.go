//go:build trtbench

// bench.go: the Go side of the measurement and test ABI of trtb_bench.h, for this package's
// tests and benchmarks. The trtbench tag compiles it (and bench.cpp), so a trtbuild binary
// holds none of it: go test -tags trtbench ./internal/cgo.

package cgo

/*
#include <stdlib.h>
#include "trtb_bench.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"time"
	"unsafe"
)

// benchResult is trtb_bench_result.
type benchResult struct {
	p50, p99, max  time.Duration
	calls, drained uint64
	droppedSteps   uint64
}

// benchMonitor measures the builder-side cost of one progress report. threads threads each make
// callsPerThread calls of exactly what a builder thread's stepComplete does (queue the step,
// check for cancel), with gap of busy work between one call and the next on each thread, as a
// builder does between steps, timing every call, while one more thread drains the queue as
// Drain does. It returns all of trtb_bench_result: the median, the 99th percentile and the
// largest latency among them.
func benchMonitor(threads, callsPerThread int, gap time.Duration) (benchResult, error) {
	if threads < 1 || threads > 1024 || callsPerThread < 1 || callsPerThread > 1<<24 || gap < 0 || gap > time.Second {
		return benchResult{}, invalid("benchMonitor needs 1..1024 threads and 1..%d calls per thread, got %d and %d",
			1<<24, threads, callsPerThread)
	}
	var r C.trtb_bench_result
	if code := Code(C.trtb_bench_monitor_paced(C.int32_t(threads), C.int32_t(callsPerThread), C.int64_t(gap), &r)); code != CodeOK {
		return benchResult{}, &Error{Code: code, Message: fmt.Sprintf("the monitor benchmark failed: %v", code)}
	}
	return benchResult{
		p50:          time.Duration(r.p50_ns),
		p99:          time.Duration(r.p99_ns),
		max:          time.Duration(r.max_ns),
		calls:        uint64(r.calls),
		drained:      uint64(r.drained),
		droppedSteps: uint64(r.dropped_steps),
	}, nil
}

// eventBytes is what one event counts against the queue's bound besides its text, and
// publishChunk how far each thread may pass the bound (see EventQueue in trtb_internal.hpp).
const eventBytes = C.sizeof_trtb_event

var publishChunk = int(C.trtb_test_publish_chunk())

// newLogFloodBuild makes a Build whose Run logs rounds lines of each severity and reports
// rounds steps from one thread (trtb_test_log_flood_create), to test the queue's bound.
func newLogFloodBuild(rounds int, maxBytes uint64) (*Build, error) {
	var st C.trtb_status
	var h *C.trtb_build
	if C.trtb_test_log_flood_create(C.int32_t(rounds), C.uint64_t(maxBytes), &h, &st) != C.TRTB_OK {
		return nil, statusError(&st)
	}
	return wrap(h, nil, defaultBatchEvents, defaultBatchText), nil
}

// newFloodBuild makes a Build whose Run has threads threads each start a phase "Flood <n>",
// report perThread steps as fast as they can and finish it (trtb_bench_flood_create), for
// measuring Drain and for testing a full queue. maxBytes bounds the queue; 0: the default.
func newFloodBuild(threads, perThread int, maxBytes uint64, events, text int) (*Build, error) {
	var st C.trtb_status
	var h *C.trtb_build
	if C.trtb_bench_flood_create(C.int32_t(threads), C.int32_t(perThread), C.uint64_t(maxBytes), &h, &st) != C.TRTB_OK {
		return nil, statusError(&st)
	}
	return wrap(h, nil, events, text), nil
}

// testGuarded runs trtb_test_guarded: a body that throws what the number chooses (see
// trtb_bench.h), through the guarded-call helper of the C boundary.
func testGuarded(what int) error {
	var st C.trtb_status
	if C.trtb_test_guarded(C.int32_t(what), &st) != C.TRTB_OK {
		return statusError(&st)
	}
	return nil
}

// cacheLoad is trtb_test_cache_load: what TensorRT did with a serialized timing cache it was
// given (see trtb_bench.h).
type cacheLoad struct {
	size             uint64
	created          bool
	errors, warnings []string // logged by the calling thread during createTimingCache
	keys             int64    // -1: cannot count
	exact            bool     // setTimingCache(cache, false) succeeded
	exactRefusal     []string
	strict           bool
}

// cacheVerdict is trtb_test_cache_verdict.
type cacheVerdict struct {
	kind, action int
	message      string
}

// The kinds and actions of cacheVerdict, in timing_cache_rules.hpp's order.
const (
	cacheKindNone = iota
	cacheKindUsable
	cacheKindEmpty
	cacheKindMismatch
	cacheKindForeign
)

const (
	cacheActionNew = iota
	cacheActionAttach
	cacheActionAttachIgnoringMismatch
	cacheActionStartEmpty
	cacheActionFail
)

// The answers of judgeCacheSave.
const (
	cacheSaveNothing = iota
	cacheSaveWriteOwn
	cacheSaveMerge
)

// judgeCacheLoad runs the timing cache's load decision (trtb_test_timing_cache_load).
func judgeCacheLoad(in cacheLoad) (cacheVerdict, error) {
	var mem cmem
	defer mem.free()
	var c C.trtb_test_cache_load
	c.size = C.uint64_t(in.size)
	c.keys = C.int64_t(in.keys)
	c.created, c.exact, c.strict = cBool(in.created), cBool(in.exact), cBool(in.strict)
	var err error
	if c.errors, err = mem.strs("error", in.errors); err != nil {
		return cacheVerdict{}, err
	}
	if c.warnings, err = mem.strs("warning", in.warnings); err != nil {
		return cacheVerdict{}, err
	}
	if c.exact_refusal, err = mem.strs("refusal", in.exactRefusal); err != nil {
		return cacheVerdict{}, err
	}
	c.nb_errors, c.nb_warnings, c.nb_exact_refusal = C.int32_t(len(in.errors)), C.int32_t(len(in.warnings)), C.int32_t(len(in.exactRefusal))
	var out C.trtb_test_cache_verdict
	if code := Code(C.trtb_test_timing_cache_load(&c, &out)); code != CodeOK {
		return cacheVerdict{}, &Error{Code: code, Message: "trtb_test_timing_cache_load failed"}
	}
	return cacheVerdict{kind: int(out.kind), action: int(out.action), message: C.GoString(&out.message[0])}, nil
}

// judgeCacheSave runs the timing cache's save decision (trtb_test_timing_cache_save).
func judgeCacheSave(fileSize uint64, buildKeys int64, holdsFile bool) (int, error) {
	var action C.int32_t
	holds := C.int32_t(0)
	if holdsFile {
		holds = 1
	}
	if code := Code(C.trtb_test_timing_cache_save(C.uint64_t(fileSize), C.int64_t(buildKeys), holds, &action)); code != CodeOK {
		return 0, &Error{Code: code, Message: "trtb_test_timing_cache_save failed"}
	}
	return int(action), nil
}

// threadCapture runs trtb_test_thread_capture: lines are a severity digit and a text. It returns
// the lines the capture took, in order, and how many it left to be shown live.
func threadCapture(own, other, after []string) (taken []string, live int, err error) {
	var mem cmem
	defer mem.free()
	o, err := mem.strs("line", own)
	if err != nil {
		return nil, 0, err
	}
	t, err := mem.strs("line", other)
	if err != nil {
		return nil, 0, err
	}
	a, err := mem.strs("line", after)
	if err != nil {
		return nil, 0, err
	}
	const size = 1 << 16
	buf := (*C.char)(mem.alloc(size))
	var n C.int32_t
	if code := Code(C.trtb_test_thread_capture(o, C.int32_t(len(own)), t, C.int32_t(len(other)), a, C.int32_t(len(after)), buf, size, &n)); code != CodeOK {
		return nil, 0, &Error{Code: code, Message: "trtb_test_thread_capture failed"}
	}
	if s := C.GoString(buf); s != "" {
		taken = strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	return taken, int(n), nil
}

func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// testCreateBuilder creates and deletes a builder through the installed libnvinfer
// (trtb_test_create_builder), for the tests of the loading rules.
func testCreateBuilder() error {
	var st C.trtb_status
	if C.trtb_test_create_builder(&st) != C.TRTB_OK {
		return statusError(&st)
	}
	return nil
}

// fakeProbe asks the stand-in TensorRT of major a question through TensorRT's API
// (trtb_test_fake_probe) and returns its answer.
func fakeProbe(major int, what string) (string, error) {
	cw := C.CString(what)
	defer C.free(unsafe.Pointer(cw))
	buf := make([]byte, 1<<16)
	out := (*C.char)(C.malloc(C.size_t(len(buf))))
	defer C.free(unsafe.Pointer(out))
	if code := C.trtb_test_fake_probe(C.int32_t(major), cw, out, C.int32_t(len(buf))); code != C.TRTB_OK {
		return "", fmt.Errorf("trtb_test_fake_probe(%d, %q): code %d", major, what, code)
	}
	return C.GoString(out), nil
}

// shimText asks the TensorRT 10 shim's text helper what (trtb_test_shim_text: 0 the name of
// parser error code n, 1 check_versions(n), 2 join_listed(texts), 3 one_line(texts[0]), 4
// dims_text(dims), 5 to_trtb_severity(n) in decimal) and returns its text.
func shimText(what, n int, texts []string, dims []int64) (string, error) {
	ctexts := make([]*C.char, len(texts)+1)
	for i, s := range texts {
		ctexts[i] = C.CString(s)
		defer C.free(unsafe.Pointer(ctexts[i]))
	}
	ptexts := (**C.char)(C.malloc(C.size_t(len(ctexts)) * C.size_t(unsafe.Sizeof(ctexts[0]))))
	defer C.free(unsafe.Pointer(ptexts))
	copy(unsafe.Slice(ptexts, len(ctexts)), ctexts)
	var pdims *C.int64_t
	if len(dims) > 0 {
		pdims = (*C.int64_t)(C.malloc(C.size_t(len(dims)) * 8))
		defer C.free(unsafe.Pointer(pdims))
		for i, d := range dims {
			unsafe.Slice(pdims, len(dims))[i] = C.int64_t(d)
		}
		n = len(dims)
	}
	const size = 1 << 12
	out := (*C.char)(C.malloc(size))
	defer C.free(unsafe.Pointer(out))
	if code := C.trtb_test_shim_text(C.int32_t(what), C.int32_t(n), ptexts, C.int32_t(len(texts)), pdims, out, size); code != C.TRTB_OK {
		return "", fmt.Errorf("trtb_test_shim_text(%d, %d): code %d", what, n, code)
	}
	return C.GoString(out), nil
}

// recorderAnswers is trtb_test_recorder: what the shim's IErrorRecorder answers TensorRT.
type recorderAnswers struct {
	NbErrors, FirstCode, LastCode, BeyondCode, NegativeCode, ClearedNbErrors, Logged int
	FirstDesc, LastDesc                                                              string
	Overflowed, BeyondDescEmpty, ClearedOverflowed, Fatal                            bool
	LoggedOlder                                                                      uint64
}

// errorRecorder reports n errors to a fresh shim ErrorRecorder, the i-th with code
// codes[i%len(codes)] and the text "error <i>", and returns what it answers
// (trtb_test_error_recorder).
func errorRecorder(n int, codes []int32) (recorderAnswers, error) {
	if len(codes) == 0 {
		return recorderAnswers{}, invalid("errorRecorder needs a code")
	}
	pcodes := (*C.int32_t)(C.malloc(C.size_t(len(codes)) * 4))
	defer C.free(unsafe.Pointer(pcodes))
	for i, c := range codes {
		unsafe.Slice(pcodes, len(codes))[i] = C.int32_t(c)
	}
	var r C.trtb_test_recorder
	if code := C.trtb_test_error_recorder(C.int32_t(n), pcodes, C.int32_t(len(codes)), &r); code != C.TRTB_OK {
		return recorderAnswers{}, fmt.Errorf("trtb_test_error_recorder(%d): code %d", n, code)
	}
	return recorderAnswers{
		NbErrors: int(r.nb_errors), FirstCode: int(r.first_code), LastCode: int(r.last_code),
		BeyondCode: int(r.beyond_code), NegativeCode: int(r.negative_code), ClearedNbErrors: int(r.cleared_nb_errors),
		Logged: int(r.logged), FirstDesc: C.GoString(&r.first_desc[0]), LastDesc: C.GoString(&r.last_desc[0]),
		Overflowed: r.overflowed != 0, BeyondDescEmpty: r.beyond_desc_empty != 0,
		ClearedOverflowed: r.cleared_overflowed != 0, Fatal: r.fatal != 0, LoggedOlder: uint64(r.logged_older),
	}, nil
}
