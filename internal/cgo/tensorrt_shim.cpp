//go:build tensorrt

// tensorrt_shim.cpp: the TensorRT backend behind trtb.h, for TensorRT 10.x and 11.x.
//
// Compiled only with the Go build tag "tensorrt", against NVIDIA's public headers (NvInfer.h,
// NvOnnxParser.h) and the CUDA runtime header, whose folders come from the environment
// (CGO_CPPFLAGS or CGO_CXXFLAGS, see docs/tensorrt.md); linked with the flags in
// native_tensorrt.go. It behaves like the simulated builder: builder callbacks only copy events
// into the build's EventQueue, stepComplete returns false once cancel is requested, and every
// failure is a trtb_status with one line of text.
//
// Ownership and threading rules:
//   - A TensorRTBuild owns its Logger, ErrorRecorder and ProgressMonitor as members. Every
//     TensorRT object (builder, network, parser, config, timing cache, plan memory) is created
//     inside run() and deleted there, in reverse order of creation, before run() returns. So the
//     callbacks outlive every object that can call them, as TensorRT requires, and no builder
//     thread is left running when run() closes the queue.
//   - run() is called on one OS thread, which the Go side locks for the call: cudaSetDevice
//     selects the device for that thread, and TensorRT builds on it.
//   - TensorRT calls the monitor, the logger and the error recorder from its own threads, several
//     at once. They copy the text they are given (it is valid only during the call), take one
//     short lock, and return; they never block on the drainer, never call Go and never throw.
//   - TensorRT may keep the logger of the first builder as its process-wide logger while any
//     builder lives, so a process runs at most one TensorRT build at a time (the worker runs
//     one build per process).
//   - Plugin libraries are loaded with dlopen and stay loaded for the life of the process: the
//     plugin registry keeps pointers into them. Loading one runs its code.
//   - No TensorRT enum value crosses trtb.h: options arrive as trtbuild's own enums and are
//     mapped to TensorRT names here, because TensorRT 11 renumbered BuilderFlag and
//     NetworkDefinitionCreationFlag.
//   - Every function the rest of the package calls (make_tensorrt_build, tensorrt_available,
//     tensorrt_version, TensorRTBuild::run) catches every exception.

#include "trtb_internal.hpp"

#include <NvInfer.h>
#include <NvOnnxParser.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#if !defined(NV_TENSORRT_MAJOR) || NV_TENSORRT_MAJOR < 10
#error "the TensorRT backend needs the headers of TensorRT 10 or newer"
#endif

// TRTB_TRT_AT_LEAST is true when the headers are of TensorRT major.minor or newer.
#define TRTB_TRT_AT_LEAST(major, minor) \
    (NV_TENSORRT_MAJOR > (major) || (NV_TENSORRT_MAJOR == (major) && NV_TENSORRT_MINOR >= (minor)))

// API that appeared during 10.x. Each is checked against the public headers of the release
// named (NVIDIA/TensorRT tags).
#define TRTB_HAS_TIMING_CACHE_KEYS TRTB_TRT_AT_LEAST(10, 8)         // ITimingCache::queryKeys
#define TRTB_HAS_SAME_COMPUTE_CAPABILITY TRTB_TRT_AT_LEAST(10, 9)   // kSAME_COMPUTE_CAPABILITY
#define TRTB_HAS_SHAPE_VALUES_V2 TRTB_TRT_AT_LEAST(10, 11)          // setShapeValuesV2 (int64)
#define TRTB_HAS_STREAM_WRITER TRTB_TRT_AT_LEAST(10, 13)            // buildSerializedNetworkToStream
// TensorRT 11 removed the precision builder flags and weak typing.
#define TRTB_HAS_PRECISION_FLAGS (NV_TENSORRT_MAJOR < 11)

static_assert(TRTB_MAX_DIMS == nvinfer1::Dims::MAX_DIMS, "trtb_shape must hold TensorRT's largest rank");

