// tensorrt_build.cpp: one TensorRT build: select the device, load plugins, parse the ONNX
// model, build and serialize the plan into the caller's file; and the backend's factory
// functions behind trtb.h (see tensorrt_shim.hpp for how the backend is split and its rules).

#include "tensorrt_shim.hpp"
#include "../trtb_platform.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace trtb {
namespace TRTB_SHIM {
namespace {

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
            return -1;  // coverage: the stand-in, as TensorRT, writes whole pieces and stops at the first refused
        }
        if (!platform::write_all(fd_, data, static_cast<uint64_t>(nbBytes), &error_)) {
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

}  // namespace

int32_t TensorRTBuild::run(trtb_result* result, trtb_status* status) {
    // The queue closes on every path, after the TensorRT objects (and so their threads) are gone.
    QueueCloser closer{queue};
    // TensorRT's lines reach this build's log from here until run returns (after every
    // TensorRT object of the build is gone).
    ProcessLogger::SinkScope sink(logger_);

    trtb_result local{};
    if (result == nullptr) {
        result = &local;  // coverage: Go's Build.Run always passes a result
    }
    // An exception becomes the status (trtb::guarded); the result is filled in either way.
    const int32_t code = guarded(status, [&]() -> int32_t {
        const Outcome out = build(result);
        return set_status(status, out.code, out.code == TRTB_OK ? std::string() : out.message);
    });
    // The model's network and parser go now; the builder, its config and the timing cache stay
    // for write_timing_cache only when there is a cache to save (see objects_).
    guarded_void([&] {
        objects_.release_inputs();
        if (own_cache_ == nullptr && !own_is_given_) {
            objects_.clear();
        }
    });
    result->code = code;
    result->cancel_seen_ns = cancel_seen_ns();
    return code;
}

TensorRTBuild::~TensorRTBuild() {
    guarded_void([&] {
        if (objects_.builder != nullptr) {
            (void)select_device();  // a failure leaves the thread's device as it is: nothing else to do
        }
        objects_.clear();
    });
}

std::string TensorRTBuild::errors_since(uint64_t mark) const {
    uint64_t older = 0;
    std::vector<std::string> texts = logger_.errors_since(mark, &older);
    if (texts.empty()) {
        return "TensorRT reported no error; rerun with --verbose to see its log";  // coverage: the stand-in logs an error with every failure, as TensorRT
    }
    // The last errors say why TensorRT stopped; the earlier ones were logged as they came.
    const size_t skip = texts.size() > kMaxListed ? texts.size() - kMaxListed : 0;
    older += skip;
    std::string out;
    for (size_t i = skip; i < texts.size(); ++i) {
        out += (i > skip ? "; " : "") + texts[i];
    }
    if (older > 0) {
        out = "(" + std::to_string(older) + " earlier error" + (older > 1 ? "s" : "") + " in the log) " + out;
    }
    return out;
}

Outcome TensorRTBuild::select_device() {
    // The device's primary context, current on this (the run) thread for the rest of the
    // process: TensorRT's objects may outlive run() (the timing cache's merge), and the worker
    // exits after its one build, which releases it.
    std::string why;
    if (!make_device_current(s_.device, &why)) {
        const bool ordinal = why.rfind("--device", 0) == 0;
        return fail(ordinal ? TRTB_ERR_INVALID_ARGUMENT : TRTB_ERR_UNAVAILABLE, why);
    }
    return ok();
}

// ProfileStream is the builder's own stream for timing tactics, as trtexec's
// (setProfileStream of a cudaStreamNonBlocking stream, sampleEngines.cpp): on the legacy
// default stream, TensorRT's timing would wait for, and be slowed by, other work of the
// process's context. Ownership: the build owns it; it is created after the device is current
// (on the run thread) and destroyed when build() returns, after buildSerializedNetwork, which
// synchronizes the profile stream before it returns (NvInfer.h). The config that names it may
// outlive it (TensorRTBuild::objects_ keeps the config for the timing cache's merge), so the
// stream is handed to the config through attach, and the destructor gives the config back the
// default stream before destroying this one: no kept config names a destroyed stream.
class ProfileStream {
public:
    ProfileStream() = default;
    ~ProfileStream() {
        if (config_ != nullptr) {
            config_->setProfileStream(nullptr);
        }
        destroy_stream(stream_);
    }
    ProfileStream(const ProfileStream&) = delete;
    ProfileStream& operator=(const ProfileStream&) = delete;

    bool create(std::string* why) { return create_stream(&stream_, why); }

