// tensorrt_shim.hpp: the pieces of the TensorRT backend behind trtb.h, for TensorRT 10.x and
// 11.x, shared by its source files. Included only by files compiled with the Go build tag
// "tensorrt"; never by Go, never by the simulated builder.
//
// The backend is split by job:
//   tensorrt_common.cpp        text helpers, version checks, enum mappings
//   tensorrt_callbacks.cpp     the ILogger, IErrorRecorder and IProgressMonitor TensorRT calls
//   tensorrt_config.cpp        trtb_options -> Settings -> IBuilderConfig, optimization profiles
//   tensorrt_build.cpp         device, plugins, parse, build, serialize; the factory functions
//   tensorrt_timing_cache.cpp  attaching, saving and merging the timing cache
//
// It is compiled against NVIDIA's public headers (NvInfer.h, NvOnnxParser.h) and the CUDA
// runtime header, whose folders come from the environment (CGO_CPPFLAGS or CGO_CXXFLAGS, see
// docs/tensorrt.md). It behaves like the simulated builder: builder callbacks only copy events
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
#ifndef TRTB_TENSORRT_SHIM_HPP
#define TRTB_TENSORRT_SHIM_HPP

#include "trtb_internal.hpp"

#include <NvInfer.h>
#include <NvOnnxParser.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
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
namespace trt {

using nvinfer1::BuilderFlag;
using Severity = nvinfer1::ILogger::Severity;

// kCompiledVersion is the version of the headers, NV_TENSORRT_VERSION (major*10000+minor*100+patch).
constexpr int32_t kCompiledVersion = static_cast<int32_t>(NV_TENSORRT_VERSION);

// kMaxListed bounds how many recorded errors a failure message quotes.
constexpr size_t kMaxListed = 8;

// ---------------------------------------------------------------------------------------------
// Text helpers, version checks and enum mappings (tensorrt_common.cpp).

// Version is a decoded NV_TENSORRT_VERSION, decoded like internal/trt.FromInt: TensorRT 10 and
// newer use major*10000+minor*100+patch, TensorRT 8 and older major*1000+minor*100+patch.
struct Version {
    int32_t major = 0, minor = 0, patch = 0;
};

Version decode_version(int32_t v);
std::string version_text(int32_t v);

// check_versions applies the rule of internal/trt.CheckVersions to the loaded library, with
// the same messages: a different major, or an older minor, is a mismatch.
bool check_versions(int32_t loaded, std::string* message);

// one_line turns a message from TensorRT into one line: line breaks and tabs become spaces,
// and spaces at either end go.
std::string one_line(const char* text);

// join_listed joins texts with "; ", quoting at most kMaxListed of them.
std::string join_listed(const std::vector<std::string>& texts);

// dims_text formats dimensions the way the shape flags take them: 1x3x224x224, or "scalar".
std::string dims_text(const int64_t* d, int32_t n);

std::string errno_text(int err);

// copy_text copies the NUL-terminated or full src (of src_size bytes) into dst (of dst_size
// bytes), cut to fit and always NUL-terminated.
void copy_text(char* dst, size_t dst_size, const char* src, size_t src_size);

int32_t to_trtb_severity(Severity s);
Severity to_trt_severity(int32_t s);

// parser_code_name names an ONNX parser error code as the parser's enum does, without the k.
std::string parser_code_name(nvonnxparser::ErrorCode code);

// ---------------------------------------------------------------------------------------------
// Callbacks (tensorrt_callbacks.cpp).

// Logger forwards TensorRT's log lines to the build's queue, up to the severity asked for, and
// remembers the last error lines whatever the filter, for failure messages (TensorRT logs
// errors instead of recording them when no error recorder is attached yet).
//
// Threading: log may be called from any number of TensorRT threads at once; it copies the text
// and takes two short locks (its own and the queue's). note may be called by the run thread.
class Logger final : public nvinfer1::ILogger {
public:
    Logger(EventQueue& queue, int32_t max_severity) : queue_(queue), max_severity_(max_severity) {}

    void log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept override;

    // note queues a line of trtbuild's own (same filter as TensorRT's lines).
    void note(int32_t severity, const char* msg) noexcept;
    void note(int32_t severity, const std::string& msg) noexcept { note(severity, msg.c_str()); }

    // errors returns the last error lines, oldest first.
    std::vector<std::string> errors() const;

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
    int32_t getNbErrors() const noexcept override;
    nvinfer1::ErrorCode getErrorCode(int32_t index) const noexcept override;
    ErrorDesc getErrorDesc(int32_t index) const noexcept override;
    bool hasOverflowed() const noexcept override;
    void clear() noexcept override;

    // reportError keeps a copy of desc (valid only during the call) and says the error is fatal,
    // as NVIDIA's reference recorder does: a build that hit an error is not worth continuing.
    bool reportError(nvinfer1::ErrorCode code, ErrorDesc desc) noexcept override;

    RefCount incRefCount() noexcept override { return ++refs_; }
    RefCount decRefCount() noexcept override { return --refs_; }

    // size returns how many errors are recorded, a mark for texts_since and drop_since.
    size_t size() const;

    // texts_since returns the texts of the errors recorded after mark.
    std::vector<std::string> texts_since(size_t mark) const;

    // drop_since forgets the errors recorded after mark, once the shim has handled them.
    void drop_since(size_t mark);

    // allocation_failed tells whether TensorRT recorded a failed allocation.
    bool allocation_failed() const;

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

    void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override;
    bool stepComplete(char const* phaseName, int32_t step) noexcept override;
    void phaseFinish(char const* phaseName) noexcept override;

private:
    Build& build_;
};

// ---------------------------------------------------------------------------------------------
// Options (tensorrt_config.cpp).

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

// copy_settings checks options and copies them into *out. On a bad option it returns its code
// and sets *message.
int32_t copy_settings(const trtb_options& o, Settings* out, std::string* message);

// ---------------------------------------------------------------------------------------------
// The build (tensorrt_build.cpp, tensorrt_config.cpp, tensorrt_timing_cache.cpp).

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

inline Outcome ok() { return Outcome{}; }
inline Outcome fail(int32_t code, std::string message) { return Outcome{code, std::move(message)}; }

// write_all writes n bytes to fd, resuming after partial writes and EINTR. On failure it returns
// false with *err set to errno.
bool write_all(int fd, const void* data, uint64_t n, int* err);

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

}  // namespace trt
}  // namespace trtb

#endif  // TRTB_TENSORRT_SHIM_HPP