namespace trtb {
namespace {

using nvinfer1::BuilderFlag;
using Severity = nvinfer1::ILogger::Severity;

// kCompiledVersion is the version of the headers, NV_TENSORRT_VERSION (major*10000+minor*100+patch).
constexpr int32_t kCompiledVersion = static_cast<int32_t>(NV_TENSORRT_VERSION);

// kMaxListed bounds how many recorded errors a failure message quotes.
constexpr size_t kMaxListed = 8;

// ---------------------------------------------------------------------------------------------
// Text helpers.

// Version is a decoded NV_TENSORRT_VERSION, decoded like internal/trt.FromInt: TensorRT 10 and
// newer use major*10000+minor*100+patch, TensorRT 8 and older major*1000+minor*100+patch.
struct Version {
    int32_t major = 0, minor = 0, patch = 0;
};

Version decode_version(int32_t v) {
    Version out;
    if (v >= 10000) {
        out.major = v / 10000;
        out.minor = v / 100 % 100;
    } else {
        out.major = v / 1000;
        out.minor = v / 100 % 10;
    }
    out.patch = v % 100;
    return out;
}

std::string version_text(int32_t v) {
    const Version d = decode_version(v);
    return std::to_string(d.major) + "." + std::to_string(d.minor) + "." + std::to_string(d.patch);
}

// check_versions applies the rule of internal/trt.CheckVersions to the loaded library, with
// the same messages: a different major, or an older minor, is a mismatch.
bool check_versions(int32_t loaded, std::string* message) {
    if (loaded <= 0) {
        *message = "loaded TensorRT library version: libnvinfer reported version " +
                   std::to_string(loaded) + ", not a version number";
        return false;
    }
    const Version c = decode_version(kCompiledVersion);
    const Version l = decode_version(loaded);
    if (c.major != l.major) {
        *message = "TensorRT version mismatch: trtbuild was compiled against TensorRT " +
                   version_text(kCompiledVersion) + " but loaded libnvinfer " + version_text(loaded) +
                   "; put the TensorRT " + std::to_string(c.major) +
                   " libraries first on LD_LIBRARY_PATH or rebuild trtbuild with the TensorRT " +
                   std::to_string(l.major) + " headers";
        return false;
    }
    if (l.minor < c.minor) {
        *message = "TensorRT version mismatch: loaded libnvinfer " + version_text(loaded) +
                   " is older than the TensorRT " + version_text(kCompiledVersion) +
                   " headers trtbuild was compiled against; install TensorRT " +
                   std::to_string(c.major) + "." + std::to_string(c.minor) +
                   " or newer, or rebuild trtbuild with the TensorRT " + std::to_string(l.major) +
                   "." + std::to_string(l.minor) + " headers";
        return false;
    }
    return true;
}

// one_line turns a message from TensorRT into one line: line breaks and tabs become spaces,
// and spaces at either end go.
std::string one_line(const char* text) {
    std::string s = text != nullptr ? text : "";
    for (char& ch : s) {
        if (ch == '\n' || ch == '\r' || ch == '\t') {
            ch = ' ';
        }
    }
    const size_t first = s.find_first_not_of(' ');
    if (first == std::string::npos) {
        return "";
    }
    const size_t last = s.find_last_not_of(' ');
    return s.substr(first, last - first + 1);
}

// join_listed joins texts with "; ", quoting at most kMaxListed of them.
std::string join_listed(const std::vector<std::string>& texts) {
    std::string out;
    for (size_t i = 0; i < texts.size() && i < kMaxListed; ++i) {
        if (!out.empty()) {
            out += "; ";
        }
        out += texts[i];
    }
    if (texts.size() > kMaxListed) {
        out += "; and " + std::to_string(texts.size() - kMaxListed) + " more";
    }
    return out;
}

// dims_text formats dimensions the way the shape flags take them: 1x3x224x224, or "scalar".
std::string dims_text(const int64_t* d, int32_t n) {
    if (n == 0) {
        return "scalar";
    }
    std::string out;
    for (int32_t i = 0; i < n; ++i) {
        if (i > 0) {
            out += 'x';
        }
        out += d[i] < 0 ? std::string("?") : std::to_string(d[i]);
    }
    return out;
}

std::string errno_text(int err) {
    return std::strerror(err);
}

// copy_text copies the NUL-terminated or full src (of src_size bytes) into dst (of dst_size
// bytes), cut to fit and always NUL-terminated.
void copy_text(char* dst, size_t dst_size, const char* src, size_t src_size) {
    size_t n = 0;
    while (n < src_size && n + 1 < dst_size && src[n] != '\0') {
        ++n;
    }
    std::memcpy(dst, src, n);
    dst[n] = '\0';
}

// ---------------------------------------------------------------------------------------------
// Enum mappings. TensorRT's values stay on this side of trtb.h.

int32_t to_trtb_severity(Severity s) {
    switch (s) {
        case Severity::kINTERNAL_ERROR:
            return TRTB_SEVERITY_INTERNAL_ERROR;
        case Severity::kERROR:
            return TRTB_SEVERITY_ERROR;
        case Severity::kWARNING:
            return TRTB_SEVERITY_WARNING;
        case Severity::kINFO:
            return TRTB_SEVERITY_INFO;
        case Severity::kVERBOSE:
            return TRTB_SEVERITY_VERBOSE;
    }
    return TRTB_SEVERITY_VERBOSE;
}

Severity to_trt_severity(int32_t s) {
    switch (s) {
        case TRTB_SEVERITY_INTERNAL_ERROR:
            return Severity::kINTERNAL_ERROR;
        case TRTB_SEVERITY_ERROR:
            return Severity::kERROR;
        case TRTB_SEVERITY_WARNING:
            return Severity::kWARNING;
        case TRTB_SEVERITY_INFO:
            return Severity::kINFO;
        default:
            return Severity::kVERBOSE;
    }
}

// parser_code_name names an ONNX parser error code as the parser's enum does, without the k.
std::string parser_code_name(nvonnxparser::ErrorCode code) {
    using nvonnxparser::ErrorCode;
    switch (code) {
        case ErrorCode::kSUCCESS:
            return "SUCCESS";
        case ErrorCode::kINTERNAL_ERROR:
            return "INTERNAL_ERROR";
        case ErrorCode::kMEM_ALLOC_FAILED:
            return "MEM_ALLOC_FAILED";
        case ErrorCode::kMODEL_DESERIALIZE_FAILED:
            return "MODEL_DESERIALIZE_FAILED";
        case ErrorCode::kINVALID_VALUE:
            return "INVALID_VALUE";
        case ErrorCode::kINVALID_GRAPH:
            return "INVALID_GRAPH";
        case ErrorCode::kINVALID_NODE:
            return "INVALID_NODE";
        case ErrorCode::kUNSUPPORTED_GRAPH:
            return "UNSUPPORTED_GRAPH";
        case ErrorCode::kUNSUPPORTED_NODE:
            return "UNSUPPORTED_NODE";
        case ErrorCode::kUNSUPPORTED_NODE_ATTR:
            return "UNSUPPORTED_NODE_ATTR";
        case ErrorCode::kUNSUPPORTED_NODE_INPUT:
            return "UNSUPPORTED_NODE_INPUT";
        case ErrorCode::kUNSUPPORTED_NODE_DATATYPE:
            return "UNSUPPORTED_NODE_DATATYPE";
        case ErrorCode::kUNSUPPORTED_NODE_DYNAMIC:
            return "UNSUPPORTED_NODE_DYNAMIC";
        case ErrorCode::kUNSUPPORTED_NODE_SHAPE:
            return "UNSUPPORTED_NODE_SHAPE";
        case ErrorCode::kREFIT_FAILED:
            return "REFIT_FAILED";
    }
    return "error code " + std::to_string(static_cast<int32_t>(code));
}

// ---------------------------------------------------------------------------------------------
// Callbacks.

// Logger forwards TensorRT's log lines to the build's queue, up to the severity asked for, and
// remembers the last error lines whatever the filter, for failure messages (TensorRT logs
// errors instead of recording them when no error recorder is attached yet).
//
// Threading: log may be called from any number of TensorRT threads at once; it copies the text
// and takes two short locks (its own and the queue's). note may be called by the run thread.
class Logger final : public nvinfer1::ILogger {
public:
    Logger(EventQueue& queue, int32_t max_severity) : queue_(queue), max_severity_(max_severity) {}

    void log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept override {
        note(to_trtb_severity(severity), msg);
    }

    // note queues a line of trtbuild's own (same filter as TensorRT's lines).
    void note(int32_t severity, const char* msg) noexcept {
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

    void note(int32_t severity, const std::string& msg) noexcept { note(severity, msg.c_str()); }

    // errors returns the last error lines, oldest first.
    std::vector<std::string> errors() const {
        std::lock_guard<std::mutex> lock(mu_);
        return std::vector<std::string>(errors_.begin(), errors_.end());
    }

    // parser_verbosity is the severity handed to IParser::parseFromFile: the parser prints up
    // to it through this logger.
    int parser_verbosity() const { return static_cast<int>(to_trt_severity(max_severity_)); }

private:
    EventQueue& queue_;
    const int32_t max_severity_;
    mutable std::mutex mu_;
    std::deque<std::string> errors_;  // guarded by mu_; at most kMaxListed
};

// ErrorRecorder collects the errors TensorRT reports while the builder and the objects made from
// it live; their texts make the failure message of a failed build.
//
// Threading and ownership: every method may be called from several TensorRT threads at once
// (one mutex guards the list; the reference count is atomic). TensorRT takes a reference
// (incRefCount) when setErrorRecorder attaches it and drops it (decRefCount) when the builder
// is deleted; the recorder is a member of the build, which outlives the builder, so the count
// is back to zero before it is destroyed. A pointer from getErrorDesc stays valid until clear
// or drop_since removes that error; a deque never moves the elements it keeps.
class ErrorRecorder final : public nvinfer1::IErrorRecorder {
public:
    int32_t getNbErrors() const noexcept override {
        std::lock_guard<std::mutex> lock(mu_);
        return static_cast<int32_t>(entries_.size());
    }

    nvinfer1::ErrorCode getErrorCode(int32_t index) const noexcept override {
        std::lock_guard<std::mutex> lock(mu_);
        if (index < 0 || static_cast<size_t>(index) >= entries_.size()) {
            return nvinfer1::ErrorCode::kINVALID_ARGUMENT;
        }
        return entries_[static_cast<size_t>(index)].code;
    }

    ErrorDesc getErrorDesc(int32_t index) const noexcept override {
        std::lock_guard<std::mutex> lock(mu_);
        if (index < 0 || static_cast<size_t>(index) >= entries_.size()) {
            return "error index out of range";
        }
        return entries_[static_cast<size_t>(index)].desc.c_str();
    }

    bool hasOverflowed() const noexcept override {
        std::lock_guard<std::mutex> lock(mu_);
        return overflowed_;
    }

    void clear() noexcept override {
        std::lock_guard<std::mutex> lock(mu_);
        entries_.clear();
        overflowed_ = false;
    }

