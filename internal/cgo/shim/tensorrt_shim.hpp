// tensorrt_shim.hpp: the pieces of the TensorRT backend behind trtb.h, shared by its source
// files. The shim is compiled once per TensorRT major, against the vendored headers of that
// major (third_party/tensorrt/vN), by tensorrt10.cpp and tensorrt11.cpp, which set
// TRTB_SHIM_MAJOR and include every file of shim/; never by Go directly, never by the
// simulated builder. tensorrt.cpp calls the entry points of shim_entry.hpp of the major of the
// library the worker installed.
//
// The backend is split by job:
//   tensorrt_common.cpp        text helpers, version checks, enum mappings
//   tensorrt_entry.cpp         TensorRT's and CUDA's C entry points, through the run-time loader
//   tensorrt_callbacks.cpp     the ILogger, IErrorRecorder and IProgressMonitor TensorRT calls
//   tensorrt_config.cpp        trtb_options -> Settings -> IBuilderConfig, optimization profiles
//   tensorrt_build.cpp         device, plugins, parse, build, serialize; the entry points
//   tensorrt_timing_cache.cpp  attaching, saving and merging the timing cache
//   tensorrt_trtexec.cpp       trtexec's other build settings: I/O formats, layer precisions,
//                              profiling verbosity, tactic sources, DLA, memory pools, --best
//
// TensorRT's headers (tensorrt_headers.hpp) are read in namespaces renamed per major
// (nvinfer1 is trtb_v10_nvinfer1 or trtb_v11_nvinfer1), and the shim's own namespace is
// TRTB_SHIM (trtb::trt10, trtb::trt11): the two shims share no name, so no inline function of
// one major's headers, whose classes have other vtable layouts, ever stands for the other's.
// CUDA's headers are not needed: cudadecl/ declares the few names used (cuda_runtime_api.h's
// stream types, the driver API of cuda.h). The shim behaves like the simulated builder:
// builder callbacks only copy events into the build's EventQueue, stepComplete returns false
// once cancel is requested, and every failure is a trtb_status with one line of text.
//
// Ownership and threading rules:
//   - A TensorRTBuild owns its Logger, ErrorRecorder and ProgressMonitor as members. Every
//     TensorRT object (builder, network, parser, config, timing cache, plan memory) is created
//     inside run(). The network, the parser and the plan memory are deleted there, before run()
//     returns; when the build has a timing cache to save, its builder, config and cache are kept
//     (Objects, TensorRTBuild::objects_) for write_timing_cache, which merges through a new
//     config of that same builder as trtexec does, and are deleted by the TensorRTBuild's
//     destructor (trtb_build_destroy); otherwise run() deletes them too. The callbacks are
//     declared before objects_, so they outlive every object that can call them, as TensorRT
//     requires; no builder thread is left running when run() closes the queue (an idle builder
//     runs none).
//   - run() is called on one OS thread, which the Go side locks for the call: select_device
//     makes the device's primary context current on that thread (the driver API's
//     cudaSetDevice; trtb_loader.hpp, make_device_current), and TensorRT builds on it.
//   - TensorRT calls the monitor, the logger and the error recorder from its own threads, several
//     at once. They copy the text they are given (it is valid only during the call), take one
//     short lock, and return; they never block on the drainer, never call Go and never throw.
//   - TensorRT may keep the logger of the first builder as its process-wide logger while any
//     builder lives, so a process runs at most one TensorRT build at a time (the worker runs
//     one build per process).
//   - Plugin libraries are loaded with dlopen (LoadLibraryExW on Windows) and stay loaded for the life of the process: the
//     plugin registry keeps pointers into them. Loading one runs its code.
//   - No TensorRT enum value crosses trtb.h: options arrive as trtbuild's own enums and are
//     mapped to TensorRT names here, because TensorRT 11 renumbered BuilderFlag and
//     NetworkDefinitionCreationFlag.
//   - Every function the rest of the package calls (make_build, version, check_builder,
//     TensorRTBuild::run, TensorRTBuild::write_timing_cache) runs its body
//     through trtb::guarded (trtb_internal.hpp), which turns every exception into a status;
//     the void callbacks that cannot fail the build run through trtb::guarded_void.
//   - Options are checked by trtb::check_options (options.cpp), the one checker of both
//     backends; copy_settings adds only what this TensorRT major refuses.
#ifndef TRTB_TENSORRT_SHIM_HPP
#define TRTB_TENSORRT_SHIM_HPP

