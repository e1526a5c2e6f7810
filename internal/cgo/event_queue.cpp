// event_queue.cpp: the queue between builder threads and the Go drainer (see EventQueue in
// trtb_internal.hpp), and Build::step_complete, the code path of every stepComplete.

#include "trtb_internal.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace trtb {

// Buffer is one producer thread's share of a queue. Aligned to its own cache lines, so that
// threads appending to their buffers do not slow each other down.
struct alignas(64) EventQueue::Buffer {
    std::mutex mu;
    std::vector<trtb_event> events;  // guarded by mu; text offsets index text
    std::vector<uint64_t> seqs;      // guarded by mu; the sequence number of each event
    std::string text;                // guarded by mu
    uint64_t dropped = 0;            // guarded by mu
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

EventQueue::EventQueue(size_t max_pending)
    : start_(std::chrono::steady_clock::now()),
      max_pending_(max_pending),
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
    owned->seqs.reserve(256);
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

void EventQueue::push(int32_t kind, int32_t severity, int32_t nb_steps, int32_t step,
                      const char* name, const char* parent) {
    const size_t name_len = bounded_len(name);
    const size_t parent_len = bounded_len(parent);
    Buffer* b = buffer();

    lock_briefly(b->mu);
    std::lock_guard<std::mutex> lock(b->mu, std::adopt_lock);
    // Taken under b->mu: see gather() for why that makes the order consistent.
    const uint64_t seq = next_seq_.fetch_add(1, std::memory_order_acq_rel);
    if (closed_.load(std::memory_order_relaxed)) {
        return;  // nobody reads past close(); see the threading rule in the header
    }
    const bool text_full = b->text.size() + name_len + parent_len > UINT32_MAX;
    if (kind == TRTB_EVENT_STEP) {
        const uint64_t handed = handed_.load(std::memory_order_relaxed);
        if (text_full || (seq > handed && seq - handed >= max_pending_)) {
            ++b->dropped;
            return;
        }
    }
    trtb_event ev{};
    ev.kind = kind;
    ev.severity = severity;
    ev.nb_steps = nb_steps;
    ev.step = step;
    ev.thread = b->thread;
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
    b->seqs.push_back(seq);
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
        closed_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
}

// gather moves what the buffers hold into stage_ and makes ready every event numbered below
// the watermark. Called by the drainer only, when stage_[read_, ready_) is empty.
//
// Why the order is consistent: a producer takes its number n under its buffer's lock and
// appends before unlocking. The drainer reads the watermark W first; if n < W, the producer
// took n (and so held its lock) before that read, so when the drainer then locks the buffer it
// finds the event there. Events numbered W or more may be missing from some buffers, so they
// wait in stage_ for the next gather. And if push A happens before push B, A's number is the
// smaller one, as numbers come from one atomic counter.
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
    const uint64_t watermark = next_seq_.load(std::memory_order_acquire);
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
    uint64_t dropped = 0;
    for (Buffer* b : snapshot_) {
        {
            lock_briefly(b->mu);
            std::lock_guard<std::mutex> lock(b->mu, std::adopt_lock);
            b->events.swap(tmp_events_);
            b->seqs.swap(tmp_seqs_);
            b->text.swap(tmp_text_);
            dropped += b->dropped;
        }
        if (!tmp_events_.empty()) {
            const size_t base = stage_text_.size();
            stage_text_ += tmp_text_;
            for (size_t i = 0; i < tmp_events_.size(); ++i) {
                const trtb_event& ev = tmp_events_[i];
                stage_.push_back(Staged{tmp_seqs_[i], ev, base + ev.name_off, base + ev.parent_off});
            }
            runs_.push_back(stage_.size());
        }
        tmp_events_.clear();
        tmp_seqs_.clear();
        tmp_text_.clear();
    }
    // Merge neighbouring runs pairwise until one is left: O(n log runs).
    auto by_seq = [](const Staged& a, const Staged& b) { return a.seq < b.seq; };
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
                       merged_.begin() + static_cast<std::ptrdiff_t>(begin), by_seq);
            runs_[keep++] = end;
            begin = end;
        }
        runs_.resize(keep);
        stage_.swap(merged_);
    }
    ready_ = static_cast<size_t>(
        std::lower_bound(stage_.begin(), stage_.end(), watermark,
                         [](const Staged& s, uint64_t w) { return s.seq < w; }) -
        stage_.begin());
    watermark_ = watermark;
    dropped_seen_ = dropped;
    closed_seen_ = closed;
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
        // Producers never signal (no syscall on builder threads), so poll in short slices;
        // close() does signal, so the end of the stream is seen at once.
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (read_ == ready_ && !closed_seen_) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline) {
                break;
            }
            {
                std::unique_lock<std::mutex> lock(mu_);
                if (!closed_.load(std::memory_order_relaxed)) {
                    cv_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(
                                           deadline - now, std::chrono::milliseconds(1)));
                }
            }
            gather();
        }
    }

    const size_t capacity = static_cast<size_t>(batch->capacity);
    const size_t text_capacity = batch->text_capacity;
    size_t count = 0;
    size_t text_len = 0;
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
        // Threads read the clock before the queue orders their events; never let time run back.
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
        ++count;
        ++read_;
    }
    handed_.store(read_ < stage_.size() ? stage_[read_].seq : watermark_,
                  std::memory_order_relaxed);
    batch->count = static_cast<int32_t>(count);
    batch->text_len = static_cast<uint32_t>(text_len);
    batch->dropped_steps = dropped_seen_;
    // close() comes after the last push, so a gather that saw it took everything.
    batch->done = closed_seen_ && read_ == stage_.size() ? 1 : 0;
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