    // reportError keeps a copy of desc (valid only during the call) and says the error is fatal,
    // as NVIDIA's reference recorder does: a build that hit an error is not worth continuing.
    bool reportError(nvinfer1::ErrorCode code, ErrorDesc desc) noexcept override {
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

    RefCount incRefCount() noexcept override { return ++refs_; }
    RefCount decRefCount() noexcept override { return --refs_; }

    // size returns how many errors are recorded, a mark for texts_since and drop_since.
    size_t size() const {
        std::lock_guard<std::mutex> lock(mu_);
        return entries_.size();
    }

    // texts_since returns the texts of the errors recorded after mark.
    std::vector<std::string> texts_since(size_t mark) const {
        std::lock_guard<std::mutex> lock(mu_);
        std::vector<std::string> out;
        for (size_t i = mark; i < entries_.size(); ++i) {
            out.push_back(entries_[i].desc);
        }
        return out;
    }

    // drop_since forgets the errors recorded after mark, once the shim has handled them.
    void drop_since(size_t mark) {
        std::lock_guard<std::mutex> lock(mu_);
        while (entries_.size() > mark) {
            entries_.pop_back();
        }
    }

    // allocation_failed tells whether TensorRT recorded a failed allocation.
    bool allocation_failed() const {
        std::lock_guard<std::mutex> lock(mu_);
        for (const Entry& e : entries_) {
            if (e.code == nvinfer1::ErrorCode::kFAILED_ALLOCATION) {
                return true;
            }
        }
        return false;
    }

private:
    struct Entry {
        nvinfer1::ErrorCode code;
        std::string desc;
    };
    static constexpr size_t kMaxErrors = 256;

    mutable std::mutex mu_;
    std::deque<Entry> entries_;  // guarded by mu_
    bool overflowed_ = false;    // guarded by mu_
    std::atomic<RefCount> refs_{0};
};

// ProgressMonitor turns TensorRT's progress callbacks into queued events. A phase whose parent
// is unknown is queued as it is; the Go side attaches it to the root.
//
// Threading: TensorRT calls it from several builder threads at once; each call copies the names
// into the queue under one short lock. stepComplete returns false once cancel was requested,
// which is the only way to stop a TensorRT build.
class ProgressMonitor final : public nvinfer1::IProgressMonitor {
public:
    explicit ProgressMonitor(Build& build) : build_(build) {}

    void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override {
        try {
            build_.queue.push_phase_start(phaseName != nullptr ? phaseName : "", parentPhase, nbSteps);
        } catch (...) {
        }
    }

    bool stepComplete(char const* phaseName, int32_t step) noexcept override {
        try {
            return build_.step_complete(phaseName != nullptr ? phaseName : "", step);
        } catch (...) {
            return !build_.cancel_requested();
        }
    }

    void phaseFinish(char const* phaseName) noexcept override {
        try {
            build_.queue.push_phase_finish(phaseName != nullptr ? phaseName : "");
        } catch (...) {
        }
    }

private:
    Build& build_;
};

// write_all writes n bytes to fd, resuming after partial writes and EINTR. On failure it returns
// false with *err set to errno.
bool write_all(int fd, const void* data, uint64_t n, int* err) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const size_t chunk = n > (uint64_t{1} << 30) ? (size_t{1} << 30) : static_cast<size_t>(n);
        const ssize_t w = ::write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            *err = errno;
            return false;
        }
        if (w == 0) {
            *err = EIO;
            return false;
        }
        p += w;
        n -= static_cast<uint64_t>(w);
    }
    return true;
}

#if TRTB_HAS_STREAM_WRITER
// FdWriter streams the plan into the caller's file as TensorRT serializes it, so a plan of
// several gigabytes is never held in memory as a whole. TensorRT calls write from the thread
// that called buildSerializedNetworkToStream, one call at a time, in order; it never destroys
// the writer.
class FdWriter final : public nvinfer1::IStreamWriter {
public:
    explicit FdWriter(int fd) : fd_(fd) {}

    int64_t write(void const* data, int64_t nbBytes) override {
        if (nbBytes < 0 || (data == nullptr && nbBytes > 0) || error_ != 0) {
            return -1;
        }
        if (!write_all(fd_, data, static_cast<uint64_t>(nbBytes), &error_)) {
            return -1;
        }
        written_ += static_cast<uint64_t>(nbBytes);
        return nbBytes;
    }

    uint64_t written() const { return written_; }
    int error() const { return error_; }

private:
    int fd_;
    uint64_t written_ = 0;
    int error_ = 0;
};
#endif

// ---------------------------------------------------------------------------------------------
// Options.

// Shape is one input's min/opt/max, copied out of trtb_shape.
struct Shape {
    std::string input;
    int32_t nb_dims = 0;
    int64_t min[TRTB_MAX_DIMS] = {};
    int64_t opt[TRTB_MAX_DIMS] = {};
    int64_t max[TRTB_MAX_DIMS] = {};
};

// Settings is everything of trtb_options the shim keeps, owned: trtb_options need not outlive
// trtb_build_create.
struct Settings {
    std::string model_path;
    int32_t plan_fd = -1;
    int32_t log_severity = TRTB_SEVERITY_WARNING;
    int32_t device = 0;
    uint32_t precision = 0;
    uint32_t flags = 0;
    int32_t opt_level = -1;
    int32_t max_aux_streams = -1;
    int32_t hardware_compat = TRTB_HARDWARE_COMPAT_NONE;
    uint64_t workspace_bytes = 0;
    std::vector<std::vector<Shape>> profiles;
    std::vector<std::string> plugin_paths;
    std::string timing_cache;
};

constexpr uint32_t kKnownPrecision =
    TRTB_PRECISION_FP16 | TRTB_PRECISION_BF16 | TRTB_PRECISION_INT8 | TRTB_PRECISION_FP8;
constexpr uint32_t kKnownFlags = TRTB_FLAG_NO_TF32 | TRTB_FLAG_REFIT | TRTB_FLAG_STRIP_WEIGHTS |
                                 TRTB_FLAG_VERSION_COMPATIBLE | TRTB_FLAG_EXCLUDE_LEAN_RUNTIME |
                                 TRTB_FLAG_SPARSE_WEIGHTS | TRTB_FLAG_DISABLE_TIMING_CACHE |
                                 TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS;

#if !TRTB_HAS_PRECISION_FLAGS
// precision_names names precision bits as their command-line flags.
std::string precision_names(uint32_t bits) {
    std::string out;
    const std::pair<uint32_t, const char*> names[] = {{TRTB_PRECISION_FP16, "--fp16"},
                                                      {TRTB_PRECISION_BF16, "--bf16"},
                                                      {TRTB_PRECISION_INT8, "--int8"},
                                                      {TRTB_PRECISION_FP8, "--fp8"}};
    for (const auto& n : names) {
        if ((bits & n.first) != 0) {
            if (!out.empty()) {
                out += ", ";
            }
            out += n.second;
        }
    }
    return out;
}
#endif

// copy_settings checks options and copies them into *out. On a bad option it returns its code
// and sets *message.
int32_t copy_settings(const trtb_options& o, Settings* out, std::string* message) {
    auto bad = [message](int32_t code, std::string text) {
        *message = std::move(text);
        return code;
    };
    if (o.size < sizeof(trtb_options)) {
        return bad(TRTB_ERR_INVALID_ARGUMENT,
                   "build options are " + std::to_string(o.size) + " bytes, want " +
                       std::to_string(sizeof(trtb_options)) + "; the Go side and the builder disagree on trtb.h");
    }
    if (o.model_path == nullptr || o.model_path[0] == '\0') {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "no model path given");
    }
    if (o.plan_fd < 0) {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "no plan file descriptor given");
    }
    if (o.log_severity < TRTB_SEVERITY_INTERNAL_ERROR || o.log_severity > TRTB_SEVERITY_VERBOSE) {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "log severity " + std::to_string(o.log_severity) +
                                                  " is out of range 0..4");
    }
    if (o.device < 0) {
        return bad(TRTB_ERR_INVALID_ARGUMENT,
                   "--device " + std::to_string(o.device) + " is negative; CUDA devices are numbered from 0");
    }
    if ((o.precision & ~kKnownPrecision) != 0) {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "unknown precision bits " + std::to_string(o.precision));
    }
    if ((o.flags & ~kKnownFlags) != 0) {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "unknown builder flag bits " + std::to_string(o.flags));
    }