#include "../timing_cache_rules.hpp"
#include "../trtb_internal.hpp"
#include "../trtb_loader.hpp"
#include "../trtb_platform.hpp"
#include "shim_entry.hpp"

#include <cuda_runtime_api.h>  // cudadecl/: the few CUDA types TensorRT's headers name

// The headers of one TensorRT major, vendored in third_party/tensorrt (TRTB_SHIM_MAJOR is set by
// the file that compiles the shim for that major: tensorrt10.cpp, tensorrt11.cpp). TensorRT's
// namespaces are renamed per major, and the shim's own is TRTB_SHIM: the two shims are
// different types and functions in one binary, and no inline function of one major's headers
// stands for the other's (their classes share names but not vtable layouts).
#if TRTB_SHIM_MAJOR == 10
#define nvinfer1 trtb_v10_nvinfer1
#define nvonnxparser trtb_v10_nvonnxparser
#define TRTB_SHIM trt10
#elif TRTB_SHIM_MAJOR == 11
#define nvinfer1 trtb_v11_nvinfer1
#define nvonnxparser trtb_v11_nvonnxparser
#define TRTB_SHIM trt11
#else
#error "compile the TensorRT shim through tensorrt10.cpp or tensorrt11.cpp (TRTB_SHIM_MAJOR)"
#endif
#include "tensorrt_headers.hpp"
#if NV_TENSORRT_MAJOR != TRTB_SHIM_MAJOR
#error "the vendored headers are not of the major they are filed under"
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>
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
namespace TRTB_SHIM {

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

// check_versions refuses a library of another major than the headers, with the message of
// internal/trt.CheckVersions; which older minors the headers drive is Go's to judge
// (internal/trt's table of older minors), before the library is installed.
bool check_versions(int32_t loaded, std::string* message);

// one_line turns a message from TensorRT into one line: line breaks and tabs become spaces,
// and spaces at either end go.
std::string one_line(const char* text);

// join_listed joins texts with "; ", quoting at most kMaxListed of them.
std::string join_listed(const std::vector<std::string>& texts);

// dims_text formats dimensions the way the shape flags take them: 1x3x224x224, or "scalar".
std::string dims_text(const int64_t* d, int32_t n);

// copy_text copies the NUL-terminated or full src (of src_size bytes) into dst (of dst_size
// bytes), cut to fit and always NUL-terminated.
void copy_text(char* dst, size_t dst_size, const char* src, size_t src_size);

int32_t to_trtb_severity(Severity s);
Severity to_trt_severity(int32_t s);

// parser_code_name names an ONNX parser error code as the parser's enum does, without the k.
std::string parser_code_name(nvonnxparser::ErrorCode code);

// ---------------------------------------------------------------------------------------------
// Entry points of the libraries loaded at run time (tensorrt_entry.cpp). No TensorRT or CUDA
// function is called any other way: the binary does not link them.

// loaded tells whether libnvinfer and libnvonnxparser are installed; if not, *why says so.
// The CUDA driver is asked for separately (trtb_loader.hpp: make_device_current, ...), which
// says so when it is not installed.
bool loaded(std::string* why);
// create_builder and create_parser are NvInfer.h's createInferBuilder and NvOnnxParser.h's
// createParser through the loaded libraries; null when TensorRT refuses or is not loaded.
nvinfer1::IBuilder* create_builder(nvinfer1::ILogger& logger);
nvonnxparser::IParser* create_parser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger);
// loaded_version is getInferLibVersion() (0 when not loaded); loaded_parser_version is
// getNvOnnxParserVersion() (0 when not loaded or not exported).
int32_t loaded_version();
int32_t loaded_parser_version();
// init_builtin_plugins calls libnvinfer_plugin's initLibNvInferPlugins once per process, with
// the process logger, as trtexec does before building (trtexec.cpp); it returns its answer,
// or true when the library was not loaded (--no-builtin-plugins).
bool init_builtin_plugins();