    // attach makes the stream config's profile stream until this ProfileStream is destroyed;
    // config must outlive it.
    void attach(nvinfer1::IBuilderConfig& config) {
        config.setProfileStream(stream_);
        config_ = &config;
    }

private:
    CUstream_st* stream_ = nullptr;
    nvinfer1::IBuilderConfig* config_ = nullptr;
};

Outcome TensorRTBuild::load_plugins(nvinfer1::IBuilder& builder) {
    for (const std::string& path : s_.plugin_paths) {
        // Loading runs the library's static initializers, which register plugins that use
        // REGISTER_TENSORRT_PLUGIN. The handle is kept open for good (see the rules at the top):
        // dlopen(RTLD_LAZY | RTLD_LOCAL), LoadLibraryExW on Windows.
        std::string why;
        void* handle = platform::open_library(path, true, false, &why);
        if (handle == nullptr) {
            return fail(TRTB_ERR_INVALID_ARGUMENT, "cannot load plugin library " + path + ": " + why);
        }
        // A library with TensorRT's dynamic entry points registers through the registry.
        const bool dynamic = platform::library_symbol(handle, "getCreators") != nullptr ||
                             platform::library_symbol(handle, "getPluginCreators") != nullptr;
        if (dynamic) {
            const uint64_t mark = logger_.mark();
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
        platform::InputFacts st;
        int err = 0;
        if (!platform::stat_input(s_.model_path, &st, &err)) {
            return fail(TRTB_ERR_IO, "cannot read model " + s_.model_path + ": " + platform::error_text(err));
        }
        if (st.is_dir) {
            return fail(TRTB_ERR_IO, "cannot read model " + s_.model_path + ": it is a directory; give the .onnx file");
        }
    }
    const uint64_t mark = logger_.mark();
    o.parser.reset(create_parser(*o.network, ProcessLogger::get()));
    if (o.parser == nullptr) {
        return fail(TRTB_ERR_UNAVAILABLE, "TensorRT could not create an ONNX parser: " + errors_since(mark));
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
            continue;  // coverage: getError is null only for an index past getNbErrors
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
        message += errors_since(mark);  // coverage: the stand-in's parser, as onnx-tensorrt's, records an error with every failed parse
    } else {
        // Every error, in the parser's order; set_status cuts what does not fit.
        for (size_t i = 0; i < errors.size(); ++i) {
            message += (i > 0 ? "; " : "") + errors[i];
        }
    }
    return fail(TRTB_ERR_PARSE, message);
}

// RegistryRecorder attaches the build's error recorder to TensorRT's process-wide plugin
// registry while the build runs, so that errors of IPluginRegistry::loadLibrary (--plugins,
// the plugin libraries of a version-compatible engine) are recorded, logged and quoted like
// the builder's, and restores the registry's previous recorder afterwards: the registry
// outlives the build, the recorder does not. setErrorRecorder is not thread-safe
// (NvInferRuntimeCommon.h); the worker runs one build, and nothing else uses the registry.
class RegistryRecorder {
public:
    RegistryRecorder(nvinfer1::IPluginRegistry& registry, nvinfer1::IErrorRecorder* recorder)
        : registry_(registry), previous_(registry.getErrorRecorder()) {
        registry_.setErrorRecorder(recorder);
    }
    ~RegistryRecorder() { registry_.setErrorRecorder(previous_); }
    RegistryRecorder(const RegistryRecorder&) = delete;
    RegistryRecorder& operator=(const RegistryRecorder&) = delete;

private:
    nvinfer1::IPluginRegistry& registry_;
    nvinfer1::IErrorRecorder* previous_;
};

Outcome TensorRTBuild::build(trtb_result* result) {
    if (Outcome out = select_device(); out.code != TRTB_OK) {
        return out;
    }
    uint64_t mark = logger_.mark();
    if (!init_builtin_plugins()) {
        return fail(TRTB_ERR_UNAVAILABLE, "initLibNvInferPlugins could not register TensorRT's standard plugins: " +
                                              errors_since(mark) + "; pass --no-builtin-plugins to build without them");
    }

    Objects& o = objects_;
    // The builder's own profile stream lives only as long as this call; the config, which
    // outlives it when it is kept for the timing cache's merge, is detached from it first.
    ProfileStream profile_stream;
    mark = logger_.mark();
    o.builder.reset(create_builder(ProcessLogger::get()));
    if (o.builder == nullptr) {
        // Without a builder no error recorder is attached: the logger holds the reason.
        return fail(TRTB_ERR_UNAVAILABLE, "TensorRT could not create a builder: " + errors_since(mark));
    }
    o.builder->setErrorRecorder(&recorder_);
    RegistryRecorder registry_recorder(o.builder->getPluginRegistry(), &recorder_);

    if (Outcome out = load_plugins(*o.builder); out.code != TRTB_OK) {
        return out;
    }

    // 11.x networks are always strongly typed. On 10.x they are too, except when precision
    // builder flags, --best, precision constraints or DLA are asked for: TensorRT 10 refuses
    // those on strongly typed networks (see weakly_typed).
    nvinfer1::NetworkDefinitionCreationFlags network_flags = 0;
#if NV_TENSORRT_MAJOR < 11
    if (!weakly_typed(s_)) {
        network_flags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
    }
#endif
    mark = logger_.mark();
    o.network.reset(o.builder->createNetworkV2(network_flags));
    if (o.network == nullptr) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a network: " + errors_since(mark));
    }

    if (Outcome out = parse(o); out.code != TRTB_OK) {
        return out;
    }
    if (cancel_requested()) {
        return fail(TRTB_ERR_CANCELLED, "build cancelled after parsing the model");
    }

    mark = logger_.mark();
    o.config.reset(o.builder->createBuilderConfig());
    if (o.config == nullptr) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a builder config: " + errors_since(mark));
    }
    if (Outcome out = configure(o); out.code != TRTB_OK) {
        return out;
    }
    if (std::string why; !profile_stream.create(&why)) {
        return fail(TRTB_ERR_UNAVAILABLE, "cannot create the builder's profile stream: " + why);
    }
    profile_stream.attach(*o.config);
    if (Outcome out = apply_extra_settings(o); out.code != TRTB_OK) {
        return out;
    }
    if (Outcome out = add_profiles(o); out.code != TRTB_OK) {
        return out;
    }
    if (Outcome out = attach_timing_cache(o, result); out.code != TRTB_OK) {
        return out;
    }
    const int64_t keys_before = count_cache_keys(o.config->getTimingCache());