#if !TRTB_HAS_PRECISION_FLAGS
    if (o.precision != 0) {
        return bad(TRTB_ERR_UNSUPPORTED,
                   precision_names(o.precision) + " cannot be builder flags on TensorRT " +
                       std::to_string(NV_TENSORRT_MAJOR) +
                       ", which builds every network strongly typed; convert the model (ModelOpt AutoCast for "
                       "fp16/bf16, Q/DQ quantization for int8/fp8) and build it without these flags");
    }
#endif
    if (o.opt_level < -1 || o.opt_level > 5) {
        return bad(TRTB_ERR_INVALID_ARGUMENT,
                   "--opt-level " + std::to_string(o.opt_level) + " is out of range; use 0 to 5");
    }
    if (o.max_aux_streams < -1) {
        return bad(TRTB_ERR_INVALID_ARGUMENT,
                   "--max-aux-streams " + std::to_string(o.max_aux_streams) + " is negative; use 0 or more");
    }
    switch (o.hardware_compat) {
        case TRTB_HARDWARE_COMPAT_NONE:
        case TRTB_HARDWARE_COMPAT_AMPERE_PLUS:
            break;
        case TRTB_HARDWARE_COMPAT_SAME_COMPUTE_CAPABILITY:
#if !TRTB_HAS_SAME_COMPUTE_CAPABILITY
            return bad(TRTB_ERR_UNSUPPORTED,
                       "--hardware-compat same-compute-capability needs TensorRT 10.9 or newer; this trtbuild "
                       "was compiled against TensorRT " + version_text(kCompiledVersion));
#else
            break;
#endif
        default:
            return bad(TRTB_ERR_INVALID_ARGUMENT,
                       "unknown hardware compatibility level " + std::to_string(o.hardware_compat));
    }
    if ((o.flags & TRTB_FLAG_EXCLUDE_LEAN_RUNTIME) != 0 && (o.flags & TRTB_FLAG_VERSION_COMPATIBLE) == 0) {
        return bad(TRTB_ERR_INVALID_ARGUMENT,
                   "excluding the lean runtime only applies to version-compatible engines; add --version-compatible");
    }
    if ((o.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0 && (o.flags & TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS) != 0) {
        return bad(TRTB_ERR_INVALID_ARGUMENT,
                   "failing on timing cache misses needs a timing cache; do not disable the timing cache");
    }
    if (o.nb_profiles < 0 || (o.nb_profiles > 0 && o.profiles == nullptr)) {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "optimization profiles are missing");
    }
    if (o.nb_plugin_paths < 0 || (o.nb_plugin_paths > 0 && o.plugin_paths == nullptr)) {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "plugin paths are missing");
    }
    if (o.timing_cache_size > 0 && o.timing_cache == nullptr) {
        return bad(TRTB_ERR_INVALID_ARGUMENT, "timing cache bytes are missing");
    }

    Settings s;
    s.model_path = o.model_path;
    s.plan_fd = o.plan_fd;
    s.log_severity = o.log_severity;
    s.device = o.device;
    s.precision = o.precision;
    s.flags = o.flags;
    s.opt_level = o.opt_level;
    s.max_aux_streams = o.max_aux_streams;
    s.hardware_compat = o.hardware_compat;
    s.workspace_bytes = o.workspace_bytes;
    for (int32_t p = 0; p < o.nb_profiles; ++p) {
        const trtb_profile& prof = o.profiles[p];
        if (prof.nb_shapes < 0 || (prof.nb_shapes > 0 && prof.shapes == nullptr)) {
            return bad(TRTB_ERR_INVALID_ARGUMENT, "profile " + std::to_string(p) + ": shapes are missing");
        }
        std::vector<Shape> shapes;
        for (int32_t i = 0; i < prof.nb_shapes; ++i) {
            const trtb_shape& in = prof.shapes[i];
            if (in.input == nullptr || in.input[0] == '\0') {
                return bad(TRTB_ERR_INVALID_ARGUMENT,
                           "profile " + std::to_string(p) + ": a shape has no input name");
            }
            if (in.nb_dims < 0 || in.nb_dims > TRTB_MAX_DIMS) {
                return bad(TRTB_ERR_INVALID_ARGUMENT,
                           std::string("input ") + in.input + ": rank " + std::to_string(in.nb_dims) +
                               " is out of range 0.." + std::to_string(TRTB_MAX_DIMS));
            }
            Shape sh;
            sh.input = in.input;
            sh.nb_dims = in.nb_dims;
            for (int32_t d = 0; d < in.nb_dims; ++d) {
                if (in.min[d] < 0 || in.min[d] > in.opt[d] || in.opt[d] > in.max[d]) {
                    return bad(TRTB_ERR_INVALID_ARGUMENT,
                               std::string("input ") + in.input + ": min " + dims_text(in.min, in.nb_dims) +
                                   ", opt " + dims_text(in.opt, in.nb_dims) + ", max " +
                                   dims_text(in.max, in.nb_dims) +
                                   " must satisfy 0 <= min <= opt <= max in every dimension");
                }
                sh.min[d] = in.min[d];
                sh.opt[d] = in.opt[d];
                sh.max[d] = in.max[d];
            }
            shapes.push_back(std::move(sh));
        }
        s.profiles.push_back(std::move(shapes));
    }
    for (int32_t i = 0; i < o.nb_plugin_paths; ++i) {
        if (o.plugin_paths[i] == nullptr || o.plugin_paths[i][0] == '\0') {
            return bad(TRTB_ERR_INVALID_ARGUMENT, "a plugin path is empty");
        }
        s.plugin_paths.emplace_back(o.plugin_paths[i]);
    }
    if (o.timing_cache_size > 0) {
        s.timing_cache.assign(static_cast<const char*>(o.timing_cache), static_cast<size_t>(o.timing_cache_size));
    }
    *out = std::move(s);
    return TRTB_OK;
}

// ---------------------------------------------------------------------------------------------
// The build.

// Objects holds the TensorRT objects of one run, declared in order of creation: members are
// destroyed in reverse order, so the timing cache and config go before the parser, the parser
// before the network it fills, and everything before the builder.
struct Objects {
    std::unique_ptr<nvinfer1::IBuilder> builder;
    std::unique_ptr<nvinfer1::INetworkDefinition> network;
    std::unique_ptr<nvonnxparser::IParser> parser;
    std::unique_ptr<nvinfer1::IBuilderConfig> config;
    std::unique_ptr<nvinfer1::ITimingCache> cache;
};

// Input describes one network input after parsing.
struct Input {
    std::string name;
    nvinfer1::Dims dims;
    bool shape_tensor = false;  // its values, not its dimensions, shape the network
    bool dynamic = false;       // a profile must give it a shape (or shape values)
    int32_t nb_values = 0;      // for a shape tensor: how many values it holds
};

// Outcome is a failure: a status code and its one-line message.
struct Outcome {
    int32_t code = TRTB_OK;
    std::string message;
};

Outcome ok() { return Outcome{}; }
Outcome fail(int32_t code, std::string message) { return Outcome{code, std::move(message)}; }

class TensorRTBuild final : public Build {
public:
    explicit TensorRTBuild(Settings settings)
        : s_(std::move(settings)), logger_(queue, s_.log_severity), monitor_(*this) {}

    int32_t run(trtb_result* result, trtb_status* status) override;
    int32_t merge_timing_cache(const std::string& disk, std::string* merged,
                               trtb_status* status) override;

private:
    Outcome build(trtb_result* result);
    Outcome merge(const std::string& disk, std::string* merged);
    Outcome select_device();
    Outcome load_plugins(nvinfer1::IBuilder& builder);
    Outcome parse(Objects& o);
    Outcome configure(Objects& o);
    Outcome add_profiles(Objects& o);
    Outcome attach_timing_cache(Objects& o, trtb_result* result);
    void save_timing_cache(Objects& o, bool succeeded, trtb_result* result, int64_t keys_before);
    int64_t count_cache_keys(const nvinfer1::ITimingCache* cache);

