// event_queue.cpp: the queue between builder threads and the Go drainer (see EventQueue in
// trtb_internal.hpp), and Build::step_complete, the code path of every stepComplete.

#include "trtb_internal.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

namespace trtb {

// Buffer is one producer thread's share of a queue. Aligned to its own cache lines, so that
// threads appending to their buffers do not slow each other down.
struct alignas(64) EventQueue::Buffer {
    std::mutex mu;
    std::vector<trtb_event> events;  // guarded by mu; text offsets index text; in time order
    std::string text;                // guarded by mu
    uint64_t unpublished = 0;        // guarded by mu; bytes queued but not yet in pending_bytes_
    uint64_t dropped[kDropKinds] = {};  // guarded by mu; by severity, and steps at kDropSteps
    uint64_t thread = 0;             // the thread's number, fixed at registration
};

namespace {

// Queue ids are never reused, so a stale entry in a thread's cache can never match a new queue.
std::atomic<uint64_t> g_next_queue_id{1};

// A thread's buffers in the queues it reported to most recently. Builder threads normally
// report to one build; a few slots cover a thread pool shared by consecutive builds. A thread
// that alternates between more queues than this gets a new buffer (and number) on its return.
struct ThreadSlot {
    uint64_t queue_id;
    void* buffer;
};
constexpr int kThreadSlots = 4;
thread_local ThreadSlot tl_slots[kThreadSlots] = {};
thread_local unsigned tl_next_slot = 0;

// utf8_cut returns the largest length <= max at which s (of length len) can be cut without
// splitting a UTF-8 sequence. Invalid UTF-8 is cut at max, at worst four bytes earlier.
size_t utf8_cut(const char* s, size_t len, size_t max) {
    if (len <= max) {
        return len;
    }
    size_t cut = max;
    // s[cut] is the first byte left out; while it continues a sequence, the sequence started
    // inside what we keep, so leave it out whole.
    for (int back = 0; cut > 0 && back < 4 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80;
         ++back) {
        --cut;
    }
    return cut;
}

// bounded_len returns the length of s cut to TRTB_NAME_MAX on a UTF-8 boundary; NULL is "".
size_t bounded_len(const char* s) {
    if (s == nullptr) {
        return 0;
    }
    size_t n = strnlen(s, TRTB_NAME_MAX + 1);
    return utf8_cut(s, n, TRTB_NAME_MAX);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// lock_briefly takes a lock whose holders keep it for a few dozen nanoseconds: it spins a
// little before it sleeps in the kernel, because sleeping costs microseconds.
void lock_briefly(std::mutex& mu) {
    for (int i = 0; i < 64; ++i) {
        if (mu.try_lock()) {
            return;
        }
        cpu_relax();
    }
    mu.lock();
}

}  // namespace

EventQueue::EventQueue(uint64_t max_bytes)
    : start_(std::chrono::steady_clock::now()),
      max_bytes_(max_bytes),
      id_(g_next_queue_id.fetch_add(1, std::memory_order_relaxed)) {}

EventQueue::~EventQueue() = default;

int64_t EventQueue::now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start_)
        .count();
}

EventQueue::Buffer* EventQueue::buffer() {
    for (const ThreadSlot& slot : tl_slots) {
        if (slot.queue_id == id_) {
            return static_cast<Buffer*>(slot.buffer);
        }
    }
    auto owned = std::make_unique<Buffer>();
    owned->events.reserve(256);
    owned->text.reserve(8192);
    Buffer* b = owned.get();
    {
        std::lock_guard<std::mutex> lock(mu_);
        b->thread = next_thread_.fetch_add(1, std::memory_order_relaxed);
        buffers_.push_back(std::move(owned));
    }
    tl_slots[tl_next_slot % kThreadSlots] = ThreadSlot{id_, b};
    ++tl_next_slot;
    return b;
}

uint64_t EventQueue::thread_number() {
    return buffer()->thread;
}

uint64_t EventQueue::limit_for(int32_t kind, int32_t severity) const {
    switch (kind) {
        case TRTB_EVENT_STEP:
            return max_bytes_ / 4 * 3;
        case TRTB_EVENT_LOG:
            if (severity >= TRTB_SEVERITY_INFO) {
                return max_bytes_ / 2;
            }
            if (severity == TRTB_SEVERITY_WARNING) {
                return max_bytes_;
            }
            return max_bytes_ > UINT64_MAX / 2 ? UINT64_MAX : 2 * max_bytes_;
        default:
            return UINT64_MAX;  // phase starts and finishes keep the tree whole
    }
}

