// trtb_internal.hpp: C++ pieces shared by the simulated builder and the TensorRT shim.
// Never included by Go; never seen through trtb.h.
#ifndef TRTB_INTERNAL_HPP
#define TRTB_INTERNAL_HPP

#include "trtb.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trtb {

// set_status fills a trtb_status (which may be null) and returns code.
int32_t set_status(trtb_status* status, int32_t code, const std::string& message);


// set_status_text is set_status for the paths that handle an exception: it allocates nothing
// (and so cannot throw), writing prefix then what, cut to fit. Either may be null.
int32_t set_status_text(trtb_status* status, int32_t code, const char* prefix,
                        const char* what) noexcept;

// guarded runs body, a callable returning a trtb_code, and turns every C++ exception it lets
// out into a status instead: std::bad_alloc becomes TRTB_ERR_OUT_OF_MEMORY, anything else
// TRTB_ERR_INTERNAL with the exception's text. Every extern "C" entry point of both backends
// runs its body through it, so that no exception crosses the C boundary. It never throws.
template <typename F>
int32_t guarded(trtb_status* status, F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return set_status_text(status, TRTB_ERR_OUT_OF_MEMORY,
                               "host memory ran out in the engine builder", nullptr);
    } catch (const std::exception& e) {
        return set_status_text(status, TRTB_ERR_INTERNAL,
                               "internal error in the engine builder: ", e.what());
    } catch (...) {
        return set_status_text(status, TRTB_ERR_INTERNAL,
                               "internal error in the engine builder: ", "unknown exception");
    }
}

// guarded_void runs body (returning nothing) and swallows every exception: for the entry
// points that have no status to report into (trtb_build_cancel, trtb_build_destroy).
template <typename F>
void guarded_void(F&& body) noexcept {
    try {
        body();
    } catch (...) {
    }
}

// The option bits this ABI version defines, and the most optimization profiles a build takes.
constexpr uint32_t kValidPrecision =
    TRTB_PRECISION_FP16 | TRTB_PRECISION_BF16 | TRTB_PRECISION_INT8 | TRTB_PRECISION_FP8;
constexpr uint32_t kValidFlags = TRTB_FLAG_NO_TF32 | TRTB_FLAG_REFIT | TRTB_FLAG_STRIP_WEIGHTS |
                                 TRTB_FLAG_VERSION_COMPATIBLE | TRTB_FLAG_EXCLUDE_LEAN_RUNTIME |
                                 TRTB_FLAG_SPARSE_WEIGHTS | TRTB_FLAG_DISABLE_TIMING_CACHE |
                                 TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS | TRTB_FLAG_STRICT_TIMING_CACHE;
constexpr int32_t kMaxProfiles = 1024;

// ProfileShape is one trtb_shape, owned.
struct ProfileShape {
    std::string input;
    int32_t nb_dims = 0;
    int64_t min[TRTB_MAX_DIMS] = {};
    int64_t opt[TRTB_MAX_DIMS] = {};
    int64_t max[TRTB_MAX_DIMS] = {};
};

// ExtraSettings are trtexec's build settings of trtb_options (the fields after sim, ABI 3 and 5),
// owned and checked by check_build_settings (build_settings.cpp).
struct ExtraSettings {
    std::vector<trtb_io_format> input_formats;   // one for all inputs, or one per input
    std::vector<trtb_io_format> output_formats;  // likewise for the outputs
    int32_t precision_constraints = TRTB_PRECISION_CONSTRAINTS_NONE;
    std::vector<std::pair<std::string, int32_t>> layer_precisions;  // layer ("*": all), trtb_data_type
    int32_t profiling_verbosity = TRTB_PROFILING_DEFAULT;
    uint32_t tactic_sources_on = 0;
    uint32_t tactic_sources_off = 0;
    bool use_dla = false;
    int32_t dla_core = 0;
    bool gpu_fallback = false;
    bool strongly_typed = false;
    bool best = false;
    uint32_t pools_set = 0;      // trtb_pool bits
    uint64_t pool_bytes[4] = {}; // by trtb_pool bit number
    int32_t avg_timing = 0;      // averaging iterations of a tactic's timing (ABI 5); 0: default
    std::string build_route;     // TensorRT 11.1's build route (ABI 5); "": none
    std::string summary;         // one "key value" line per setting given, for the simulated plan
};