    // errors returns what TensorRT reported since mark: recorded errors, else logged ones.
    std::string errors_since(size_t mark) const;

    Settings s_;
    // The callbacks, which outlive every TensorRT object (those live inside run).
    Logger logger_;
    ErrorRecorder recorder_;
    ProgressMonitor monitor_;
};

int32_t TensorRTBuild::run(trtb_result* result, trtb_status* status) {
    // The queue closes on every path, after the TensorRT objects (and so their threads) are gone.
    QueueCloser closer{queue};

    trtb_result local{};
    if (result == nullptr) {
        result = &local;
    }
    Outcome out;
    try {
        out = build(result);
    } catch (const std::bad_alloc&) {
        out = fail(TRTB_ERR_OUT_OF_MEMORY, "host memory ran out while building the engine");
    } catch (const std::exception& e) {
        out = fail(TRTB_ERR_INTERNAL, std::string("internal error in the TensorRT backend: ") + e.what());
    } catch (...) {
        out = fail(TRTB_ERR_INTERNAL, "internal error in the TensorRT backend: unknown exception");
    }
    result->code = out.code;
    result->cancel_seen_ns = cancel_seen_ns();
    return set_status(status, out.code, out.code == TRTB_OK ? std::string() : out.message);
}

std::string TensorRTBuild::errors_since(size_t mark) const {
    std::vector<std::string> texts = recorder_.texts_since(mark);
    if (texts.empty()) {
        texts = logger_.errors();
    }
    if (texts.empty()) {
        return "TensorRT reported no error; rerun with --verbose to see its log";
    }
    return join_listed(texts);
}

Outcome TensorRTBuild::select_device() {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();  // clear this thread's last error
        return fail(TRTB_ERR_UNAVAILABLE, std::string("CUDA cannot list GPUs: ") + cudaGetErrorString(err));
    }
    if (s_.device >= count) {
        return fail(TRTB_ERR_INVALID_ARGUMENT, "--device " + std::to_string(s_.device) +
                                                   ": invalid device ordinal, CUDA sees " +
                                                   std::to_string(count) + " GPU(s) numbered from 0");
    }
    err = cudaSetDevice(s_.device);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return fail(TRTB_ERR_UNAVAILABLE, "cudaSetDevice(" + std::to_string(s_.device) +
                                              "): " + cudaGetErrorString(err));
    }
    return ok();
}

Outcome TensorRTBuild::load_plugins(nvinfer1::IBuilder& builder) {
    for (const std::string& path : s_.plugin_paths) {
        // Loading runs the library's static initializers, which register plugins that use
        // REGISTER_TENSORRT_PLUGIN. The handle is kept open for good (see the rules at the top).
        void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = dlerror();
            return fail(TRTB_ERR_INVALID_ARGUMENT,
                        "cannot load plugin library " + path + ": " + (why != nullptr ? why : "unknown error"));
        }
        // A library with TensorRT's dynamic entry points registers through the registry.
        dlerror();
        const bool dynamic = dlsym(handle, "getCreators") != nullptr || dlsym(handle, "getPluginCreators") != nullptr;
        if (dynamic) {
            const size_t mark = recorder_.size();
            if (builder.getPluginRegistry().loadLibrary(path.c_str()) == nullptr) {
                return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT could not register the plugins of plugin library " +
                                                           path + ": " + errors_since(mark));
            }
        }
        logger_.note(TRTB_SEVERITY_INFO, "loaded plugin library " + path);
    }
    return ok();
}

Outcome TensorRTBuild::parse(Objects& o) {
    {
        const int fd = ::open(s_.model_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return fail(TRTB_ERR_IO, "cannot read model " + s_.model_path + ": " + errno_text(errno));
        }
        struct stat st {};
        const int rc = ::fstat(fd, &st);
        const int err = errno;
        ::close(fd);
        if (rc != 0) {
            return fail(TRTB_ERR_IO, "cannot read model " + s_.model_path + ": " + errno_text(err));
        }
        if (S_ISDIR(st.st_mode)) {
            return fail(TRTB_ERR_IO, "cannot read model " + s_.model_path + ": it is a directory; give the .onnx file");
        }
    }
    o.parser.reset(nvonnxparser::createParser(*o.network, logger_));
    if (o.parser == nullptr) {
        return fail(TRTB_ERR_UNAVAILABLE, "TensorRT could not create an ONNX parser: " + errors_since(0));
    }
    // parseFromFile, not parse: it resolves external data files next to the model.
    if (o.parser->parseFromFile(s_.model_path.c_str(), logger_.parser_verbosity())) {
        return ok();
    }
    std::vector<std::string> errors;
    const int n = o.parser->getNbErrors();
    for (int i = 0; i < n; ++i) {
        const nvonnxparser::IParserError* e = o.parser->getError(i);
        if (e == nullptr) {
            continue;
        }
        std::string line;
        if (e->node() >= 0) {
            const std::string name = one_line(e->nodeName());
            line = "node " + std::to_string(e->node()) + " (" + (name.empty() ? "unnamed" : name) + ", " +
                   one_line(e->nodeOperator()) + "): ";
        }
        line += one_line(e->desc()) + " (" + parser_code_name(e->code()) + ")";
        errors.push_back(std::move(line));
    }
    std::string message = "cannot parse " + s_.model_path + ": ";
    if (errors.empty()) {
        message += errors_since(0);
    } else {
        // Every error, in the parser's order; set_status cuts what does not fit.
        for (size_t i = 0; i < errors.size(); ++i) {
            message += (i > 0 ? "; " : "") + errors[i];
        }
    }
    return fail(TRTB_ERR_PARSE, message);
}

Outcome TensorRTBuild::configure(Objects& o) {
    nvinfer1::IBuilderConfig& config = *o.config;
    const size_t mark = recorder_.size();

#if TRTB_HAS_PRECISION_FLAGS
    // Deprecated since 10.12 and removed in 11: the Go side prints the deprecation notice.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    if ((s_.precision & TRTB_PRECISION_FP16) != 0) {
        config.setFlag(BuilderFlag::kFP16);
    }
    if ((s_.precision & TRTB_PRECISION_BF16) != 0) {
        config.setFlag(BuilderFlag::kBF16);
    }
    if ((s_.precision & TRTB_PRECISION_INT8) != 0) {
        config.setFlag(BuilderFlag::kINT8);
    }
    if ((s_.precision & TRTB_PRECISION_FP8) != 0) {
        config.setFlag(BuilderFlag::kFP8);
    }
#pragma GCC diagnostic pop
#endif

    if ((s_.flags & TRTB_FLAG_NO_TF32) != 0) {
        config.clearFlag(BuilderFlag::kTF32);
    }
    if ((s_.flags & TRTB_FLAG_REFIT) != 0) {
        config.setFlag(BuilderFlag::kREFIT);
    }
    if ((s_.flags & TRTB_FLAG_STRIP_WEIGHTS) != 0) {
        config.setFlag(BuilderFlag::kSTRIP_PLAN);  // implies kREFIT_IDENTICAL
    }
    if ((s_.flags & TRTB_FLAG_VERSION_COMPATIBLE) != 0) {
        config.setFlag(BuilderFlag::kVERSION_COMPATIBLE);
    }
    if ((s_.flags & TRTB_FLAG_EXCLUDE_LEAN_RUNTIME) != 0) {
        config.setFlag(BuilderFlag::kEXCLUDE_LEAN_RUNTIME);
    }
    if ((s_.flags & TRTB_FLAG_SPARSE_WEIGHTS) != 0) {
        config.setFlag(BuilderFlag::kSPARSE_WEIGHTS);
    }
    if ((s_.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0) {
        config.setFlag(BuilderFlag::kDISABLE_TIMING_CACHE);
    }
    if ((s_.flags & TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS) != 0) {
        config.setFlag(BuilderFlag::kERROR_ON_TIMING_CACHE_MISS);
    }

    if (s_.workspace_bytes > 0) {
        config.setMemoryPoolLimit(nvinfer1::MemoryPoolType::kWORKSPACE, static_cast<size_t>(s_.workspace_bytes));
    }
    if (s_.opt_level >= 0) {
        config.setBuilderOptimizationLevel(s_.opt_level);
    }
    if (s_.max_aux_streams >= 0) {
#if NV_TENSORRT_MAJOR >= 11
        if (!config.setMaxAuxStreams(s_.max_aux_streams)) {
            return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused --max-aux-streams " +
                                                       std::to_string(s_.max_aux_streams) + ": " + errors_since(mark));
        }
#else
        config.setMaxAuxStreams(s_.max_aux_streams);  // returns void before 11.0
#endif
    }
    switch (s_.hardware_compat) {
        case TRTB_HARDWARE_COMPAT_AMPERE_PLUS:
            config.setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel::kAMPERE_PLUS);
            break;
