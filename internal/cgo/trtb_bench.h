//go:build trtbench

/*
 * trtb_bench.h: measurement and test surface of the native package.
 *
 * Nothing here is part of the build ABI in trtb.h, and no product code calls it: the package's
 * benchmarks use it to time the builder-side callback path, and its tests use it to drive the
 * event queue harder than a simulated build can. Only the Go build tag "trtbench" compiles it
 * (bench.cpp, bench.go and the tests that call them), so a trtbuild binary holds none of it:
 * go test -tags trtbench ./internal/cgo. Same rules as trtb.h: no exception crosses it, and no
 * Go code is called from it.
 */
#ifndef TRTB_BENCH_H
#define TRTB_BENCH_H

#include <stdint.h>

#include "trtb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Latencies of the callback path, in nanoseconds of the steady clock. */
typedef struct trtb_bench_result {
    int64_t p50_ns;
    int64_t p99_ns;
    int64_t max_ns;
    uint64_t calls;         /* calls whose step was queued: the latencies are of these only */
    uint64_t drained;       /* events the drainer took out */
    uint64_t dropped_steps; /* calls whose step the queue dropped because it was full (not timed) */
} trtb_bench_result;

/*
 * trtb_bench_monitor starts `threads` threads that each make calls_per_thread calls of exactly
 * what a builder thread's stepComplete does (queue the step, check for cancel), timing every
 * call whose step was queued (a dropped step takes a shorter path and is only counted), while
 * one more thread drains the queue the way the Go side does. Blocks until all of it
 * is done. Returns TRTB_OK, or TRTB_ERR_INVALID_ARGUMENT for counts out of range (threads
 * 1..1024, calls_per_thread 1..2^24, out not NULL).
 */
int32_t trtb_bench_monitor(int32_t threads, int32_t calls_per_thread, trtb_bench_result *out);

/*
 * trtb_bench_monitor_paced is trtb_bench_monitor with gap_ns of busy work between one call and
 * the next on each thread, as a builder does between steps (0: none; at most one second).
 */
int32_t trtb_bench_monitor_paced(int32_t threads, int32_t calls_per_thread, int64_t gap_ns,
                                 trtb_bench_result *out);

/*
 * trtb_bench_flood_create makes a build handle, used like any other (run, drain, destroy),
 * whose run has `threads` threads each start a phase named "Flood <n>" with events_per_thread
 * steps, report every step as fast as it can, and finish the phase; then the run logs one INFO
 * line and returns TRTB_OK. max_bytes bounds the queue (0: the default bound).
 */
int32_t trtb_bench_flood_create(int32_t threads, int32_t events_per_thread, uint64_t max_bytes,
                                trtb_build **out, trtb_status *status);

/*
 * trtb_test_log_flood_create makes a build handle whose run, on its own thread only, starts a
 * phase "Log flood" of `rounds` steps; then each round r logs one line of each severity, from
 * VERBOSE to INTERNAL_ERROR, reading "<severity> line <r>", and reports step r; then it
 * finishes the phase and returns TRTB_OK. max_bytes bounds the queue (0: the default bound).
 */
int32_t trtb_test_log_flood_create(int32_t rounds, uint64_t max_bytes, trtb_build **out,
                                   trtb_status *status);

/* trtb_test_publish_chunk returns how many bytes a thread queues before it adds them to the
 * queue's shared count (the slack of the bound per thread). */
uint64_t trtb_test_publish_chunk(void);

/*
 * trtb_test_guarded runs a body through the guarded-call helper that every entry point of
 * trtb.h uses, for tests of its exception mapping. what chooses the body: 0 returns TRTB_OK,
 * 1 throws std::runtime_error("boom"), 2 throws std::bad_alloc, 3 throws an int, 4 throws a
 * std::runtime_error whose text is longer than TRTB_MESSAGE_MAX and ends in multi-byte UTF-8.
 */
int32_t trtb_test_guarded(int32_t what, trtb_status *status);

/*
 * The timing cache's decisions (timing_cache_rules.hpp), for table tests without TensorRT.
 *
 * trtb_test_cache_load is what TensorRT did with a serialized cache it was given: its size,
 * whether createTimingCache returned an object, the errors and warnings the calling thread
 * logged during that call, the key count (-1: cannot count), whether setTimingCache(cache,
 * false) succeeded (exact), with what the thread logged when it refused; and whether
 * --strict-cache is on.
 */
typedef struct trtb_test_cache_load {
    uint64_t size;
    int32_t created;
    const char *const *errors;
    int32_t nb_errors;
    const char *const *warnings;
    int32_t nb_warnings;
    int64_t keys;
    int32_t exact;
    const char *const *exact_refusal;
    int32_t nb_exact_refusal;
    int32_t strict;
} trtb_test_cache_load;

/* trtb_test_cache_verdict is the decision: kind (0 none, 1 usable, 2 empty, 3 mismatch,
 * 4 foreign), action (0 new cache, 1 attach, 2 attach ignoring the mismatch, 3 warn and start
 * from an empty cache, 4 fail before building) and the message (empty when none is due). */
typedef struct trtb_test_cache_verdict {
    int32_t kind;
    int32_t action;
    char message[TRTB_MESSAGE_MAX];
} trtb_test_cache_verdict;

