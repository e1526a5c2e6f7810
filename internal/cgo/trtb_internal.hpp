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

// EventQueue holds events copied out of builder callbacks until Go drains them.
//
// Threading: push_* may be called from any number of builder threads at once; they copy their
// strings, take one short lock, append, and return. They never block on the drainer, never
// allocate while holding the lock beyond amortised vector growth, and never call Go. drain is
// called by one Go goroutine at a time. close() is called once, by the thread that ran the build,
// after every builder thread has stopped.
//
// Bound: when more than `max_pending` events wait, new step events are dropped and counted
// (the next step or the phase's finish carries the truth); starts, finishes and log lines are
// always kept, so the phase tree stays whole.
class EventQueue {
public:
    explicit EventQueue(size_t max_pending = 1u << 20);

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
    struct Pending;
    void push(int32_t kind, int32_t severity, int32_t nb_steps, int32_t step, const char* name,
              const char* parent);

    std::chrono::steady_clock::time_point start_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<trtb_event> events_;  // guarded by mu_; text offsets index text_
    std::string text_;                // guarded by mu_
    size_t read_ = 0;                 // guarded by mu_; events before read_ were handed out
    size_t read_text_ = 0;            // guarded by mu_
    size_t max_pending_;
    uint64_t dropped_steps_ = 0;      // guarded by mu_
    bool closed_ = false;             // guarded by mu_
    std::atomic<uint64_t> next_thread_{1};
    uint64_t id_ = 0;                 // distinguishes queues in the thread-number cache
};

// Build is one build behind a trtb_build handle. Each backend derives from it.
class Build {
public:
    virtual ~Build() = default;

    // run performs the build (trtb_build_run). It must call queue.close() before returning,
    // on every path.
    virtual int32_t run(trtb_result* result, trtb_status* status) = 0;

    // cancel_requested tells builder threads whether to stop; see trtb_build_cancel.
    bool cancel_requested() const { return cancel_.load(std::memory_order_relaxed); }
    void request_cancel() { cancel_.store(true, std::memory_order_relaxed); }

    EventQueue queue;
    // timing_cache holds the serialized cache after run (trtb_build_timing_cache).
    std::string timing_cache;
    std::atomic<bool> ran{false};

private:
    std::atomic<bool> cancel_{false};
};

// Factories, one per backend. make_tensorrt_build is defined by the TensorRT shim when it is
// compiled in and by tensorrt_absent.cpp otherwise. They throw nothing; errors go to status.
std::unique_ptr<Build> make_sim_build(const trtb_options& options, trtb_status* status);
std::unique_ptr<Build> make_tensorrt_build(const trtb_options& options, trtb_status* status);
int32_t tensorrt_available();
int32_t tensorrt_version(int32_t device, trtb_version_info* info, trtb_status* status);

}  // namespace trtb

#endif  // TRTB_INTERNAL_HPP
