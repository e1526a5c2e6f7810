// context.cpp: a builder's Context (objects.hpp): its logger, error recorder and settings,
// and what the generated stubs report to.

#include "objects.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace trtb {
namespace TRTB_FAKE {

std::string version_text(int32_t v) {
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

Context::Context(nvinfer1::ILogger* logger, Settings settings) : logger_(logger), settings_(std::move(settings)) {}

Context::~Context() {
    // A builder deleted with its recorder attached lets go of it (TensorRT's decRefCount).
    set_recorder(nullptr);
}

int32_t Context::version() const {
    return settings_.version != 0 ? settings_.version : kHeaderVersion;
}

int32_t Context::build() const {
    return settings_.build >= 0 ? settings_.build : kHeaderBuild;
}

void Context::log(Severity severity, const std::string& text) const noexcept {
    if (logger_ != nullptr) {
        logger_->log(severity, text.c_str());
    }
}

void Context::error(ErrorCode code, const char* api, const char* kind, const std::string& text) const noexcept {
    try {
        const std::string desc = std::string(api) + ": Error Code " + std::to_string(static_cast<int32_t>(code)) + ": " +
                                 kind + " (" + text + ")";
        nvinfer1::IErrorRecorder* recorder = this->recorder();
        if (recorder != nullptr) {
            recorder->reportError(code, desc.c_str());
        } else {
            log(Severity::kERROR, desc);
        }
    } catch (...) {
        // Out of memory while reporting: the error is lost, as the call's answer still says it failed.
    }
}

void Context::set_recorder(nvinfer1::IErrorRecorder* recorder) noexcept {
    nvinfer1::IErrorRecorder* previous = nullptr;
    {
        std::lock_guard<std::mutex> lock(mu_);
        previous = recorder_;
        recorder_ = recorder;
    }
    if (recorder != nullptr) {
        recorder->incRefCount();
    }
    if (previous != nullptr) {
        previous->decRefCount();
    }
}

nvinfer1::IErrorRecorder* Context::recorder() const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    return recorder_;
}

void Context::report(char const* method) const noexcept {
    try {
        {
            std::lock_guard<std::mutex> lock(mu_);
            unimplemented_.emplace_back(method);
        }
        error(ErrorCode::kUNSUPPORTED_STATE, method, "Internal Error",
              std::string("trtfake: ") + method + " is not implemented");
    } catch (...) {
    }
}

void Context::fatal(char const* method) const noexcept {
    report(method);
    std::fprintf(stderr, "trtfake: %s is not implemented, and returns a reference: aborting\n", method);
    std::fflush(stderr);
    std::abort();
}

std::vector<std::string> Context::unimplemented() const {
    std::lock_guard<std::mutex> lock(mu_);
    return unimplemented_;
}

}  // namespace TRTB_FAKE
}  // namespace trtb