// ---------------------------------------------------------------------------------------------
// Callbacks (tensorrt_callbacks.cpp).

// Logger is one build's log: the sink the process's TensorRT logger (ProcessLogger) forwards to
// while the build runs, and where trtbuild's own lines and the error recorder's errors go too.
// Every line up to the severity asked for is queued as it arrives. Errors, whatever the filter,
// are also numbered and kept in a ring of the last kErrorRing, for failure messages: the last
// ones are the decisive ones (the first few are often consequences of a setting, the last say
// why the build stopped). A call whose errors and warnings decide something (createTimingCache
// of a foreign blob, for one) is judged by what its own thread logged during it: the caller
// makes a tcache::ThreadCapture of this log around the call, which takes that thread's errors
// and warnings (errors still enter the ring) and keeps them from the live stream until the
// caller quotes them or hands them on (release); lines of other threads go live meanwhile.
//
// Threading: note may be called from any number of TensorRT threads at once; it copies the
// text and takes two short locks (its own and the queue's); the rest by the run thread, or by
// the thread of write_timing_cache after run.
class Logger {
public:
    Logger(EventQueue& queue, int32_t max_severity) : queue_(queue), max_severity_(max_severity) {}

    // note logs one line of TensorRT's or trtbuild's own.
    void note(int32_t severity, const char* msg) noexcept;
    void note(int32_t severity, const std::string& msg) noexcept { note(severity, msg.c_str()); }

    // mark numbers the errors noted so far: errors_since(mark) returns those noted after it.
    uint64_t mark() const;
    // release queues the lines capture took (after it ended), as note would have.
    void release(const tcache::ThreadCapture& capture) noexcept;
    // errors_since returns the texts of the errors noted after mark that the ring still holds,
    // oldest first, and in *older how many more were noted after mark but have left the ring.
    std::vector<std::string> errors_since(uint64_t mark, uint64_t* older) const;

    // parser_verbosity is the severity handed to IParser::parseFromFile: the parser prints up
    // to it through the process logger, and so through this one.
    int parser_verbosity() const { return static_cast<int>(to_trt_severity(max_severity_)); }

    static constexpr size_t kErrorRing = 32;

private:
    EventQueue& queue_;
    const int32_t max_severity_;
    mutable std::mutex mu_;
    std::deque<std::pair<uint64_t, std::string>> errors_;  // guarded by mu_; the last kErrorRing, numbered
    uint64_t nb_errors_ = 0;                               // guarded by mu_
};

// ProcessLogger is the one nvinfer1::ILogger this process hands to TensorRT: to every builder,
// parser and to initLibNvInferPlugins. It is created on first use and never destroyed, because
// TensorRT keeps the pointer beyond any one build: libnvinfer_plugin stores it for good
// (plugin::gLogger, set by initLibNvInferPlugins in plugin/api/inferPlugin.cpp), and the
// builder's first logger may become TensorRT's process-wide logger; trtexec's logger is a
// process global for the same reason (sample::gLogger, trtexec.cpp). It forwards each line to
// the build's Logger attached at the time (SinkScope), and drops lines that come while none is.
//
// Threading: log takes a shared lock, so TensorRT threads log concurrently; attaching and
// detaching take it exclusively, so once detach returns no thread is inside the old sink.
class ProcessLogger final : public nvinfer1::ILogger {
public:
    static ProcessLogger& get();

    void log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept override;

    // SinkScope attaches a build's Logger for its lifetime.
    class SinkScope {
    public:
        explicit SinkScope(Logger& sink);
        ~SinkScope();
        SinkScope(const SinkScope&) = delete;
        SinkScope& operator=(const SinkScope&) = delete;

    private:
        Logger* previous_;
    };

private:
    ProcessLogger() = default;
    Logger* swap(Logger* sink);

    std::shared_mutex mu_;
    Logger* sink_ = nullptr;  // guarded by mu_
};