#if TRTB_HAS_SAME_COMPUTE_CAPABILITY
        case TRTB_HARDWARE_COMPAT_SAME_COMPUTE_CAPABILITY:
            config.setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel::kSAME_COMPUTE_CAPABILITY);
            break;
#endif
        default:
            break;  // kNONE, TensorRT's default; others were refused by copy_settings
    }

    // A version-compatible engine carries the plugin libraries the parser used (trtexec does the
    // same), unless the lean runtime is left out, in which case the application provides them.
    if ((s_.flags & TRTB_FLAG_VERSION_COMPATIBLE) != 0) {
        int64_t nb_libs = 0;
        char const* const* libs = o.parser->getUsedVCPluginLibraries(nb_libs);
        if (libs != nullptr && nb_libs > 0) {
            for (int64_t i = 0; i < nb_libs; ++i) {
                const size_t lib_mark = recorder_.size();
                if (o.builder->getPluginRegistry().loadLibrary(libs[i]) == nullptr) {
                    // Already registered (for example through --plugins) is fine; say why anyway.
                    logger_.note(TRTB_SEVERITY_WARNING, std::string("plugin library ") + libs[i] +
                                                            " of the version-compatible engine was not loaded again: " +
                                                            errors_since(lib_mark));
                    recorder_.drop_since(lib_mark);
                } else {
                    logger_.note(TRTB_SEVERITY_INFO,
                                 std::string("version-compatible engine uses plugin library ") + libs[i]);
                }
            }
            if ((s_.flags & TRTB_FLAG_EXCLUDE_LEAN_RUNTIME) == 0) {
                config.setPluginsToSerialize(libs, static_cast<int32_t>(nb_libs));
            }
        }
    }

    config.setProgressMonitor(&monitor_);

    // TensorRT reports a refused setting to the error recorder and ignores the call.
    if (recorder_.size() > mark) {
        return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused a build option: " + errors_since(mark));
    }
    return ok();
}

// set_shape_values gives a shape tensor input its values for one selector.
bool set_shape_values(nvinfer1::IOptimizationProfile& profile, const char* input,
                      nvinfer1::OptProfileSelector select, const int64_t* values, int32_t n) {
#if TRTB_HAS_SHAPE_VALUES_V2
    return profile.setShapeValuesV2(input, select, values, n);
#else
    std::vector<int32_t> narrow(values, values + n);
    return profile.setShapeValues(input, select, narrow.data(), n);
#endif
}

Outcome TensorRTBuild::add_profiles(Objects& o) {
    nvinfer1::INetworkDefinition& network = *o.network;
    std::vector<Input> inputs;
    bool any_dynamic = false;
    for (int32_t i = 0; i < network.getNbInputs(); ++i) {
        nvinfer1::ITensor* t = network.getInput(i);
        if (t == nullptr) {
            continue;
        }
        Input in;
        in.name = t->getName() != nullptr ? t->getName() : "";
        in.dims = t->getDimensions();
        in.shape_tensor = t->isShapeTensor();
        for (int32_t d = 0; d < in.dims.nbDims; ++d) {
            in.dynamic = in.dynamic || in.dims.d[d] < 0;
        }
        if (in.shape_tensor) {
            in.dynamic = true;
            in.nb_values = in.dims.nbDims == 0 ? 1 : static_cast<int32_t>(in.dims.d[0]);
        }
        any_dynamic = any_dynamic || in.dynamic;
        inputs.push_back(std::move(in));
    }
    auto input_names = [&inputs]() {
        std::string names;
        for (const Input& in : inputs) {
            names += (names.empty() ? "" : ", ") + in.name;
        }
        return names.empty() ? std::string("none") : names;
    };
    auto find = [&inputs](const std::string& name) -> const Input* {
        for (const Input& in : inputs) {
            if (in.name == name) {
                return &in;
            }
        }
        return nullptr;
    };

    // Check every given shape against the network first.
    for (size_t p = 0; p < s_.profiles.size(); ++p) {
        for (const Shape& sh : s_.profiles[p]) {
            const Input* in = find(sh.input);
            if (in == nullptr) {
                return fail(TRTB_ERR_INVALID_ARGUMENT, "the model has no input named " + sh.input +
                                                           "; its inputs are: " + input_names());
            }
            if (in->shape_tensor) {
                if (sh.nb_dims != in->nb_values) {
                    return fail(TRTB_ERR_INVALID_ARGUMENT,
                                "input " + sh.input + " is a shape tensor of " + std::to_string(in->nb_values) +
                                    " values; give it " + std::to_string(in->nb_values) + " values, not " +
                                    std::to_string(sh.nb_dims));
                }
                continue;
            }
            if (sh.nb_dims != in->dims.nbDims) {
                return fail(TRTB_ERR_INVALID_ARGUMENT,
                            "input " + sh.input + " has rank " + std::to_string(in->dims.nbDims) + " (" +
                                dims_text(in->dims.d, in->dims.nbDims) + "), but its shape has rank " +
                                std::to_string(sh.nb_dims));
            }
            for (int32_t d = 0; d < sh.nb_dims; ++d) {
                const int64_t fixed = in->dims.d[d];
                if (fixed >= 0 && (sh.min[d] != fixed || sh.opt[d] != fixed || sh.max[d] != fixed)) {
                    return fail(TRTB_ERR_INVALID_ARGUMENT,
                                "input " + sh.input + " is " + dims_text(in->dims.d, in->dims.nbDims) +
                                    ": dimension " + std::to_string(d) + " is fixed at " + std::to_string(fixed) +
                                    " and cannot be given as " + std::to_string(sh.min[d]) + ".." +
                                    std::to_string(sh.max[d]));
                }
            }
        }
    }
    if (!any_dynamic) {
        return ok();  // static network: the shapes matched it, and it needs no profile
    }

    std::vector<std::vector<Shape>> profiles = s_.profiles;
    if (profiles.empty()) {
        profiles.emplace_back();
    }
    for (size_t p = 0; p < profiles.size(); ++p) {
        const std::string where = profiles.size() > 1 ? " in profile " + std::to_string(p) : "";
        nvinfer1::IOptimizationProfile* profile = o.builder->createOptimizationProfile();  // owned by the builder
        if (profile == nullptr) {
            return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create an optimization profile: " + errors_since(0));
        }
        const size_t mark = recorder_.size();
        for (const Input& in : inputs) {
            if (!in.dynamic) {
                continue;
            }
            const Shape* given = nullptr;
            for (const Shape& sh : profiles[p]) {
                if (sh.input == in.name) {
                    given = &sh;
                }
            }
            Shape fallback;
            if (given == nullptr) {
                // trtexec's rule: a dynamic input without a shape gets 1 for each dynamic dimension.
                fallback.input = in.name;
                if (in.shape_tensor) {
                    fallback.nb_dims = in.nb_values;
                    for (int32_t d = 0; d < in.nb_values && d < TRTB_MAX_DIMS; ++d) {
                        fallback.min[d] = fallback.opt[d] = fallback.max[d] = 1;
                    }
                } else {
                    fallback.nb_dims = in.dims.nbDims;
                    for (int32_t d = 0; d < in.dims.nbDims; ++d) {
                        const int64_t v = in.dims.d[d] < 0 ? 1 : in.dims.d[d];
                        fallback.min[d] = fallback.opt[d] = fallback.max[d] = v;
                    }
                }
                logger_.note(TRTB_SEVERITY_WARNING,
                             "input " + in.name + " is dynamic (" + dims_text(in.dims.d, in.dims.nbDims) +
                                 ") and has no shape" + where + "; using " +
                                 dims_text(fallback.opt, fallback.nb_dims) + " (give it with --shapes)");
                given = &fallback;
            }
            bool set = true;
            if (in.shape_tensor) {
                if (given->nb_dims > TRTB_MAX_DIMS) {
                    return fail(TRTB_ERR_UNSUPPORTED, "input " + in.name + " is a shape tensor of more than " +
                                                          std::to_string(TRTB_MAX_DIMS) + " values");
                }
                set = set_shape_values(*profile, in.name.c_str(), nvinfer1::OptProfileSelector::kMIN, given->min, given->nb_dims) &&
                      set_shape_values(*profile, in.name.c_str(), nvinfer1::OptProfileSelector::kOPT, given->opt, given->nb_dims) &&
                      set_shape_values(*profile, in.name.c_str(), nvinfer1::OptProfileSelector::kMAX, given->max, given->nb_dims);
            } else {
                nvinfer1::Dims mn{}, op{}, mx{};
                mn.nbDims = op.nbDims = mx.nbDims = given->nb_dims;
                for (int32_t d = 0; d < given->nb_dims; ++d) {
                    mn.d[d] = given->min[d];
                    op.d[d] = given->opt[d];
                    mx.d[d] = given->max[d];
                }
                set = profile->setDimensions(in.name.c_str(), nvinfer1::OptProfileSelector::kMIN, mn) &&
                      profile->setDimensions(in.name.c_str(), nvinfer1::OptProfileSelector::kOPT, op) &&
                      profile->setDimensions(in.name.c_str(), nvinfer1::OptProfileSelector::kMAX, mx);
            }
            if (!set) {
                return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused the shape of input " + in.name + where +
                                                           ": " + errors_since(mark));
            }
        }
        if (o.config->addOptimizationProfile(profile) < 0) {
            return fail(TRTB_ERR_INVALID_ARGUMENT,
                        "optimization profile " + std::to_string(p) + " is not valid: " + errors_since(mark));
        }
    }
    return ok();
}