// check_build_settings checks the ABI 3 and 5 fields of o for what any builder would refuse: unknown
// enum values, a list without its pointer, layer precisions without constraints, GPU fallback
// without a DLA core, "best" with a strongly typed network. On success it copies them into
// *out and returns true; otherwise it sets *message to one line and leaves *out untouched.
// check_options calls it. Any thread; may throw std::bad_alloc.
bool check_build_settings(const trtb_options& o, ExtraSettings* out, std::string* message);

// data_type_name returns trtexec's name of a trtb_data_type ("fp16"), or "unknown".
const char* data_type_name(int32_t type);

// BuildSettings is everything of trtb_options that a backend keeps, owned and checked:
// trtb_options need not outlive trtb_build_create. A simulated build's stand-in settings
// (options.sim) are not in it: the handle keeps them (api.cpp).
struct BuildSettings {
    std::string model_path;
    int32_t plan_fd = -1;
    int32_t log_severity = TRTB_SEVERITY_WARNING;
    int32_t device = 0;
    uint32_t precision = 0;
    uint32_t flags = 0;
    int32_t opt_level = -1;
    int32_t max_aux_streams = -1;
    int32_t hardware_compat = TRTB_HARDWARE_COMPAT_NONE;
    uint64_t workspace_bytes = 0;
    std::vector<std::vector<ProfileShape>> profiles;
    std::vector<std::string> plugin_paths;
    bool has_timing_cache = false;  // a non-empty cache was given
    // timing_cache views options.timing_cache, which the caller keeps valid until the build is
    // destroyed (trtb.h): a cache of hundreds of MB is read in place, never copied.
    std::string_view timing_cache;
    ExtraSettings extra;  // trtexec's other build settings (ABI 3)
};

// check_options is the one option checker of both backends (options.cpp). It checks what
// holds for every backend (the struct size, a model path, an open writable empty plan file,
// ranges, known bits, flag combinations, profile shapes with 0 <= min <= opt <= max, plugin
// paths) and copies the options into *out. On a bad option it returns TRTB_ERR_INVALID_ARGUMENT
// and sets *message to one line that names the problem and the fix; *out is then untouched.
// What only one backend refuses (a precision flag TensorRT 11 lacks, a compatibility level an
// older TensorRT lacks) the backend checks after this. Any thread; may throw std::bad_alloc.
int32_t check_options(const trtb_options& options, BuildSettings* out, std::string* message);

// hex_text formats v in lower-case hexadecimal without a prefix.
std::string hex_text(uint64_t v);

// kDefaultQueueBytes is the default bound of an EventQueue: bytes of events waiting for the
// drainer (see EventQueue).
constexpr uint64_t kDefaultQueueBytes = 16u << 20;

// EventQueue holds events copied out of builder callbacks until Go drains them.
//
// Threading: push_* may be called from any number of builder threads at once; they copy their
// strings, take their own thread's buffer lock (which only the drainer contends for), append,
// and return. They never wait for the drainer, never call Go, and make a system call only to
// wake a drainer that is asleep (at most once per wait, see drain). drain is called by one
// thread at a time. close() is called once, by the thread that ran the build, after every
// builder thread has stopped; pushes after it are ignored.
//
// Order: drain hands events out in one order that respects every happens-before relation
// between the pushes (a phase started on one thread is handed out before a child phase that a
// thread it started reports), and event times never decrease along it.
//
// Bound: the queue counts the bytes of the events it holds (sizeof(trtb_event) plus the text)
// until they are handed out. When a push would take the count past a share of max_bytes, it
// drops the event and counts the drop by kind: VERBOSE and INFO log lines past 1/2, step events
// past 3/4 (the next step or the phase's finish carries the truth), WARNING lines past the
// whole bound, ERROR and INTERNAL_ERROR lines past twice it. Phase starts and finishes are never
// dropped, so the phase tree stays whole; their number is the network's, not the log's. Each
// thread adds its bytes to the shared count in chunks (kPublishChunk), so the bound can be
// passed by at most one chunk per thread.
class EventQueue {
public:
    // kDropSteps indexes the step drops in Drops; severities (0..4) index log-line drops.
    static constexpr int kDropSteps = 5;
    static constexpr int kDropKinds = 6;
    // kPublishChunk is how many bytes a thread queues before adding them to the shared count.
    static constexpr uint64_t kPublishChunk = 4096;

    explicit EventQueue(uint64_t max_bytes = kDefaultQueueBytes);
    ~EventQueue();
    EventQueue(const EventQueue&) = delete;
    EventQueue& operator=(const EventQueue&) = delete;