// ErrorRecorder collects the errors TensorRT reports while the builder and the objects made from
// it live. Attaching it stops TensorRT from logging errors itself (NvInfer.h, setErrorRecorder),
// so it notes every error in the build's Logger as it arrives: it shows live, and the Logger's
// ring keeps the last ones for the failure message. It keeps the first kMaxErrors for the
// IErrorRecorder interface and says so (hasOverflowed) when more came.
//
// Threading and ownership: every method may be called from several TensorRT threads at once
// (one mutex guards the list; the reference count is atomic). TensorRT takes a reference
// (incRefCount) when setErrorRecorder attaches it and drops it (decRefCount) when the builder
// is deleted; the recorder is a member of the build, which outlives the builder, so the count
// is back to zero before it is destroyed. A pointer from getErrorDesc stays valid until clear
// removes that error; a deque never moves the elements it keeps.
class ErrorRecorder final : public nvinfer1::IErrorRecorder {
public:
    explicit ErrorRecorder(Logger& log) : log_(log) {}

    int32_t getNbErrors() const noexcept override;
    nvinfer1::ErrorCode getErrorCode(int32_t index) const noexcept override;
    ErrorDesc getErrorDesc(int32_t index) const noexcept override;
    bool hasOverflowed() const noexcept override;
    void clear() noexcept override;

    // reportError notes desc (valid only during the call) in the build's log and keeps a copy,
    // and says the error is fatal, as NVIDIA's reference recorder does: a build that hit an
    // error is not worth continuing.
    bool reportError(nvinfer1::ErrorCode code, ErrorDesc desc) noexcept override;

    RefCount incRefCount() noexcept override { return ++refs_; }
    RefCount decRefCount() noexcept override { return --refs_; }

    // allocation_failed_since tells whether TensorRT reported a failed allocation after the
    // Logger's mark.
    bool allocation_failed_since(uint64_t mark) const;

private:
    struct Entry {
        nvinfer1::ErrorCode code;
        std::string desc;
    };
    static constexpr size_t kMaxErrors = 256;

    Logger& log_;
    mutable std::mutex mu_;
    std::deque<Entry> entries_;           // guarded by mu_; the first kMaxErrors since clear
    bool overflowed_ = false;             // guarded by mu_
    std::atomic<uint64_t> last_alloc_{0};  // 1 + the Logger mark before the last kFAILED_ALLOCATION
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

// Shape is one input's min/opt/max, and Settings everything of trtb_options the shim keeps,
// owned (trtb_options need not outlive trtb_build_create): the types check_options fills, the
// one option checker of both backends.
using Shape = ProfileShape;
using Settings = BuildSettings;

// copy_settings checks options with check_options (options.cpp, the checker of both backends),
// then refuses what this TensorRT major cannot honour (precision flags on TensorRT 11,
// same-compute-capability before 10.9, --fp8 with ampere+ on 10.x, and the trtexec settings
// check_extra_settings refuses), and copies them into *out. On a bad option it returns its
// code and sets *message.
int32_t copy_settings(const trtb_options& o, Settings* out, std::string* message);

// check_extra_settings refuses the trtexec build settings of s that this TensorRT major cannot
// honour (TRTB_ERR_UNSUPPORTED) or that contradict each other on it, with one line that says
// why and what to do instead.
int32_t check_extra_settings(const Settings& s, std::string* message);

// weakly_typed reports whether a TensorRT 10 network must be created without
// kSTRONGLY_TYPED: precision builder flags, --best, precision constraints and DLA (which
// trtexec builds in fp16) need a weakly typed network. Always false on TensorRT 11.
bool weakly_typed(const Settings& s);

// ---------------------------------------------------------------------------------------------
// The build (tensorrt_build.cpp, tensorrt_config.cpp, tensorrt_timing_cache.cpp).

// Objects holds the TensorRT objects of one build. Members are destroyed in reverse order of
// declaration: the config goes before the parser, the parser before the network it fills, and
// those before the builder (as trtexec's BuildEnvironment, sampleEngines.h). The timing cache
// is declared first, so that it goes last: "the lifetime of the ITimingCache must exceed the
// lifetime of all builders that use it" (IBuilderConfig::createTimingCache, NvInfer.h).
//
// After run, release_inputs drops the network and the parser (the model's weights), keeping
// the builder, its config and the cache attached to it for write_timing_cache; clear drops
// everything, in the same order as the destructor.
struct Objects {
    std::unique_ptr<nvinfer1::ITimingCache> cache;
    std::unique_ptr<nvinfer1::IBuilder> builder;
    std::unique_ptr<nvinfer1::INetworkDefinition> network;
    std::unique_ptr<nvonnxparser::IParser> parser;
    std::unique_ptr<nvinfer1::IBuilderConfig> config;

