//go:build trtbench

// bench_timing_cache.cpp: the test surface of trtb_bench.h for the timing cache's decisions
// (timing_cache_rules.hpp). Test use only: the Go build tag "trtbench" compiles it.

#include "timing_cache_rules.hpp"
#include "trtb_bench.h"
#include "trtb_internal.hpp"

#include <string>
#include <thread>
#include <vector>

namespace {

bool texts(const char* const* in, int32_t n, std::vector<std::string>* out) {
    if (n < 0 || (n > 0 && in == nullptr)) {
        return false;
    }
    for (int32_t i = 0; i < n; ++i) {
        out->push_back(in[i] != nullptr ? in[i] : "");
    }
    return true;
}

// record_all records each "<severity digit><text>" line for owner and returns how many record
// did not take.
int32_t record_all(const void* owner, const std::vector<std::string>& lines) {
    int32_t live = 0;
    for (const std::string& line : lines) {
        const int32_t severity = line.empty() ? TRTB_SEVERITY_INFO : line[0] - '0';
        const std::string text = line.empty() ? std::string() : line.substr(1);
        if (!trtb::tcache::ThreadCapture::record(owner, severity, text.c_str())) {
            ++live;
        }
    }
    return live;
}

}  // namespace

extern "C" int32_t trtb_test_timing_cache_load(const trtb_test_cache_load* in, trtb_test_cache_verdict* out) {
    return trtb::guarded(nullptr, [&]() -> int32_t {
        using namespace trtb::tcache;
        if (in == nullptr || out == nullptr) {
            return TRTB_ERR_INVALID_ARGUMENT;
        }
        LoadFacts f;
        f.size = in->size;
        f.created = in->created != 0;
        f.keys = in->keys;
        f.exact = in->exact != 0;
        if (!texts(in->errors, in->nb_errors, &f.errors) || !texts(in->warnings, in->nb_warnings, &f.warnings) ||
            !texts(in->exact_refusal, in->nb_exact_refusal, &f.exact_refusal)) {
            return TRTB_ERR_INVALID_ARGUMENT;
        }
        const LoadVerdict v = judge_load(f);
        out->kind = static_cast<int32_t>(v.kind);
        out->action = static_cast<int32_t>(load_action(v.kind, in->strict != 0));
        const std::string message = load_message(v, in->strict != 0);
        trtb_status st{};
        trtb::set_status(&st, TRTB_OK, message);  // cut to fit, as every message of the ABI
        static_assert(sizeof(out->message) == sizeof(st.message), "message sizes differ");
        for (size_t i = 0; i < sizeof(st.message); ++i) {
            out->message[i] = st.message[i];
        }
        return TRTB_OK;
    });
}

extern "C" int32_t trtb_test_timing_cache_save(uint64_t file_size, int64_t build_keys, int32_t holds_file,
                                               int32_t* action) {
    if (action == nullptr) {
        return TRTB_ERR_INVALID_ARGUMENT;
    }
    *action = static_cast<int32_t>(
        trtb::tcache::judge_save(trtb::tcache::SaveFacts{file_size, build_keys, holds_file != 0}));
    return TRTB_OK;
}

extern "C" int32_t trtb_test_thread_capture(const char* const* own, int32_t nb_own, const char* const* other,
                                            int32_t nb_other, const char* const* after, int32_t nb_after,
                                            char* out, uint32_t out_size, int32_t* live) {
    return trtb::guarded(nullptr, [&]() -> int32_t {
        std::vector<std::string> own_lines, other_lines, after_lines;
        if (out == nullptr || out_size == 0 || live == nullptr || !texts(own, nb_own, &own_lines) ||
            !texts(other, nb_other, &other_lines) || !texts(after, nb_after, &after_lines)) {
            return TRTB_ERR_INVALID_ARGUMENT;
        }
        static const int owner = 0;  // any address names the log
        std::string taken;
        {
            trtb::tcache::ThreadCapture capture(&owner);
            int32_t other_live = 0;
            std::thread t([&] { other_live = record_all(&owner, other_lines); });
            t.join();
            *live = other_live + record_all(&owner, own_lines);
            capture.end();
            *live += record_all(&owner, after_lines);
            for (const auto& line : capture.lines()) {
                taken += std::to_string(line.severity) + line.text + "\n";
            }
        }
        const size_t n = taken.size() < out_size - 1 ? taken.size() : out_size - 1;
        taken.copy(out, n);
        out[n] = '\0';
        return TRTB_OK;
    });
}