    if (cancel_requested()) {
        // coverage: no test can place a cancel between the check after parsing and this one
        return fail(TRTB_ERR_CANCELLED, "build cancelled before TensorRT started building");
    }
    mark = logger_.mark();
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
            if (platform::write_all(s_.plan_fd, plan->data(), plan->size(), &write_error)) {
                result->plan_bytes = plan->size();
            }
        }
    }  // the plan's memory goes before the timing cache is serialized
#endif
    // Cancelled only if the monitor actually stopped the build: a build that failed by itself
    // after Ctrl-C, before any stepComplete saw the request, is a failure with its own errors.
    const bool cancelled = !built && cancel_seen_ns() != 0;
    // Judged before the timing cache is saved: a failed allocation of the save is not why the
    // build failed.
    const bool out_of_memory = !built && recorder_.allocation_failed_since(mark);
    // What the builder timed is in the config's cache after a failure too (TensorRT adds each
    // entry as it is timed): kept, so that a rebuild (--keep-fp32's retry, a user's second try)
    // times only what the first did not reach.
    save_timing_cache(o, built && write_error == 0, result, keys_before);

    if (write_error != 0) {
        return fail(TRTB_ERR_IO, "cannot write the plan: " + platform::error_text(write_error));
    }
    if (cancelled) {
        return fail(TRTB_ERR_CANCELLED, "build cancelled");
    }
    if (!built) {
        if (out_of_memory) {
            return fail(TRTB_ERR_OUT_OF_MEMORY, "TensorRT ran out of memory: " + errors_since(mark));
        }
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not build the engine: " + errors_since(mark));
    }
    if (result->plan_bytes == 0) {
        // coverage: the stand-in, as TensorRT, writes a plan whenever it reports success
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT reported success but produced an empty plan");
    }
    return ok();
}

// The shim's entry points (shim_entry.hpp), which tensorrt.cpp calls for the major of the
// installed library.

// make_build needs the libraries loaded (trtb_loader.h) and of the headers' major; Go has
// checked that already when it loaded them (and the minor, which only Go judges), and this
// check repeats the major's.
std::unique_ptr<Build> make_build(const trtb_options& options, trtb_status* status) {
    std::unique_ptr<Build> build;
    guarded(status, [&]() -> int32_t {
        std::string message;
        if (!TRTB_SHIM::loaded(&message)) {
            return set_status(status, TRTB_ERR_UNAVAILABLE, message);  // coverage: tensorrt.cpp calls a shim only with its libraries installed
        }
        if (!check_versions(TRTB_SHIM::loaded_version(), &message)) {
            return set_status(status, TRTB_ERR_VERSION_MISMATCH, message);  // coverage: tensorrt.cpp calls the shim of the loaded major
        }
        Settings settings;
        const int32_t code = copy_settings(options, &settings, &message);
        if (code != TRTB_OK) {
            return set_status(status, code, message);
        }
        build = std::make_unique<TensorRTBuild>(std::move(settings));
        return TRTB_OK;
    });
    return build;
}