bool EventQueue::push(int32_t kind, int32_t severity, int32_t nb_steps, int32_t step,
                      const char* name, const char* parent) {
    const size_t name_len = bounded_len(name);
    const size_t parent_len = bounded_len(parent);
    uint64_t bytes = sizeof(trtb_event) + name_len + parent_len;
    const uint64_t limit = limit_for(kind, severity);
    Buffer* b = buffer();
    bool wake = false;
    {
        lock_briefly(b->mu);
        std::lock_guard<std::mutex> lock(b->mu, std::adopt_lock);
        if (closed_.load(std::memory_order_relaxed)) {
            return false;  // nobody reads past close(); see the threading rule in the header
        }
        const bool text_full = b->text.size() + name_len + parent_len > UINT32_MAX;
        if (text_full) {
            bytes = sizeof(trtb_event);  // kept (a phase event) without its text; see gather()
        }
        const uint64_t level =
            pending_bytes_.load(std::memory_order_relaxed) + b->unpublished + bytes;
        if (level > limit || (text_full && kind != TRTB_EVENT_PHASE_START &&
                              kind != TRTB_EVENT_PHASE_FINISH)) {
            const int slot = kind == TRTB_EVENT_STEP ? kDropSteps
                             : (severity >= 0 && severity < kDropSteps) ? severity
                                                                         : TRTB_SEVERITY_INFO;
            ++b->dropped[slot];
            return false;
        }
        trtb_event ev{};
        ev.kind = kind;
        ev.severity = severity;
        ev.nb_steps = nb_steps;
        ev.step = step;
        ev.thread = b->thread;
        // Read under b->mu: the time orders the event (see gather()).
        ev.time_ns = now_ns();
        ev.has_parent = parent != nullptr ? 1 : 0;
        if (!text_full) {
            ev.name_off = static_cast<uint32_t>(b->text.size());
            ev.name_len = static_cast<uint32_t>(name_len);
            b->text.append(name != nullptr ? name : "", name_len);
            ev.parent_off = static_cast<uint32_t>(b->text.size());
            ev.parent_len = static_cast<uint32_t>(parent_len);
            b->text.append(parent != nullptr ? parent : "", parent_len);
        }
        b->events.push_back(ev);
        b->unpublished += bytes;
        if (b->unpublished >= kPublishChunk) {
            pending_bytes_.fetch_add(b->unpublished, std::memory_order_relaxed);
            b->unpublished = 0;
        }
        // Read under b->mu: see wait_for_push() for why no wake-up can be lost.
        wake = sleeping_.load(std::memory_order_relaxed);
    }
    if (wake && sleeping_.exchange(false, std::memory_order_acq_rel)) {
        std::lock_guard<std::mutex> lock(mu_);
        cv_.notify_one();
    }
    return true;
}

bool EventQueue::push_phase_start(const char* name, const char* parent, int32_t nb_steps) {
    return push(TRTB_EVENT_PHASE_START, 0, nb_steps, 0, name, parent);
}

bool EventQueue::push_step(const char* name, int32_t step) {
    return push(TRTB_EVENT_STEP, 0, 0, step, name, nullptr);
}

bool EventQueue::push_phase_finish(const char* name) {
    return push(TRTB_EVENT_PHASE_FINISH, 0, 0, 0, name, nullptr);
}

bool EventQueue::push_log(int32_t severity, const char* message) {
    return push(TRTB_EVENT_LOG, severity, 0, 0, message, nullptr);
}

void EventQueue::close() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        closed_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
}

namespace {

// before is the order of the queue: by time, then by thread.
inline bool before(const trtb_event& a, const trtb_event& b) {
    return a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.thread < b.thread);
}

}  // namespace

