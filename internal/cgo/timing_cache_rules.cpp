// timing_cache_rules.cpp: the timing cache's decisions (see timing_cache_rules.hpp). No
// TensorRT here: compiled into every binary, tested through trtb_bench.h.

#include "timing_cache_rules.hpp"

#include "trtb.h"

#include <string>
#include <utility>
#include <vector>

namespace trtb {
namespace tcache {
namespace {

// The innermost capture of this thread, or null.
thread_local ThreadCapture* tl_capture = nullptr;

// The most texts a verdict quotes.
constexpr size_t kMaxQuoted = 4;

// one_line turns text into one line: line breaks and tabs become spaces, and spaces at either
// end go.
std::string one_line(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    }
    const size_t first = out.find_first_not_of(' ');
    if (first == std::string::npos) {
        return std::string();
    }
    return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

// quoted joins texts with "; ", at most kMaxQuoted of them (the last ones), or returns
// fallback when there are none.
std::string quoted(const std::vector<std::string>& texts, const char* fallback) {
    std::string out;
    const size_t skip = texts.size() > kMaxQuoted ? texts.size() - kMaxQuoted : 0;
    for (size_t i = skip; i < texts.size(); ++i) {
        const std::string line = one_line(texts[i]);
        if (line.empty()) {
            continue;
        }
        out += (out.empty() ? "" : "; ") + line;
    }
    if (out.empty()) {
        return fallback;
    }
    if (skip > 0) {
        out = "(" + std::to_string(skip) + " more before) " + out;
    }
    return out;
}

}  // namespace

ThreadCapture::ThreadCapture(const void* owner) : owner_(owner), outer_(tl_capture) {
    tl_capture = this;
}

ThreadCapture::~ThreadCapture() {
    end();
}

void ThreadCapture::end() noexcept {
    if (!active_) {
        return;
    }
    active_ = false;
    // Captures end in reverse order of their making on one thread (they are scoped), so this
    // one is the innermost.
    if (tl_capture == this) {
        tl_capture = outer_;
    }
}

bool ThreadCapture::record(const void* owner, int32_t severity, const char* text) noexcept {
    ThreadCapture* c = tl_capture;
    if (c == nullptr || c->owner_ != owner || severity > TRTB_SEVERITY_WARNING) {
        return false;
    }
    try {
        c->lines_.push_back(Line{severity, text != nullptr ? text : ""});
        return true;
    } catch (...) {
        return false;  // out of memory: the line goes live instead
    }
}

std::vector<std::string> ThreadCapture::errors() const {
    std::vector<std::string> out;
    for (const Line& l : lines_) {
        if (l.severity <= TRTB_SEVERITY_ERROR) {
            out.push_back(l.text);
        }
    }
    return out;
}

std::vector<std::string> ThreadCapture::warnings() const {
    std::vector<std::string> out;
    for (const Line& l : lines_) {
        if (l.severity == TRTB_SEVERITY_WARNING) {
            out.push_back(l.text);
        }
    }
    return out;
}

LoadVerdict judge_load(const LoadFacts& f) {
    if (f.size == 0) {
        return {LoadKind::kNone, ""};
    }
    if (!f.created) {
        return {LoadKind::kForeign, quoted(f.errors, "TensorRT could not read it")};
    }
    if (!f.errors.empty()) {
        return {LoadKind::kForeign, quoted(f.errors, "")};
    }
    // A blob of another TensorRT may come back as an empty cache with only a warning; a
    // warning beside the keys read is just a warning.
    if (!f.warnings.empty() && f.keys == 0) {
        return {LoadKind::kForeign, "TensorRT read no entry from it and warned: " + quoted(f.warnings, "")};
    }
    if (!f.warnings.empty() && f.keys < 0) {
        return {LoadKind::kForeign,
                "TensorRT warned while reading it and cannot count its entries: " + quoted(f.warnings, "")};
    }
    if (!f.exact) {
        return {LoadKind::kMismatch, quoted(f.exact_refusal, "TensorRT refused it for this device")};
    }
    if (f.keys == 0) {
        return {LoadKind::kEmpty, ""};
    }
    return {LoadKind::kUsable, ""};
}

LoadAction load_action(LoadKind kind, bool strict) {
    switch (kind) {
        case LoadKind::kNone:
            return LoadAction::kNew;
        case LoadKind::kUsable:
        case LoadKind::kEmpty:
            return LoadAction::kAttach;
        case LoadKind::kMismatch:
            return strict ? LoadAction::kFail : LoadAction::kAttachIgnoringMismatch;
        case LoadKind::kForeign:
            break;
    }
    return strict ? LoadAction::kFail : LoadAction::kStartEmpty;
}

std::string load_message(const LoadVerdict& v, bool strict) {
    switch (v.kind) {
        case LoadKind::kMismatch:
            if (strict) {
                return "was made on another GPU or CUDA version (" + v.why +
                       "); --strict-cache refuses it: pass a cache made on this GPU, or drop "
                       "--strict-cache to use it anyway, as trtexec does";
            }
            return "the timing cache was made on another GPU or CUDA version (" + v.why +
                   "); it is used anyway, as trtexec does, which can choose slower tactics: pass a "
                   "cache made on this GPU to avoid that";
        case LoadKind::kForeign:
            if (strict) {
                return "cannot be used by TensorRT (" + v.why +
                       "): it is corrupt or was made by another TensorRT version; --strict-cache "
                       "refuses it: delete it, or pass another --timing-cache";
            }
            return "the timing cache was not accepted (" + v.why + "); building from an empty cache";
        default:
            return std::string();
    }
}

SaveAction judge_save(const SaveFacts& f) {
    if (f.build_keys == 0) {
        return SaveAction::kNothing;
    }
    if (f.file_size == 0 || f.holds_file) {
        return SaveAction::kWriteOwn;
    }
    return SaveAction::kMerge;
}

}  // namespace tcache
}  // namespace trtb