/* trtb_test_timing_cache_load judges in (judge_load, load_action, load_message) into out.
 * TRTB_ERR_INVALID_ARGUMENT for a NULL pointer or a negative count. */
int32_t trtb_test_timing_cache_load(const trtb_test_cache_load *in, trtb_test_cache_verdict *out);

/* trtb_test_timing_cache_save is judge_save: *action is 0 (nothing to save), 1 (write the
 * build's cache as the file) or 2 (merge into the file's). holds_file: the build's cache was
 * read from the file's bytes and attached exactly (SaveFacts::holds_file). */
int32_t trtb_test_timing_cache_save(uint64_t file_size, int64_t build_keys, int32_t holds_file, int32_t *action);

/*
 * trtb_test_thread_capture makes a ThreadCapture on the calling thread and, while it lives,
 * records the lines of other from a second thread (joined before the capture ends) and then
 * those of own from the calling thread; after the capture ends it records the lines of after
 * from the calling thread. Each line is a severity digit (trtb_severity) followed by its text.
 * The lines the capture took are written to out, one "<digit><text>\n" each, cut to fit
 * out_size (NUL-terminated); *live counts the lines it did not take (which a log shows live).
 */
int32_t trtb_test_thread_capture(const char *const *own, int32_t nb_own, const char *const *other,
                                 int32_t nb_other, const char *const *after, int32_t nb_after, char *out,
                                 uint32_t out_size, int32_t *live);

/*
 * trtb_test_create_builder creates a builder through the installed libnvinfer's
 * createInferBuilder_INTERNAL, as trtb_check_builder does but without TensorRT's headers: the
 * logger it hands over has TensorRT 10's ILogger layout (log(Severity, const char*) is its
 * first virtual) and keeps the last ERROR line; a builder it gets back is deleted through its
 * virtual destructor, IBuilder's only virtual, and nothing else is called on it. TRTB_OK, or
 * TRTB_ERR_UNAVAILABLE with the last error logged ("Unable to load library: ...") when no
 * builder came back or no libnvinfer is installed. For the tests of the loading rules in a
 * binary without the "tensorrt" tag.
 */
int32_t trtb_test_create_builder(trtb_status *status);

/*
 * trtb_test_fake_probe asks the stand-in TensorRT of major (10 or 11) compiled into the binary
 * a question through TensorRT's own API (trtfake/probe.cpp: "unimplemented", "weak-typing") and
 * writes what it answered into out (size bytes, NUL-terminated, cut to fit). Returns
 * TRTB_ERR_INVALID_ARGUMENT for another major.
 */
int32_t trtb_test_fake_probe(int32_t major, const char *what, char *out, int32_t size);

/*
 * The TensorRT shim's own helpers (shim/tensorrt_common.cpp, tensorrt_callbacks.cpp), through
 * the shim compiled against TensorRT 10.16's headers, for table tests of what a simulated build
 * cannot make TensorRT say. Each writes its text into out (size bytes, NUL-terminated, cut to
 * fit) and returns TRTB_OK, or TRTB_ERR_INVALID_ARGUMENT for a NULL pointer, a negative count
 * or size 0.
 *
 * trtb_test_shim_text: what 0 is parser_code_name(n), the name of an ONNX parser error code;
 * 1 is check_versions(n), empty when a libnvinfer of version n is one the shim drives, else
 * the refusal; 2 is join_listed(texts); 3 is one_line(texts[0]); 4 is dims_text(dims, n); 5 is
 * to_trtb_severity(n), the trtb_severity of TensorRT's ILogger::Severity n, in decimal.
 */
int32_t trtb_test_shim_text(int32_t what, int32_t n, const char *const *texts, int32_t nb_texts,
                            const int64_t *dims, char *out, uint32_t size);

/* What the shim's IErrorRecorder answers TensorRT after the errors it was reported. */
typedef struct trtb_test_recorder {
    int32_t nb_errors;           /* getNbErrors */
    int32_t overflowed;          /* hasOverflowed */
    int32_t first_code;          /* getErrorCode(0) */
    char first_desc[256];        /* getErrorDesc(0) */
    int32_t last_code;           /* getErrorCode(getNbErrors() - 1) */
    char last_desc[256];         /* getErrorDesc(getNbErrors() - 1) */
    int32_t beyond_code;         /* getErrorCode(getNbErrors()), out of range */
    int32_t beyond_desc_empty;   /* getErrorDesc(getNbErrors()) is "" */
    int32_t negative_code;       /* getErrorCode(-1) */
    int32_t cleared_nb_errors;   /* getNbErrors after clear */
    int32_t cleared_overflowed;  /* hasOverflowed after clear */
    int32_t logged;              /* errors the build's log still quotes (its ring) */
    uint64_t logged_older;       /* errors that left the ring */
    int32_t fatal;               /* every reportError answered true (the error is fatal) */
} trtb_test_recorder;

/* trtb_test_error_recorder reports n errors to a fresh ErrorRecorder (and so its build's
 * log), the i-th with code codes[i % nb_codes] and the text "error <i>", then asks it what
 * TensorRT asks (out), clearing it last. */
int32_t trtb_test_error_recorder(int32_t n, const int32_t *codes, int32_t nb_codes, trtb_test_recorder *out);

#ifdef __cplusplus
}
#endif

#endif /* TRTB_BENCH_H */
