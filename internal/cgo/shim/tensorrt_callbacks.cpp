// tensorrt_callbacks.cpp: the objects TensorRT calls back during a build: the process's ILogger
// and the build's log behind it, the IErrorRecorder and the IProgressMonitor. Their threading and ownership rules are on their
// declarations in tensorrt_shim.hpp: any TensorRT thread, copy the text, one short lock, no Go,
// no exception out.

#include "tensorrt_shim.hpp"

#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace trtb {
namespace TRTB_SHIM {

// ---------------------------------------------------------------------------------------------
// Logger.

void Logger::note(int32_t severity, const char* msg) noexcept {
    try {
        const char* text = msg != nullptr ? msg : "";
        if (severity <= TRTB_SEVERITY_ERROR) {
            std::string line = one_line(text);
            std::lock_guard<std::mutex> lock(mu_);
            errors_.emplace_back(++nb_errors_, std::move(line));
            if (errors_.size() > kErrorRing) {
                errors_.pop_front();
            }
        }
        // A line the calling thread's capture takes is judged (and quoted or released) by
        // the code that made the capture, not shown now.
        if (tcache::ThreadCapture::record(this, severity, text)) {
            return;
        }
        if (severity <= max_severity_) {
            queue_.push_log(severity, text);
        }
    } catch (...) {  // coverage: only an allocation failure throws here
        // Out of memory while logging: the line is lost, the build goes on.
    }
}

uint64_t Logger::mark() const {
    std::lock_guard<std::mutex> lock(mu_);
    return nb_errors_;
}

void Logger::release(const tcache::ThreadCapture& capture) noexcept {
    // coverage: the stand-in logs no line in the timing cache calls whose captured lines are shown later
    for (const tcache::ThreadCapture::Line& line : capture.lines()) {
        if (line.severity <= max_severity_) {
            queue_.push_log(line.severity, line.text.c_str());
        }
    }
}

std::vector<std::string> Logger::errors_since(uint64_t mark, uint64_t* older) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    uint64_t first = nb_errors_ + 1;  // the number of the oldest error in out
    for (const auto& e : errors_) {
        if (e.first > mark) {
            if (out.empty()) {
                first = e.first;
            }
            out.push_back(e.second);
        }
    }
    *older = first > mark + 1 ? first - (mark + 1) : 0;
    return out;
}  // coverage: the unwinding of an allocation failure

// ---------------------------------------------------------------------------------------------
// ProcessLogger.

ProcessLogger& ProcessLogger::get() {
    // Leaked on purpose: TensorRT and libnvinfer_plugin may log through it until the process
    // ends, after static destructors have run.
    static ProcessLogger* const logger = new ProcessLogger();
    return *logger;
}

void ProcessLogger::log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept {
    // A lock that cannot be taken (resource exhaustion) loses the line.
    guarded_void([&] {
        std::shared_lock<std::shared_mutex> lock(mu_);
        if (sink_ != nullptr) {
            sink_->note(to_trtb_severity(severity), msg);
        }
    });
}

Logger* ProcessLogger::swap(Logger* sink) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    Logger* previous = sink_;
    sink_ = sink;
    return previous;
}

ProcessLogger::SinkScope::SinkScope(Logger& sink) : previous_(ProcessLogger::get().swap(&sink)) {}

ProcessLogger::SinkScope::~SinkScope() {
    guarded_void([&] { ProcessLogger::get().swap(previous_); });
}

// ---------------------------------------------------------------------------------------------
// ErrorRecorder.

int32_t ErrorRecorder::getNbErrors() const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int32_t>(entries_.size());
}

// Out of range, getErrorCode answers kUNSPECIFIED_ERROR and getErrorDesc an empty string, as
// the header requires ("ErrorCode::kUNSPECIFIED_ERROR must be returned if errorIdx is not in
// range"; "An empty string will be returned if errorIdx is not in range", IErrorRecorder in
// NvInferRuntimeBase.h of 10.16 and 11.1).
nvinfer1::ErrorCode ErrorRecorder::getErrorCode(int32_t index) const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < 0 || static_cast<size_t>(index) >= entries_.size()) {
        return nvinfer1::ErrorCode::kUNSPECIFIED_ERROR;
    }
    return entries_[static_cast<size_t>(index)].code;
}

nvinfer1::IErrorRecorder::ErrorDesc ErrorRecorder::getErrorDesc(int32_t index) const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < 0 || static_cast<size_t>(index) >= entries_.size()) {
        return "";
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
    // Live, as NVIDIA's SampleErrorRecorder does (samples/common/ErrorRecorder.h logs each
    // error as it is reported), and into the ring of the last errors.
    if (code == nvinfer1::ErrorCode::kFAILED_ALLOCATION) {
        last_alloc_.store(log_.mark() + 1, std::memory_order_relaxed);
    }
    log_.note(TRTB_SEVERITY_ERROR, desc);
    try {
        std::lock_guard<std::mutex> lock(mu_);
        if (entries_.size() >= kMaxErrors) {
            overflowed_ = true;
        } else {
            entries_.push_back(Entry{code, one_line(desc)});
        }
    } catch (...) {  // coverage: only an allocation failure throws here
        std::lock_guard<std::mutex> lock(mu_);
        overflowed_ = true;
    }
    return true;
}

bool ErrorRecorder::allocation_failed_since(uint64_t mark) const {
    return last_alloc_.load(std::memory_order_relaxed) > mark;
}

// ---------------------------------------------------------------------------------------------
// ProgressMonitor.

void ProgressMonitor::phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept {
    guarded_void([&] { build_.queue.push_phase_start(phaseName != nullptr ? phaseName : "", parentPhase, nbSteps); });
}

bool ProgressMonitor::stepComplete(char const* phaseName, int32_t step) noexcept {
    try {
        return build_.step_complete(phaseName != nullptr ? phaseName : "", step);
    } catch (...) {  // coverage: only an allocation failure throws here
        return !build_.cancel_requested();
    }
}

void ProgressMonitor::phaseFinish(char const* phaseName) noexcept {
    guarded_void([&] { build_.queue.push_phase_finish(phaseName != nullptr ? phaseName : ""); });
}

}  // namespace TRTB_SHIM
}  // namespace trtb
