// event_queue.cpp: the queue between builder threads and the Go drainer (see EventQueue in
// trtb_internal.hpp), and Build::step_complete, the code path of every stepComplete.

#include "trtb_internal.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>

namespace trtb {

namespace {

// Queue ids are never reused, so a stale entry in a thread's cache can never match a new queue.
std::atomic<uint64_t> g_next_queue_id{1};

// A thread's numbers in the queues it reported to most recently. Builder threads normally
// report to one build; a few slots cover a thread pool shared by consecutive builds.
struct ThreadSlot {
    uint64_t queue_id;
    uint64_t number;
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

}  // namespace

EventQueue::EventQueue(size_t max_pending)
    : start_(std::chrono::steady_clock::now()),
      max_pending_(max_pending),
      id_(g_next_queue_id.fetch_add(1, std::memory_order_relaxed)) {
    events_.reserve(1024);
    text_.reserve(64 * 1024);
}

int64_t EventQueue::now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start_)
        .count();
}

uint64_t EventQueue::thread_number() {
    for (const ThreadSlot& slot : tl_slots) {
        if (slot.queue_id == id_) {
            return slot.number;
        }
    }
    uint64_t number = next_thread_.fetch_add(1, std::memory_order_relaxed);
    tl_slots[tl_next_slot % kThreadSlots] = ThreadSlot{id_, number};
    ++tl_next_slot;
    return number;
}

// lock_for_push takes mu_ for a producer. The critical sections are a few dozen nanoseconds, so
// a contended producer spins briefly before it sleeps in the kernel: on a busy builder, sleeping
// costs microseconds that would land inside stepComplete.
void EventQueue::lock_for_push() {
    for (int i = 0; i < 128; ++i) {
        if (mu_.try_lock()) {
            return;
        }
        cpu_relax();
    }
    mu_.lock();
}

void EventQueue::push(int32_t kind, int32_t severity, int32_t nb_steps, int32_t step,
                      const char* name, const char* parent) {
    const size_t name_len = bounded_len(name);
    const size_t parent_len = bounded_len(parent);
    const uint64_t thread = thread_number();

    lock_for_push();
    std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
    if (closed_) {
        return;  // nobody reads past close(); see the threading rule in the header
    }
    const bool text_full = text_.size() + name_len + parent_len > UINT32_MAX;
    if (kind == TRTB_EVENT_STEP && (events_.size() >= max_pending_ || text_full)) {
        ++dropped_steps_;
        return;
    }
    trtb_event ev{};
    ev.kind = kind;
    ev.severity = severity;
    ev.nb_steps = nb_steps;
    ev.step = step;
    ev.thread = thread;
    ev.time_ns = now_ns();  // under the lock, so times never decrease along the queue
    ev.has_parent = parent != nullptr ? 1 : 0;
    if (!text_full) {
        ev.name_off = static_cast<uint32_t>(text_.size());
        ev.name_len = static_cast<uint32_t>(name_len);
        text_.append(name != nullptr ? name : "", name_len);
        ev.parent_off = static_cast<uint32_t>(text_.size());
        ev.parent_len = static_cast<uint32_t>(parent_len);
        text_.append(parent != nullptr ? parent : "", parent_len);
    }
    events_.push_back(ev);
}

void EventQueue::push_phase_start(const char* name, const char* parent, int32_t nb_steps) {
    push(TRTB_EVENT_PHASE_START, 0, nb_steps, 0, name, parent);
}

void EventQueue::push_step(const char* name, int32_t step) {
    push(TRTB_EVENT_STEP, 0, 0, step, name, nullptr);
}

void EventQueue::push_phase_finish(const char* name) {
    push(TRTB_EVENT_PHASE_FINISH, 0, 0, 0, name, nullptr);
}

void EventQueue::push_log(int32_t severity, const char* message) {
    push(TRTB_EVENT_LOG, severity, 0, 0, message, nullptr);
}

void EventQueue::close() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        closed_ = true;
    }
    cv_.notify_all();
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

    if (read_ == out_events_.size()) {
        out_events_.clear();
        out_text_.clear();
        read_ = 0;
        // Producers never signal (no syscall on builder threads), so poll in short slices;
        // close() does signal, so the end of the stream is seen at once.
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        std::unique_lock<std::mutex> lock(mu_);
        while (events_.empty() && !closed_) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline) {
                break;
            }
            cv_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(
                                   deadline - now, std::chrono::milliseconds(1)));
        }
        events_.swap(out_events_);
        text_.swap(out_text_);
        out_closed_ = closed_;
        out_dropped_ = dropped_steps_;
    } else {
        std::lock_guard<std::mutex> lock(mu_);
        out_dropped_ = dropped_steps_;
    }

    const size_t capacity = static_cast<size_t>(batch->capacity);
    const size_t text_capacity = batch->text_capacity;
    size_t count = 0;
    size_t text_len = 0;
    while (read_ < out_events_.size() && count < capacity) {
        const trtb_event& in = out_events_[read_];
        size_t name_len = in.name_len;
        size_t parent_len = in.parent_len;
        if (text_len + name_len + parent_len > text_capacity) {
            if (count > 0) {
                break;  // the next batch starts with this event
            }
            // Not even an empty batch holds it: cut it to fit.
            name_len = utf8_cut(out_text_.data() + in.name_off, name_len, text_capacity);
            parent_len = utf8_cut(out_text_.data() + in.parent_off, parent_len,
                                  text_capacity - name_len);
        }
        trtb_event& out = batch->events[count];
        out = in;
        out.name_off = static_cast<uint32_t>(text_len);
        out.name_len = static_cast<uint32_t>(name_len);
        std::memcpy(batch->text + text_len, out_text_.data() + in.name_off, name_len);
        text_len += name_len;
        out.parent_off = static_cast<uint32_t>(text_len);
        out.parent_len = static_cast<uint32_t>(parent_len);
        std::memcpy(batch->text + text_len, out_text_.data() + in.parent_off, parent_len);
        text_len += parent_len;
        ++count;
        ++read_;
    }
    batch->count = static_cast<int32_t>(count);
    batch->text_len = static_cast<uint32_t>(text_len);
    batch->dropped_steps = out_dropped_;
    // close() comes after the last push, so once a swap saw closed_, it took everything.
    batch->done = out_closed_ && read_ == out_events_.size() ? 1 : 0;
    return set_status(status, TRTB_OK, "");
}

bool Build::step_complete(const char* phase, int32_t step) {
    queue.push_step(phase, step);
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
