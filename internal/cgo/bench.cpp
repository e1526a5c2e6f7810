//go:build trtbench

// bench.cpp: the measurement and test surface of trtb_bench.h. Test and benchmark use only:
// the Go build tag "trtbench" compiles it, a trtbuild binary does not hold it.

#include "trtb_bench.h"
#include "trtb_internal.hpp"
#include "trtb_loader.hpp"
#include "trtfake/probe.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr char kStepPhase[] = "Measuring tactic time";

// NullBuild is a Build with nothing to run: the benchmark only uses its queue and cancel flag.
class NullBuild final : public trtb::Build {
public:
    int32_t run(trtb_result*, trtb_status* status) override {
        queue.close();
        return trtb::set_status(status, TRTB_OK, "");
    }
};

// FloodBuild pushes events as fast as its threads can (see trtb_bench_flood_create).
class FloodBuild final : public trtb::Build {
public:
    FloodBuild(int32_t threads, int32_t events, uint64_t max_bytes)
        : Build(max_bytes), threads_(threads), events_(events) {}

    int32_t run(trtb_result*, trtb_status* status) override {
        std::vector<std::thread> threads;
        threads.reserve(static_cast<size_t>(threads_));
        for (int32_t t = 0; t < threads_; ++t) {
            threads.emplace_back([this, t] {
                const std::string name = "Flood " + std::to_string(t + 1);
                queue.push_phase_start(name.c_str(), nullptr, events_);
                for (int32_t i = 0; i < events_; ++i) {
                    if (!step_complete(name.c_str(), i)) {
                        break;
                    }
                }
                queue.push_phase_finish(name.c_str());
            });
        }
        for (std::thread& t : threads) {
            t.join();
        }
        queue.push_log(TRTB_SEVERITY_INFO, "flood done");
        queue.close();
        return trtb::set_status(status, cancel_requested() ? TRTB_ERR_CANCELLED : TRTB_OK,
                                cancel_requested() ? "build cancelled" : "");
    }

private:
    int32_t threads_;
    int32_t events_;
};

// LogFloodBuild logs lines of every severity from one thread (see trtb_test_log_flood_create).
class LogFloodBuild final : public trtb::Build {
public:
    LogFloodBuild(int32_t rounds, uint64_t max_bytes) : Build(max_bytes), rounds_(rounds) {}

    int32_t run(trtb_result*, trtb_status* status) override {
        static const char* const names[] = {"internal-error", "error", "warning", "info", "verbose"};
        const char* phase = "Log flood";
        queue.push_phase_start(phase, nullptr, rounds_);
        for (int32_t r = 0; r < rounds_; ++r) {
            for (int32_t sev = TRTB_SEVERITY_VERBOSE; sev >= TRTB_SEVERITY_INTERNAL_ERROR; --sev) {
                const std::string line = std::string(names[sev]) + " line " + std::to_string(r);
                queue.push_log(sev, line.c_str());
            }
            step_complete(phase, r);
        }
        queue.push_phase_finish(phase);
        queue.close();
        return trtb::set_status(status, TRTB_OK, "");
    }

private:
    int32_t rounds_;
};

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