    void release_inputs() {
        parser.reset();
        network.reset();
    }
    void clear() {
        config.reset();
        release_inputs();
        builder.reset();
        cache.reset();
    }
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

class TensorRTBuild final : public Build {
public:
    explicit TensorRTBuild(Settings settings)
        : s_(std::move(settings)), logger_(queue, s_.log_severity), recorder_(logger_), monitor_(*this) {}
    // The destructor deletes what run kept (objects_) after pointing the calling thread at the
    // build's device, as run and write_timing_cache do: trtb_build_destroy may come from
    // another thread than theirs.
    ~TensorRTBuild() override;

    int32_t run(trtb_result* result, trtb_status* status) override;
    int32_t write_timing_cache(bool disk_is_given, std::string_view disk, int fd, bool* changed,
                               trtb_status* status) override;

private:
    Outcome build(trtb_result* result);
    Outcome write_cache(bool disk_is_given, std::string_view disk, int fd, bool* changed);
    Outcome select_device();
    Outcome load_plugins(nvinfer1::IBuilder& builder);
    Outcome parse(Objects& o);
    Outcome configure(Objects& o);
    Outcome apply_extra_settings(Objects& o);  // tensorrt_trtexec.cpp
    Outcome add_profiles(Objects& o);
    Outcome attach_timing_cache(Objects& o, trtb_result* result);
    void save_timing_cache(Objects& o, bool succeeded, trtb_result* result, int64_t keys_before);
    int64_t count_cache_keys(const nvinfer1::ITimingCache* cache);
    // read_cache deserializes blob with config into *cache and returns the facts the timing
    // cache rules judge it by (timing_cache_rules.hpp): what the calling thread logged during
    // createTimingCache is held in *capture, which the caller ends, quotes or releases.
    tcache::LoadFacts read_cache(nvinfer1::IBuilderConfig& config, std::string_view blob,
                                 std::unique_ptr<nvinfer1::ITimingCache>* cache, tcache::ThreadCapture* capture);

    // errors_since quotes the last errors noted after mark (Logger::mark), for a failure message.
    std::string errors_since(uint64_t mark) const;

    Settings s_;
    // The callbacks, declared before objects_ so that they outlive every TensorRT object.
    Logger logger_;
    ErrorRecorder recorder_;
    ProgressMonitor monitor_;
    // own_cache_ is the build's serialized timing cache after run (save_timing_cache), as
    // TensorRT returned it, and own_keys_ the keys it holds (-1: cannot count), for
    // write_timing_cache; null when there is nothing to save.
    std::unique_ptr<nvinfer1::IHostMemory> own_cache_;
    int64_t own_keys_ = -1;
    // given_attached_ is set when the build's cache was read from the given bytes and
    // attached exactly (attach_timing_cache): it holds every entry they hold.
    bool given_attached_ = false;
    // own_is_given_: the build learned nothing over the given cache, so the given bytes are
    // its cache (instead of own_cache_).
    bool own_is_given_ = false;
    // objects_ are the build's TensorRT objects. run() fills them; after it, only the builder,
    // its config and the timing cache remain, and only while own_cache_ is set: the merge of
    // write_timing_cache creates a config of that builder rather than a second IBuilder (each
    // initialises the builder resource again: seconds and GBs of host memory). They are used by
    // run() and then by write_timing_cache, on the caller's thread, never both at once (trtb.h:
    // write after run has returned), and deleted with the build.
    Objects objects_;
};

}  // namespace TRTB_SHIM
}  // namespace trtb

#endif  // TRTB_TENSORRT_SHIM_HPP