    // Each push returns whether the event was queued (false: dropped, or the queue is closed).
    bool push_phase_start(const char* name, const char* parent, int32_t nb_steps);
    bool push_step(const char* name, int32_t step);
    bool push_phase_finish(const char* name);
    bool push_log(int32_t severity, const char* message);

    // drain moves events into batch (see trtb_build_drain). While nothing is queued it naps
    // 1 ms at a time for 20 ms after the last events (so that builder threads reporting at a
    // high rate never pay a wake-up), then sleeps on a condition variable until a push wakes
    // it, close() is called or timeout_ms passes: a silent builder costs the drainer nothing.
    int32_t drain(trtb_batch* batch, int32_t timeout_ms, trtb_status* status);

    // close marks the end of the stream: drain reports done once the queue is empty.
    void close();

    // thread_number returns this thread's small stable number (1, 2, ...).
    uint64_t thread_number();

    // now_ns returns steady-clock nanoseconds since the queue was made.
    int64_t now_ns() const;

private:
    // How it works: every producer thread appends to a Buffer of its own (event_queue.cpp),
    // under that buffer's lock, which only the drainer ever contends for, and only to swap the
    // buffer's contents out. Under that lock it also reads the clock: an event's time is its
    // place in the order (ties, the same nanosecond on two threads, go by thread number). No
    // counter is shared by the pushes. The drainer reads the clock first (the watermark) and
    // then empties every buffer: each event timed before the watermark is in a buffer by then,
    // so merging by time and handing out only those before the watermark gives one consistent
    // order; later ones wait for the next gather.
    struct Buffer;
    struct Staged {
        trtb_event ev;      // ev's text offsets are not used here
        size_t name_off;    // into stage_text_
        size_t parent_off;  // into stage_text_
        uint64_t bytes;     // what the event counts against the bound
    };
    Buffer* buffer();
    bool push(int32_t kind, int32_t severity, int32_t nb_steps, int32_t step, const char* name,
              const char* parent);
    uint64_t limit_for(int32_t kind, int32_t severity) const;
    void gather();
    // wait_for_push sleeps until a producer signals, close() or the deadline; it returns at
    // once when a buffer holds events.
    void wait_for_push(std::chrono::steady_clock::time_point deadline);

    // Read by every push: written once and so shared by all caches.
    std::chrono::steady_clock::time_point start_;
    uint64_t max_bytes_;
    uint64_t id_ = 0;  // distinguishes queues in the per-thread buffer cache
    std::atomic<bool> closed_{false};
    // Read by every push, written by the drainer when it goes to sleep and by the push that
    // wakes it: alone on its cache line.
    alignas(64) std::atomic<bool> sleeping_{false};
    // Bytes of events counted against the bound: added by producers in chunks, subtracted by
    // the drainer as it hands events out.
    alignas(64) std::atomic<uint64_t> pending_bytes_{0};
    alignas(64) std::atomic<uint64_t> next_thread_{1};

    std::mutex mu_;  // guards buffers_; pairs with cv_ (see wait_for_push)
    std::condition_variable cv_;
    std::vector<std::unique_ptr<Buffer>> buffers_;

    // The drainer's side; only the one draining thread touches these.
    std::atomic<bool> draining_{false};
    std::vector<Buffer*> snapshot_;
    std::vector<trtb_event> tmp_events_;
    std::string tmp_text_;
    std::vector<Staged> stage_;  // sorted by (time, thread) from read_ on
    std::vector<Staged> merged_;
    std::vector<size_t> runs_;   // ends of the sorted runs in stage_ while gathering
    std::string stage_text_;
    size_t read_ = 0;            // stage_[read_, ready_) may be handed out now
    size_t ready_ = 0;
    uint64_t dropped_seen_[kDropKinds] = {};
    // When a gather last found events. For kNapUntil after it the drainer naps kNap at a time
    // instead of sleeping until a push wakes it: while events flow, builder threads make no
    // system call; once the builder has been quiet that long, the drainer sleeps for good and
    // the next push pays one wake-up.
    static constexpr std::chrono::milliseconds kNap{1};
    static constexpr std::chrono::milliseconds kNapUntil{20};
    std::chrono::steady_clock::time_point last_busy_{};
    bool closed_seen_ = false;
    int64_t last_time_ = 0;
};

