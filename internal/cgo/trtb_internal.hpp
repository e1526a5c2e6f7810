// trtb_internal.hpp: C++ pieces shared by the simulated builder and the TensorRT shim.
// Never included by Go; never seen through trtb.h.
#ifndef TRTB_INTERNAL_HPP
#define TRTB_INTERNAL_HPP

#include "trtb.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace trtb {

// set_status fills a trtb_status (which may be null) and returns code.
int32_t set_status(trtb_status* status, int32_t code, const std::string& message);

// check_build_settings checks trtexec's build settings in o (the fields after sim, ABI 3) for
// what any builder would refuse: unknown enum values, a list without its pointer, layer
// precisions without constraints, GPU fallback without a DLA core, "best" with a strongly typed
// network. On success it writes them, one "key value" line per setting given, to *summary (may
// be null) and returns true; otherwise it fills status with TRTB_ERR_INVALID_ARGUMENT.
bool check_build_settings(const trtb_options& o, std::string* summary, trtb_status* status);

// data_type_name returns trtexec's name of a trtb_data_type ("fp16"), or "unknown".
const char* data_type_name(int32_t type);

// EventQueue holds events copied out of builder callbacks until Go drains them.
//
// Threading: push_* may be called from any number of builder threads at once; they copy their
// strings, take one short lock, append, and return. They never block on the drainer, never
// allocate while holding the lock beyond amortised vector growth, and never call Go. drain is
// called by one Go goroutine at a time. close() is called once, by the thread that ran the build,
// after every builder thread has stopped.
//
// Order: drain hands events out in one order that respects every happens-before relation
// between the pushes (a phase started on one thread is handed out before a child phase a thread
// it started reports), and event times never decrease along it.
//
// Bound: when more than `max_pending` events wait, new step events are dropped and counted
// (the next step or the phase's finish carries the truth); starts, finishes and log lines are
// always kept, so the phase tree stays whole.
class EventQueue {
public:
    explicit EventQueue(size_t max_pending = 1u << 16);
    ~EventQueue();
    EventQueue(const EventQueue&) = delete;
    EventQueue& operator=(const EventQueue&) = delete;

    void push_phase_start(const char* name, const char* parent, int32_t nb_steps);
    void push_step(const char* name, int32_t step);
    void push_phase_finish(const char* name);
    void push_log(int32_t severity, const char* message);

    // drain moves events into batch (see trtb_build_drain).
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
    // buffer's contents out. Under that lock it also takes a sequence number from next_seq_.
    // The drainer reads next_seq_ first (the watermark) and then empties every buffer: each
    // event numbered below the watermark is in a buffer by then, so sorting by number and
    // handing out only those below the watermark gives one consistent order.
    struct Buffer;
    struct Staged {
        uint64_t seq;
        trtb_event ev;      // ev's text offsets are not used here
        size_t name_off;    // into stage_text_
        size_t parent_off;  // into stage_text_
    };
    Buffer* buffer();
    void push(int32_t kind, int32_t severity, int32_t nb_steps, int32_t step, const char* name,
              const char* parent);
    void gather();

    // Read by every push: written once (or rarely) and so shared by all caches.
    std::chrono::steady_clock::time_point start_;
    size_t max_pending_;
    uint64_t id_ = 0;  // distinguishes queues in the per-thread buffer cache
    std::atomic<uint64_t> handed_{0};  // sequence numbers below this have left the queue
    std::atomic<bool> closed_{false};
    // Written by every push: alone on its cache line, so that it does not evict the above.
    alignas(64) std::atomic<uint64_t> next_seq_{0};
    alignas(64) std::atomic<uint64_t> next_thread_{1};

    std::mutex mu_;  // guards buffers_; pairs with cv_, which close() signals
    std::condition_variable cv_;
    std::vector<std::unique_ptr<Buffer>> buffers_;

    // The drainer's side; only the one draining thread touches these.
    std::atomic<bool> draining_{false};
    std::vector<Buffer*> snapshot_;
    std::vector<trtb_event> tmp_events_;
    std::vector<uint64_t> tmp_seqs_;
    std::string tmp_text_;
    std::vector<Staged> stage_;  // sorted by seq from read_ on
    std::vector<Staged> merged_;
    std::vector<size_t> runs_;   // ends of the sorted runs in stage_ while gathering
    std::string stage_text_;
    size_t read_ = 0;            // stage_[read_, ready_) may be handed out now
    size_t ready_ = 0;
    uint64_t watermark_ = 0;
    uint64_t dropped_seen_ = 0;
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
    // This constructor bounds the queue (see EventQueue); Build() uses its default bound.
    explicit Build(size_t max_pending) : queue(max_pending) {}
    virtual ~Build() = default;

    // run performs the build (trtb_build_run). It must call queue.close() before returning,
    // on every path.
    virtual int32_t run(trtb_result* result, trtb_status* status) = 0;

    // cancel_requested tells builder threads whether to stop; see trtb_build_cancel.
    bool cancel_requested() const { return cancel_.load(std::memory_order_relaxed); }
    void request_cancel() { cancel_.store(true, std::memory_order_relaxed); }

    // step_complete is the body of a progress monitor's stepComplete: it queues the step and
    // returns false once cancel was requested, noting the first time a builder thread saw the
    // request (cancel_seen_ns). Any builder thread; takes the queue's lock once, never blocks
    // on the drainer, never calls Go.
    bool step_complete(const char* phase, int32_t step);

    // cancel_seen_ns returns the steady-clock time (nanoseconds since its epoch, CLOCK_MONOTONIC
    // on Linux) at which step_complete first returned false, or 0 (trtb_result.cancel_seen_ns).
    int64_t cancel_seen_ns() const { return cancel_seen_.load(std::memory_order_relaxed); }

    // merge_timing_cache is trtb_build_merge_timing_cache: it sets *merged to disk combined with
    // timing_cache (entries of disk win), or returns TRTB_ERR_CACHE_REJECTED when disk is not a
    // cache of this backend. Called after run, by one thread at a time. This base version takes
    // an empty disk (the result is timing_cache) and refuses any other with TRTB_ERR_UNSUPPORTED.
    virtual int32_t merge_timing_cache(const std::string& disk, std::string* merged,
                                       trtb_status* status);

    EventQueue queue;
    // timing_cache holds the serialized cache after run (trtb_build_timing_cache).
    std::string timing_cache;
    // merged_cache holds what trtb_build_merge_timing_cache handed out last.
    std::string merged_cache;
    std::atomic<bool> ran{false};

private:
    std::atomic<bool> cancel_{false};
    std::atomic<int64_t> cancel_seen_{0};
};

// new_handle wraps a Build in the opaque handle that trtb_build_create hands out (api.cpp).
trtb_build* new_handle(std::unique_ptr<Build> build);

// Factories, one per backend. make_tensorrt_build is defined by the TensorRT shim when it is
// compiled in and by tensorrt_absent.cpp otherwise. They throw nothing; errors go to status.
std::unique_ptr<Build> make_sim_build(const trtb_options& options, trtb_status* status);
std::unique_ptr<Build> make_tensorrt_build(const trtb_options& options, trtb_status* status);
int32_t tensorrt_available();
int32_t tensorrt_version(int32_t device, trtb_version_info* info, trtb_status* status);

}  // namespace trtb

#endif  // TRTB_INTERNAL_HPP