// gather moves what the buffers hold into stage_ and makes ready every event timed before
// the watermark. Called by the drainer only, when stage_[read_, ready_) is empty.
//
// Why the order is consistent: a producer reads the clock for its event under its buffer's
// lock and appends before unlocking. The drainer reads the clock first (the watermark W); if
// an event's time t < W, the producer read the clock (and so held its lock) before the
// drainer did (CLOCK_MONOTONIC never runs back, across CPUs too), so when the drainer then
// locks the buffer it finds the event there. Events timed W or later may be missing from some
// buffers, so they wait in stage_ for the next gather. And if push A happens before push B,
// A's clock read happens before B's, so A's time is not later than B's; equal times on two
// threads would need the two reads and the synchronisation between them to fit in one
// nanosecond, which a cache-line transfer (tens of ns) does not.
void EventQueue::gather() {
    // The handed-out prefix is no longer needed; keep the held-back tail, with its text.
    if (read_ > 0) {
        std::string text;
        size_t keep = 0;
        for (size_t i = read_; i < stage_.size(); ++i) {
            Staged s = stage_[i];
            const size_t name_off = text.size();
            text.append(stage_text_, s.name_off, s.ev.name_len);
            const size_t parent_off = text.size();
            text.append(stage_text_, s.parent_off, s.ev.parent_len);
            s.name_off = name_off;
            s.parent_off = parent_off;
            stage_[keep++] = s;
        }
        stage_.resize(keep);
        stage_text_.swap(text);
        read_ = 0;
    }

    const bool closed = closed_.load(std::memory_order_acquire);  // before the watermark
    const int64_t watermark = now_ns();
    snapshot_.clear();
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& b : buffers_) {
            snapshot_.push_back(b.get());
        }
    }
    // Each buffer, like the held-back tail, is already in order: a run. Merge the runs.
    runs_.clear();
    if (!stage_.empty()) {
        runs_.push_back(stage_.size());
    }
    uint64_t dropped[kDropKinds] = {};
    uint64_t published = 0;
    for (Buffer* b : snapshot_) {
        {
            lock_briefly(b->mu);
            std::lock_guard<std::mutex> lock(b->mu, std::adopt_lock);
            b->events.swap(tmp_events_);
            b->text.swap(tmp_text_);
            published += b->unpublished;  // from now on every byte taken out is counted
            b->unpublished = 0;
            for (int k = 0; k < kDropKinds; ++k) {
                dropped[k] += b->dropped[k];
            }
        }
        if (!tmp_events_.empty()) {
            const size_t base = stage_text_.size();
            stage_text_ += tmp_text_;
            for (const trtb_event& ev : tmp_events_) {
                stage_.push_back(Staged{ev, base + ev.name_off, base + ev.parent_off,
                                        sizeof(trtb_event) + ev.name_len + ev.parent_len});
            }
            runs_.push_back(stage_.size());
        }
        tmp_events_.clear();
        tmp_text_.clear();
    }
    if (published > 0) {
        pending_bytes_.fetch_add(published, std::memory_order_relaxed);
    }
    if (stage_.size() > read_) {
        last_busy_ = std::chrono::steady_clock::now();
    }
    // Merge neighbouring runs pairwise until one is left: O(n log runs).
    auto by_order = [](const Staged& a, const Staged& b) { return before(a.ev, b.ev); };
    while (runs_.size() > 1) {
        merged_.resize(stage_.size());
        size_t keep = 0;
        size_t begin = 0;
        for (size_t r = 0; r < runs_.size(); r += 2) {
            const size_t mid = runs_[r];
            const size_t end = r + 1 < runs_.size() ? runs_[r + 1] : mid;
            std::merge(stage_.begin() + static_cast<std::ptrdiff_t>(begin),
                       stage_.begin() + static_cast<std::ptrdiff_t>(mid),
                       stage_.begin() + static_cast<std::ptrdiff_t>(mid),
                       stage_.begin() + static_cast<std::ptrdiff_t>(end),
                       merged_.begin() + static_cast<std::ptrdiff_t>(begin), by_order);
            runs_[keep++] = end;
            begin = end;
        }
        runs_.resize(keep);
        stage_.swap(merged_);
    }
    if (closed) {
        ready_ = stage_.size();  // close() came after the last push: nothing more can come
    } else {
        ready_ = static_cast<size_t>(
            std::lower_bound(stage_.begin(), stage_.end(), watermark,
                             [](const Staged& s, int64_t w) { return s.ev.time_ns < w; }) -
            stage_.begin());
    }
    std::copy(std::begin(dropped), std::end(dropped), std::begin(dropped_seen_));
    closed_seen_ = closed;
}

// wait_for_push: the drainer says it is going to sleep (sleeping_), then looks into every
// buffer under that buffer's lock, and sleeps only if all are empty. A producer reads
// sleeping_ under its buffer's lock after appending. Either its append came before the
// drainer looked into that buffer (the drainer sees the event and does not sleep), or after
// (its lock follows the drainer's unlock of the same lock, so it sees sleeping_ set, clears it
// and signals under mu_, which the drainer holds from before setting sleeping_ until it
// waits). Lock order: mu_ before a buffer's lock; producers never hold both.
void EventQueue::wait_for_push(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    sleeping_.store(true, std::memory_order_relaxed);
    bool empty = true;
    for (const auto& b : buffers_) {
        std::lock_guard<std::mutex> block(b->mu);
        if (!b->events.empty()) {
            empty = false;
            break;
        }
    }
    if (empty) {
        cv_.wait_until(lock, deadline, [this] {
            return !sleeping_.load(std::memory_order_relaxed) ||
                   closed_.load(std::memory_order_relaxed);
        });
    }
    sleeping_.store(false, std::memory_order_relaxed);
}

