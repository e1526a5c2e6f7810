//go:build tensorrt

// tensorrt_callbacks.cpp: the objects TensorRT calls back during a build: the ILogger, the
// IErrorRecorder and the IProgressMonitor. Their threading and ownership rules are on their
// declarations in tensorrt_shim.hpp: any TensorRT thread, copy the text, one short lock, no Go,
// no exception out.

#include "tensorrt_shim.hpp"

#include <string>
#include <vector>

namespace trtb {
namespace trt {

// ---------------------------------------------------------------------------------------------
// Logger.

void Logger::log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept {
    note(to_trtb_severity(severity), msg);
}

void Logger::note(int32_t severity, const char* msg) noexcept {
    try {
        const char* text = msg != nullptr ? msg : "";
        if (severity <= TRTB_SEVERITY_ERROR) {
            std::lock_guard<std::mutex> lock(mu_);
            errors_.push_back(one_line(text));
            if (errors_.size() > kMaxListed) {
                errors_.pop_front();
            }
        }
        if (severity <= max_severity_) {
            queue_.push_log(severity, text);
        }
    } catch (...) {
        // Out of memory while logging: the line is lost, the build goes on.
    }
}

std::vector<std::string> Logger::errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    return std::vector<std::string>(errors_.begin(), errors_.end());
}

// ---------------------------------------------------------------------------------------------
// ErrorRecorder.

int32_t ErrorRecorder::getNbErrors() const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int32_t>(entries_.size());
}

nvinfer1::ErrorCode ErrorRecorder::getErrorCode(int32_t index) const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < 0 || static_cast<size_t>(index) >= entries_.size()) {
        return nvinfer1::ErrorCode::kINVALID_ARGUMENT;
    }
    return entries_[static_cast<size_t>(index)].code;
}

nvinfer1::IErrorRecorder::ErrorDesc ErrorRecorder::getErrorDesc(int32_t index) const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < 0 || static_cast<size_t>(index) >= entries_.size()) {
        return "error index out of range";
    }
    return entries_[static_cast<size_t>(index)].desc.c_str();
}

bool ErrorRecorder::hasOverflowed() const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    return overflowed_;
}

void ErrorRecorder::clear() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
    overflowed_ = false;
}

bool ErrorRecorder::reportError(nvinfer1::ErrorCode code, ErrorDesc desc) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mu_);
        if (entries_.size() >= kMaxErrors) {
            overflowed_ = true;
        } else {
            entries_.push_back(Entry{code, one_line(desc)});
        }
    } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        overflowed_ = true;
    }
    return true;
}

size_t ErrorRecorder::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
}

std::vector<std::string> ErrorRecorder::texts_since(size_t mark) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (size_t i = mark; i < entries_.size(); ++i) {
        out.push_back(entries_[i].desc);
    }
    return out;
}

void ErrorRecorder::drop_since(size_t mark) {
    std::lock_guard<std::mutex> lock(mu_);
    while (entries_.size() > mark) {
        entries_.pop_back();
    }
}

bool ErrorRecorder::allocation_failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
        if (e.code == nvinfer1::ErrorCode::kFAILED_ALLOCATION) {
            return true;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// ProgressMonitor.

void ProgressMonitor::phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept {
    try {
        build_.queue.push_phase_start(phaseName != nullptr ? phaseName : "", parentPhase, nbSteps);
    } catch (...) {
    }
}

bool ProgressMonitor::stepComplete(char const* phaseName, int32_t step) noexcept {
    try {
        return build_.step_complete(phaseName != nullptr ? phaseName : "", step);
    } catch (...) {
        return !build_.cancel_requested();
    }
}

void ProgressMonitor::phaseFinish(char const* phaseName) noexcept {
    try {
        build_.queue.push_phase_finish(phaseName != nullptr ? phaseName : "");
    } catch (...) {
    }
}

}  // namespace trt
}  // namespace trtb