int64_t TensorRTBuild::count_cache_keys(const nvinfer1::ITimingCache* cache) {
#if TRTB_HAS_TIMING_CACHE_KEYS
    if (cache == nullptr) {
        return -1;
    }
    // A count is a nicety: an error it provokes must not end up in a failure message.
    const size_t mark = recorder_.size();
    const int64_t n = cache->queryKeys(nullptr, 0);
    recorder_.drop_since(mark);
    return n;
#else
    (void)cache;
    return -1;
#endif
}

Outcome TensorRTBuild::attach_timing_cache(Objects& o, trtb_result* result) {
    result->timing_cache_used = 0;
    if ((s_.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0) {
        return ok();
    }
    nvinfer1::IBuilderConfig& config = *o.config;
    if (!s_.timing_cache.empty()) {
        const size_t mark = recorder_.size();
        o.cache.reset(config.createTimingCache(s_.timing_cache.data(), s_.timing_cache.size()));
        // ignoreMismatch=false: a cache from another device or TensorRT is not used.
        if (o.cache != nullptr && config.setTimingCache(*o.cache, false)) {
            result->timing_cache_used = 1;
            return ok();
        }
        const std::vector<std::string> why = recorder_.texts_since(mark);
        recorder_.drop_since(mark);  // handled here; not a reason for a later failure
        logger_.note(TRTB_SEVERITY_WARNING,
                     "the timing cache was not accepted (" +
                         (why.empty() ? std::string("made by another TensorRT version or GPU") : join_listed(why)) +
                         "); building from an empty cache");
        o.cache.reset();
    }
    const size_t mark = recorder_.size();
    o.cache.reset(config.createTimingCache(nullptr, 0));
    if (o.cache == nullptr || !config.setTimingCache(*o.cache, false)) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a timing cache: " + errors_since(mark));
    }
    return ok();
}

void TensorRTBuild::save_timing_cache(Objects& o, bool succeeded, trtb_result* result, int64_t keys_before) {
    if (o.cache == nullptr) {
        return;
    }
    const int64_t keys_after = count_cache_keys(o.cache.get());
    if (keys_before >= 0 && keys_after >= keys_before) {
        // New entries are what this build timed because the cache lacked them.
        result->timing_cache_misses = static_cast<uint64_t>(keys_after - keys_before);
    }
    const size_t mark = recorder_.size();
    std::unique_ptr<nvinfer1::IHostMemory> blob(o.cache->serialize());
    recorder_.drop_since(mark);
    if (blob == nullptr || blob->data() == nullptr || blob->size() == 0) {
        if (!succeeded) {
            // Serializing after a cancelled build is not documented to work.
            logger_.note(TRTB_SEVERITY_WARNING, "the timing cache could not be saved after the cancelled build");
        } else {
            logger_.note(TRTB_SEVERITY_WARNING, "TensorRT returned an empty timing cache; it is not saved");
        }
        return;
    }
    timing_cache.assign(static_cast<const char*>(blob->data()), blob->size());
}

// merge_timing_cache combines the cache file's bytes with this build's cache the way trtexec
// updates its --timingCacheFile: both are deserialized with the config of a fresh builder, the
// build's cache is combined into the file's with ignoreMismatch=false (so a cache of another
// TensorRT version or device is refused, never mixed in), and the result is serialized. It
// runs after run(), on the caller's thread, which it points at the build's device first. The
// TensorRT objects it creates are deleted before it returns.
int32_t TensorRTBuild::merge_timing_cache(const std::string& disk, std::string* merged,
                                          trtb_status* status) {
    try {
        const Outcome out = merge(disk, merged);
        return set_status(status, out.code, out.code == TRTB_OK ? std::string() : out.message);
    } catch (const std::bad_alloc&) {
        return set_status(status, TRTB_ERR_OUT_OF_MEMORY, "host memory ran out while merging the timing cache");
    } catch (const std::exception& e) {
        return set_status(status, TRTB_ERR_INTERNAL, std::string("internal error in the TensorRT backend: ") + e.what());
    } catch (...) {
        return set_status(status, TRTB_ERR_INTERNAL, "internal error in the TensorRT backend: unknown exception");
    }
}

