//go:build tensorrt

// tensorrt_build.cpp: one TensorRT build: select the device, load plugins, parse the ONNX
// model, build and serialize the plan into the caller's file; and the backend's factory
// functions behind trtb.h (see tensorrt_shim.hpp for how the backend is split and its rules).

#include "tensorrt_shim.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace trtb {
namespace trt {
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

}  // namespace

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

}  // namespace trt

using trt::check_versions;
using trt::copy_settings;
using trt::copy_text;
using trt::kCompiledVersion;
using trt::Settings;
using trt::TensorRTBuild;

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