int32_t EventQueue::drain(trtb_batch* batch, int32_t timeout_ms, trtb_status* status) {
    if (batch == nullptr || batch->events == nullptr || batch->capacity <= 0 ||
        batch->text == nullptr || batch->text_capacity == 0) {
        return set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                          "drain needs a batch with event and text buffers");
    }
    if (timeout_ms < 0) {
        return set_status(status, TRTB_ERR_INVALID_ARGUMENT, "drain timeout must not be negative");
    }
    if (draining_.exchange(true, std::memory_order_acquire)) {
        return set_status(status, TRTB_ERR_STATE, "two threads drained one build at the same time");
    }
    struct Release {
        std::atomic<bool>& flag;
        ~Release() { flag.store(false, std::memory_order_release); }
    } release{draining_};

    batch->count = 0;
    batch->text_len = 0;
    batch->done = 0;

    if (read_ == ready_) {
        gather();
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (read_ == ready_ && !closed_seen_) {
            if (std::chrono::steady_clock::now() >= deadline) {
                break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (read_ < stage_.size()) {
                // Held back by the watermark: they were timed a moment ago and are ready at
                // the next gather.
                std::this_thread::yield();
            } else if (now - last_busy_ < kNapUntil) {
                // Events came a moment ago, and more are likely: look again after a short
                // nap rather than ask the next push to wake us (a system call on a builder
                // thread). close() still wakes the nap.
                std::unique_lock<std::mutex> lock(mu_);
                if (!closed_.load(std::memory_order_relaxed)) {
                    cv_.wait_until(lock, std::min(deadline, now + kNap));
                }
            } else {
                wait_for_push(deadline);
            }
            gather();
        }
    }

    const size_t capacity = static_cast<size_t>(batch->capacity);
    const size_t text_capacity = batch->text_capacity;
    size_t count = 0;
    size_t text_len = 0;
    uint64_t handed_bytes = 0;
    while (read_ < ready_ && count < capacity) {
        const Staged& in = stage_[read_];
        size_t name_len = in.ev.name_len;
        size_t parent_len = in.ev.parent_len;
        if (text_len + name_len + parent_len > text_capacity) {
            if (count > 0) {
                break;  // the next batch starts with this event
            }
            // Not even an empty batch holds it: cut it to fit.
            name_len = utf8_cut(stage_text_.data() + in.name_off, name_len, text_capacity);
            parent_len = utf8_cut(stage_text_.data() + in.parent_off, parent_len,
                                  text_capacity - name_len);
        }
        trtb_event& out = batch->events[count];
        out = in.ev;
        // The order is by time, so this only guards against a clock that misbehaves.
        out.time_ns = std::max(out.time_ns, last_time_);
        last_time_ = out.time_ns;
        out.name_off = static_cast<uint32_t>(text_len);
        out.name_len = static_cast<uint32_t>(name_len);
        std::memcpy(batch->text + text_len, stage_text_.data() + in.name_off, name_len);
        text_len += name_len;
        out.parent_off = static_cast<uint32_t>(text_len);
        out.parent_len = static_cast<uint32_t>(parent_len);
        std::memcpy(batch->text + text_len, stage_text_.data() + in.parent_off, parent_len);
        text_len += parent_len;
        handed_bytes += in.bytes;
        ++count;
        ++read_;
    }
    if (handed_bytes > 0) {
        pending_bytes_.fetch_sub(handed_bytes, std::memory_order_relaxed);
    }
    batch->count = static_cast<int32_t>(count);
    batch->text_len = static_cast<uint32_t>(text_len);
    batch->dropped_steps = dropped_seen_[kDropSteps];
    for (int k = 0; k < kDropSteps; ++k) {
        batch->dropped_logs[k] = dropped_seen_[k];
    }
    // close() comes after the last push, so a gather that saw it took everything.
    batch->done = closed_seen_ && read_ == stage_.size() ? 1 : 0;
    return set_status(status, TRTB_OK, "");
}

bool Build::step_complete(const char* phase, int32_t step, bool* queued) {
    const bool ok = queue.push_step(phase, step);
    if (queued != nullptr) {
        *queued = ok;
    }
    if (!cancel_requested()) {
        return true;
    }
    if (cancel_seen_.load(std::memory_order_relaxed) == 0) {
        const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count();
        int64_t expected = 0;
        cancel_seen_.compare_exchange_strong(expected, now, std::memory_order_relaxed);
    }
    return false;
}

}  // namespace trtb