Outcome TensorRTBuild::merge(const std::string& disk, std::string* merged) {
    merged->clear();
    if (timing_cache.empty()) {
        // Nothing to add (the cache was off, or TensorRT would not serialize it): keep the file.
        *merged = disk;
        return ok();
    }
    if (disk.empty()) {
        *merged = timing_cache;
        return ok();
    }
    if (Outcome out = select_device(); out.code != TRTB_OK) {
        return out;
    }
    std::unique_ptr<nvinfer1::IBuilder> builder(nvinfer1::createInferBuilder(logger_));
    if (builder == nullptr) {
        return fail(TRTB_ERR_UNAVAILABLE, "TensorRT could not create a builder to merge the timing cache");
    }
    builder->setErrorRecorder(&recorder_);
    std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
    if (config == nullptr) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a builder config to merge the timing cache");
    }
    size_t mark = recorder_.size();
    std::unique_ptr<nvinfer1::ITimingCache> on_disk(config->createTimingCache(disk.data(), disk.size()));
    std::vector<std::string> why = recorder_.texts_since(mark);
    if (on_disk == nullptr || !why.empty()) {
        return fail(TRTB_ERR_CACHE_REJECTED,
                    "TensorRT cannot read the timing cache file" + (why.empty() ? std::string() : ": " + join_listed(why)));
    }
    std::unique_ptr<nvinfer1::ITimingCache> own(config->createTimingCache(timing_cache.data(), timing_cache.size()));
    if (own == nullptr) {
        return fail(TRTB_ERR_INTERNAL, "TensorRT cannot read the timing cache it serialized: " +
                                           join_listed(recorder_.texts_since(mark)));
    }
    mark = recorder_.size();
    if (!on_disk->combine(*own, false)) {
        why = recorder_.texts_since(mark);
        return fail(TRTB_ERR_CACHE_REJECTED,
                    "TensorRT refused to combine the timing caches (made by another TensorRT version or device)" +
                        (why.empty() ? std::string() : ": " + join_listed(why)));
    }
    std::unique_ptr<nvinfer1::IHostMemory> blob(on_disk->serialize());
    if (blob == nullptr || blob->data() == nullptr || blob->size() == 0) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not serialize the merged timing cache");
    }
    merged->assign(static_cast<const char*>(blob->data()), blob->size());
    return ok();
}

Outcome TensorRTBuild::build(trtb_result* result) {
    if (Outcome out = select_device(); out.code != TRTB_OK) {
        return out;
    }

    Objects o;
    o.builder.reset(nvinfer1::createInferBuilder(logger_));
    if (o.builder == nullptr) {
        // Without a builder no error recorder is attached: the logger holds the reason.
        return fail(TRTB_ERR_UNAVAILABLE, "TensorRT could not create a builder: " + errors_since(0));
    }
    o.builder->setErrorRecorder(&recorder_);

    if (Outcome out = load_plugins(*o.builder); out.code != TRTB_OK) {
        return out;
    }

    // 11.x networks are always strongly typed. On 10.x they are too, except when precision
    // builder flags are asked for: TensorRT 10 refuses those on strongly typed networks.
    nvinfer1::NetworkDefinitionCreationFlags network_flags = 0;
#if NV_TENSORRT_MAJOR < 11
    if (s_.precision == 0) {
        network_flags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
    }
#endif
    o.network.reset(o.builder->createNetworkV2(network_flags));
    if (o.network == nullptr) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a network: " + errors_since(0));
    }

    if (Outcome out = parse(o); out.code != TRTB_OK) {
        return out;
    }
    if (cancel_requested()) {
        return fail(TRTB_ERR_CANCELLED, "build cancelled after parsing the model");
    }

    o.config.reset(o.builder->createBuilderConfig());
    if (o.config == nullptr) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a builder config: " + errors_since(0));
    }
    if (Outcome out = configure(o); out.code != TRTB_OK) {
        return out;
    }
    if (Outcome out = add_profiles(o); out.code != TRTB_OK) {
        return out;
    }
    if (Outcome out = attach_timing_cache(o, result); out.code != TRTB_OK) {
        return out;
    }
    const int64_t keys_before = count_cache_keys(o.cache.get());

    if (cancel_requested()) {
        return fail(TRTB_ERR_CANCELLED, "build cancelled before TensorRT started building");
    }
    const size_t mark = recorder_.size();
    bool built = false;
    int write_error = 0;
#if TRTB_HAS_STREAM_WRITER
    FdWriter writer(s_.plan_fd);
    built = o.builder->buildSerializedNetworkToStream(*o.network, *o.config, writer);
    result->plan_bytes = writer.written();
    write_error = writer.error();
#else
    {
        std::unique_ptr<nvinfer1::IHostMemory> plan(o.builder->buildSerializedNetwork(*o.network, *o.config));
        built = plan != nullptr && plan->data() != nullptr && plan->size() > 0;
        if (built) {
            if (write_all(s_.plan_fd, plan->data(), plan->size(), &write_error)) {
                result->plan_bytes = plan->size();
            }
        }
    }  // the plan's memory goes before the timing cache is serialized
#endif
    const bool cancelled = !built && cancel_requested();
    if (built || cancelled) {
        save_timing_cache(o, built && write_error == 0, result, keys_before);
    }

    if (write_error != 0) {
        return fail(TRTB_ERR_IO, "cannot write the plan: " + errno_text(write_error));
    }
    if (cancelled) {
        return fail(TRTB_ERR_CANCELLED, "build cancelled");
    }
    if (!built) {
        if (recorder_.allocation_failed()) {
            return fail(TRTB_ERR_OUT_OF_MEMORY, "TensorRT ran out of memory: " + errors_since(mark));
        }
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not build the engine: " + errors_since(mark));
    }
    if (result->plan_bytes == 0) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT reported success but produced an empty plan");
    }
    // Errors TensorRT recorded without failing the build still reach the log.
    for (const std::string& text : recorder_.texts_since(0)) {
        logger_.note(TRTB_SEVERITY_ERROR, text);
    }
    return ok();
}

}  // namespace

std::unique_ptr<Build> make_tensorrt_build(const trtb_options& options, trtb_status* status) {
    try {
        std::string message;
        if (!check_versions(getInferLibVersion(), &message)) {
            set_status(status, TRTB_ERR_VERSION_MISMATCH, message);
            return nullptr;
        }
        Settings settings;
        const int32_t code = copy_settings(options, &settings, &message);
        if (code != TRTB_OK) {
            set_status(status, code, message);
            return nullptr;
        }
        return std::make_unique<TensorRTBuild>(std::move(settings));
    } catch (const std::bad_alloc&) {
        set_status(status, TRTB_ERR_OUT_OF_MEMORY, "host memory ran out while preparing the build");
    } catch (const std::exception& e) {
        set_status(status, TRTB_ERR_INTERNAL, std::string("internal error in the TensorRT backend: ") + e.what());
    } catch (...) {
        set_status(status, TRTB_ERR_INTERNAL, "internal error in the TensorRT backend: unknown exception");
    }
    return nullptr;
}

int32_t tensorrt_available() {
    return 1;
}

int32_t tensorrt_version(int32_t device, trtb_version_info* info, trtb_status* status) {
    try {
        if (info == nullptr) {
            return set_status(status, TRTB_ERR_INVALID_ARGUMENT, "version info is NULL");
        }
        std::memset(info, 0, sizeof(*info));
        copy_text(info->backend, sizeof(info->backend), "tensorrt", sizeof("tensorrt"));
        info->compiled_version = kCompiledVersion;
        info->loaded_version = getInferLibVersion();
        info->loaded_build = getInferLibBuildVersion();
        info->onnx_parser_version = getNvOnnxParserVersion();

        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) {
            (void)cudaGetLastError();
            count = 0;  // no driver or no GPU: versions are still worth reporting
        }
        info->device_count = count;
        if (device >= 0 && device < count) {
            cudaDeviceProp prop{};
            if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
                copy_text(info->device_name, sizeof(info->device_name), prop.name, sizeof(prop.name));
                info->compute_major = prop.major;
                info->compute_minor = prop.minor;
                info->multiprocessor_count = prop.multiProcessorCount;
            } else {
                (void)cudaGetLastError();
            }
        }

        std::string message;
        if (!check_versions(info->loaded_version, &message)) {
            return set_status(status, TRTB_ERR_VERSION_MISMATCH, message);
        }
        return set_status(status, TRTB_OK, "");
    } catch (const std::exception& e) {
        return set_status(status, TRTB_ERR_INTERNAL, std::string("internal error in the TensorRT backend: ") + e.what());
    } catch (...) {
        return set_status(status, TRTB_ERR_INTERNAL, "internal error in the TensorRT backend: unknown exception");
    }
}

}  // namespace trtb