extern "C" {

int32_t trtb_bench_monitor(int32_t threads, int32_t calls_per_thread, trtb_bench_result* out) {
    return trtb_bench_monitor_paced(threads, calls_per_thread, 0, out);
}

int32_t trtb_bench_monitor_paced(int32_t threads, int32_t calls_per_thread, int64_t gap_ns,
                                 trtb_bench_result* out) {
    try {
        if (out == nullptr || threads < 1 || threads > 1024 || calls_per_thread < 1 ||
            calls_per_thread > (1 << 24) || gap_ns < 0 || gap_ns > 1000000000) {
            return TRTB_ERR_INVALID_ARGUMENT;
        }
        *out = trtb_bench_result{};
        NullBuild build;
        const size_t calls = static_cast<size_t>(calls_per_thread);
        std::vector<std::vector<int64_t>> latencies(static_cast<size_t>(threads));
        for (auto& l : latencies) {
            l.resize(calls);
        }

        // The drainer, with the batch sizes the Go side uses.
        std::vector<trtb_event> events(4096);
        std::vector<char> text(256 * 1024);
        uint64_t drained = 0;
        uint64_t dropped = 0;
        int32_t drain_code = TRTB_OK;
        std::thread drainer([&] {
            trtb_batch batch{};
            batch.events = events.data();
            batch.capacity = static_cast<int32_t>(events.size());
            batch.text = text.data();
            batch.text_capacity = static_cast<uint32_t>(text.size());
            trtb_status status{};
            for (;;) {
                drain_code = build.queue.drain(&batch, 100, &status);
                if (drain_code != TRTB_OK) {
                    return;
                }
                drained += static_cast<uint64_t>(batch.count);
                dropped = batch.dropped_steps;
                if (batch.done != 0) {
                    return;
                }
            }
        });

        std::atomic<uint64_t> dropped_calls{0};
        std::atomic<int32_t> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> producers;
        producers.reserve(static_cast<size_t>(threads));
        for (int32_t t = 0; t < threads; ++t) {
            producers.emplace_back([&, t] {
                std::vector<int64_t>& lat = latencies[static_cast<size_t>(t)];
                ready.fetch_add(1);
                while (!go.load(std::memory_order_acquire)) {
                    std::this_thread::yield();
                }
                size_t n = 0;
                for (size_t i = 0; i < calls; ++i) {
                    bool queued = false;
                    const int64_t t0 = now_ns();
                    build.step_complete(kStepPhase, static_cast<int32_t>(i & 3), &queued);
                    const int64_t t1 = now_ns();
                    if (queued) {
                        lat[n++] = t1 - t0;
                    } else {
                        dropped_calls.fetch_add(1, std::memory_order_relaxed);
                    }
                    while (gap_ns > 0 && now_ns() - t1 < gap_ns) {
                    }
                }
                lat.resize(n);
            });
        }
        while (ready.load() < threads) {
            std::this_thread::yield();
        }
        go.store(true, std::memory_order_release);
        for (std::thread& p : producers) {
            p.join();
        }
        build.queue.close();
        drainer.join();
        if (drain_code != TRTB_OK) {
            return drain_code;
        }

        std::vector<int64_t> all;
        all.reserve(calls * static_cast<size_t>(threads));
        for (const auto& l : latencies) {
            all.insert(all.end(), l.begin(), l.end());
        }
        const size_t n = all.size();
        if (n == 0) {
            return TRTB_ERR_INTERNAL;  // every step was dropped: nothing to time
        }
        const size_t i50 = n / 2;
        const size_t i99 = std::min(n - 1, n * 99 / 100);
        std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(i50), all.end());
        out->p50_ns = all[i50];
        std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(i99), all.end());
        out->p99_ns = all[i99];
        out->max_ns = *std::max_element(all.begin(), all.end());
        out->calls = n;
        out->drained = drained;
        out->dropped_steps = dropped_calls.load();
        if (dropped != out->dropped_steps) {
            return TRTB_ERR_INTERNAL;  // the queue and the callers disagree about the drops
        }
        return TRTB_OK;
    } catch (const std::exception&) {
        return TRTB_ERR_INTERNAL;
    } catch (...) {
        return TRTB_ERR_INTERNAL;
    }
}

int32_t trtb_bench_flood_create(int32_t threads, int32_t events_per_thread, uint64_t max_bytes,
                                trtb_build** out, trtb_status* status) {
    try {
        if (out == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "build output is NULL");
        }
        *out = nullptr;
        if (threads < 1 || threads > 1024 || events_per_thread < 1) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                                    "flood needs 1..1024 threads and at least one event each");
        }
        const uint64_t bound = max_bytes == 0 ? trtb::kDefaultQueueBytes : max_bytes;
        *out = trtb::new_handle(std::unique_ptr<trtb::Build>(
            new FloodBuild(threads, events_per_thread, bound)));
        return trtb::set_status(status, TRTB_OK, "");
    } catch (const std::exception& e) {
        return trtb::set_status(status, TRTB_ERR_INTERNAL, e.what());
    } catch (...) {
        return trtb::set_status(status, TRTB_ERR_INTERNAL, "unknown exception");
    }
}