int32_t version(int32_t device, trtb_version_info* info, trtb_status* status) {
    return guarded(status, [&]() -> int32_t {
        if (info == nullptr) {
            return set_status(status, TRTB_ERR_INVALID_ARGUMENT, "version info is NULL");  // coverage: Go's Version always passes its own
        }
        std::memset(info, 0, sizeof(*info));
        copy_text(info->backend, sizeof(info->backend), "tensorrt", sizeof("tensorrt"));
        info->compiled_version = kCompiledVersion;
        std::string why;
        if (!TRTB_SHIM::loaded(&why)) {
            return set_status(status, TRTB_ERR_UNAVAILABLE, why);  // coverage: tensorrt.cpp calls a shim only with its libraries installed
        }
        info->loaded_version = TRTB_SHIM::loaded_version();
        // getNvOnnxParserVersion() (0.1.0, that is 100, in the releases seen so far;
        // NV_ONNX_PARSER_VERSION in NvOnnxParser.h), for the build key: a different
        // libnvonnxparser beside the same libnvinfer may parse differently.
        info->onnx_parser_version = TRTB_SHIM::loaded_parser_version();

        // The GPU through the CUDA driver API. Versions are worth reporting without one, so
        // the status says why there is none only after they are filled in.
        std::string gpu_error;
        int count = 0;
        if (!device_count(&count, &gpu_error)) {
            count = 0;  // coverage: the stand-in CUDA driver initialises and counts its GPUs without fail
        }
        info->device_count = count;
        if (gpu_error.empty() && device >= 0 && device < count) {
            DeviceInfo d;
            if (describe_device(device, &d, &gpu_error)) {
                copy_text(info->device_name, sizeof(info->device_name), d.name, sizeof(d.name));
                info->compute_major = d.compute_major;
                info->compute_minor = d.compute_minor;
                info->multiprocessor_count = d.multiprocessors;
            }
        }

        std::string message;
        if (!check_versions(info->loaded_version, &message)) {
            return set_status(status, TRTB_ERR_VERSION_MISMATCH, message);  // coverage: tensorrt.cpp calls the shim of the loaded major
        }
        if (!gpu_error.empty()) {
            return set_status(status, TRTB_ERR_UNAVAILABLE, gpu_error);  // coverage: the stand-in CUDA driver describes every GPU it counts
        }
        return set_status(status, TRTB_OK, "");
    });
}

int32_t check_builder(int32_t device, trtb_status* status) {
    return guarded(status, [&]() -> int32_t {
        std::string why;
        if (!TRTB_SHIM::loaded(&why)) {
            return set_status(status, TRTB_ERR_UNAVAILABLE, why);  // coverage: tensorrt.cpp calls a shim only with its libraries installed
        }
        if (!make_device_current(device, &why)) {
            return set_status(status, TRTB_ERR_UNAVAILABLE, why);
        }
        // What TensorRT logs while it makes the builder (it loads its builder resource then)
        // goes to a log of this check only; its errors are the answer.
        EventQueue queue;
        TRTB_SHIM::Logger log(queue, TRTB_SEVERITY_WARNING);
        int32_t code = TRTB_OK;
        {
            TRTB_SHIM::ProcessLogger::SinkScope sink(log);
            const uint64_t mark = log.mark();
            std::unique_ptr<nvinfer1::IBuilder> builder(TRTB_SHIM::create_builder(TRTB_SHIM::ProcessLogger::get()));
            if (builder == nullptr) {
                uint64_t older = 0;
                const std::vector<std::string> errors = log.errors_since(mark, &older);
                code = set_status(status, TRTB_ERR_UNAVAILABLE,
                                  "TensorRT could not create a builder: " +
                                      (errors.empty() ? std::string("TensorRT reported no error") : TRTB_SHIM::join_listed(errors)));
            }
        }  // the builder is deleted before the device's context is let go
        release_device(device);
        return code == TRTB_OK ? set_status(status, TRTB_OK, "") : code;
    });
}

void compiled(trtb_compiled_info* info) {
    info->tensorrt_version = static_cast<int32_t>(NV_TENSORRT_VERSION);
    info->tensorrt_build = static_cast<int32_t>(NV_TENSORRT_BUILD);
    info->cuda_version = static_cast<int32_t>(CUDART_VERSION);
}

}  // namespace TRTB_SHIM
}  // namespace trtb