// QueueCloser closes a queue when it goes out of scope, on every path out of a Build::run:
// declare it first in run, so it runs last, after the builder's threads are gone.
struct QueueCloser {
    EventQueue& queue;
    ~QueueCloser() {
        try {
            queue.close();
        } catch (...) {
        }
    }
};

// Build is one build behind a trtb_build handle. Each backend derives from it.
class Build {
public:
    Build() = default;
    // This constructor bounds the queue to max_bytes (see EventQueue); Build() uses
    // kDefaultQueueBytes.
    explicit Build(uint64_t max_bytes) : queue(max_bytes) {}
    virtual ~Build() = default;

    // run performs the build (trtb_build_run). It must call queue.close() before returning,
    // on every path.
    virtual int32_t run(trtb_result* result, trtb_status* status) = 0;

    // cancel_requested tells builder threads whether to stop; see trtb_build_cancel.
    bool cancel_requested() const { return cancel_.load(std::memory_order_relaxed); }
    void request_cancel() { cancel_.store(true, std::memory_order_relaxed); }

    // step_complete is the body of a progress monitor's stepComplete: it queues the step and
    // returns false once cancel was requested, noting the first time a builder thread saw the
    // request (cancel_seen_ns). Any builder thread; takes its own buffer's lock once, never
    // waits for the drainer, never calls Go. queued, if not null, is set to whether the step
    // was queued (false: dropped by the bound).
    bool step_complete(const char* phase, int32_t step, bool* queued = nullptr);

    // cancel_seen_ns returns the steady-clock time (nanoseconds since its epoch, CLOCK_MONOTONIC
    // on Linux) at which step_complete first returned false, or 0 (trtb_result.cancel_seen_ns).
    int64_t cancel_seen_ns() const { return cancel_seen_.load(std::memory_order_relaxed); }

    // write_timing_cache is trtb_build_write_timing_cache: it merges this build's cache into
    // what the file holds (entries of the file win), sets *changed to whether the result
    // differs from it, and then, when fd >= 0, writes the result to fd. It returns
    // TRTB_ERR_CACHE_REJECTED when disk is not a cache of this backend. disk_is_given means the
    // file holds exactly the cache given in the options (disk is then empty). Called after run,
    // by one thread at a time. This base version, for a build that keeps no timing cache (the
    // benchmarks' builds), changes nothing.
    virtual int32_t write_timing_cache(bool /*disk_is_given*/, std::string_view /*disk*/, int /*fd*/,
                                       bool* changed, trtb_status* status) {
        *changed = false;
        return set_status(status, TRTB_OK, "");
    }

    EventQueue queue;
    std::atomic<bool> ran{false};

private:
    std::atomic<bool> cancel_{false};
    std::atomic<int64_t> cancel_seen_{0};
};

// write_all writes n bytes at data to fd, through short writes and EINTR; false with errno's
// text in *error when a write fails.
bool write_all(int fd, const char* data, size_t n, std::string* error);

// new_handle wraps a Build in the opaque handle that trtb_build_create hands out (api.cpp).
trtb_build* new_handle(std::unique_ptr<Build> build);

// Factories, one per backend. The TensorRT ones are tensorrt.cpp's, which hands each call to
// the shim of the major of the library installed. They throw nothing; errors go to status.
// standin_for_build makes the stand-in TensorRT of major (trtfake_install.cpp) the process's
// TensorRT for a simulated build whose stand-in settings are settings: it installs it when no
// TensorRT is installed, and refuses (TRTB_ERR_STATE) when another TensorRT or the other
// major's stand-in is; TRTB_ERR_INVALID_ARGUMENT for bad settings.
int32_t standin_for_build(int32_t major, const std::string& settings, trtb_status* status);
// with_standin_settings runs f with settings as the settings of the stand-in builders created
// on this thread meanwhile (trtfake/linked.hpp). Throws for bad settings.
void with_standin_settings(int32_t major, const std::string& settings, const std::function<void()>& f);
std::unique_ptr<Build> make_tensorrt_build(const trtb_options& options, trtb_status* status);
int32_t tensorrt_available();
int32_t tensorrt_version(int32_t device, trtb_version_info* info, trtb_status* status);
// tensorrt_check_builder is trtb_check_builder (trtb_loader.h).
int32_t tensorrt_check_builder(int32_t device, trtb_status* status);

}  // namespace trtb

#endif  // TRTB_INTERNAL_HPP