int32_t trtb_test_log_flood_create(int32_t rounds, uint64_t max_bytes, trtb_build** out,
                                   trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        if (out == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "build output is NULL");
        }
        *out = nullptr;
        if (rounds < 1) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "log flood needs a round");
        }
        const uint64_t bound = max_bytes == 0 ? trtb::kDefaultQueueBytes : max_bytes;
        *out = trtb::new_handle(std::unique_ptr<trtb::Build>(new LogFloodBuild(rounds, bound)));
        return trtb::set_status(status, TRTB_OK, "");
    });
}

uint64_t trtb_test_publish_chunk(void) {
    return trtb::EventQueue::kPublishChunk;
}

}  // extern "C"

extern "C" int32_t trtb_test_guarded(int32_t what, trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        switch (what) {
            case 1:
                throw std::runtime_error("boom");
            case 2:
                throw std::bad_alloc();
            case 3:
                throw 42;
            case 4: {
                std::string long_text(TRTB_MESSAGE_MAX - 40, 'x');
                for (int i = 0; i < 40; ++i) {
                    long_text += "\xc3\xa9";  // é: two bytes each
                }
                throw std::runtime_error(long_text);
            }
            default:
                return trtb::set_status(status, TRTB_OK, "");
        }
    });
}

namespace {

// TestLogger has TensorRT 10's nvinfer1::ILogger layout: log is its first virtual, then the
// destructor. TensorRT calls it from the thread that creates the builder only, here.
class TestLogger {
public:
    virtual void log(int32_t severity, const char* msg) noexcept {
        if (severity <= 1 && msg != nullptr) {  // kINTERNAL_ERROR, kERROR
            last_error_ = msg;
        }
    }
    virtual ~TestLogger() = default;
    const std::string& last_error() const { return last_error_; }

private:
    std::string last_error_;
};

}  // namespace

namespace trtb_test {

// AnyBuilder stands for nvinfer1::IBuilder, whose only virtual is its destructor: deleting
// through it is all a builder of unknown layout allows. It has external linkage on purpose:
// in an anonymous namespace the compiler may assume no class derives from it and call its own
// destructor instead of the object's.
class AnyBuilder {
public:
    virtual ~AnyBuilder();
};
AnyBuilder::~AnyBuilder() = default;

}  // namespace trtb_test

extern "C" int32_t trtb_test_create_builder(trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        const trtb::InferEntryPoints* infer = trtb::installed_infer();
        if (infer == nullptr) {
            return trtb::set_status(status, TRTB_ERR_UNAVAILABLE, "libnvinfer is not installed in this process");
        }
        TestLogger logger;
        void* builder = infer->create_builder(&logger, infer->get_version());
        if (builder == nullptr) {
            return trtb::set_status(status, TRTB_ERR_UNAVAILABLE,
                                    "TensorRT could not create a builder: " +
                                        (logger.last_error().empty() ? std::string("no error logged") : logger.last_error()));
        }
        delete static_cast<trtb_test::AnyBuilder*>(builder);
        return trtb::set_status(status, TRTB_OK, "");
    });
}

extern "C" int32_t trtb_test_fake_probe(int32_t major, const char* what, char* out, int32_t size) {
    trtb_status status{};
    return trtb::guarded(&status, [&]() -> int32_t {
        std::string answer;
        switch (major) {
            case 10:
                answer = trtb::fake10::probe(what != nullptr ? what : "");
                break;
            case 11:
                answer = trtb::fake11::probe(what != nullptr ? what : "");
                break;
            default:
                return TRTB_ERR_INVALID_ARGUMENT;
        }
        if (out != nullptr && size > 0) {
            const size_t n = std::min(answer.size(), static_cast<size_t>(size) - 1);
            std::memcpy(out, answer.data(), n);
            out[n] = '\0';
        }
        return TRTB_OK;
    });
}
