// trtb_loader.cpp: the run-time loader of trtb_loader.h, and the GPU through the CUDA driver
// it loaded (trtb_loader.hpp). Compiled into every binary; it needs no TensorRT or CUDA header.
//
// Ownership: a trtb_library owns one loaded library (a dlopen handle; an HMODULE on Windows)
// until it is closed or installed. Installed libraries are never unloaded (TensorRT, its plugin registry and libnvinfer_plugin keep
// pointers into each other, and into the logger handed to them), so their entry points stay
// valid for the life of the process. Installing publishes the entry points with a release
// store; readers load them with acquire, so a build thread sees them whole.

#include "trtb_internal.hpp"
#include "trtb_loader.hpp"
#include "trtb_platform.hpp"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

struct trtb_library {
    int32_t role = -1;
    void* handle = nullptr;
    trtb_library_info info{};
    trtb::InferEntryPoints infer{};
    trtb::ParserEntryPoints parser{};
    trtb::PluginEntryPoints plugin{};
    trtb::DriverEntryPoints driver{};
};

namespace trtb {
namespace {

std::mutex install_mu;                                     // serialises installs
std::atomic<trtb_library*> installed[TRTB_LIB_COUNT] = {};  // set once each, never cleared

void copy_cut(char* dst, size_t size, const std::string& src) {
    const size_t n = src.size() < size - 1 ? src.size() : size - 1;
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

// role_name names a library as its files are named: libnvinfer.so.10 on Linux, nvinfer_10.dll
// on Windows, whose CUDA driver is nvcuda.dll.
const char* role_name(int32_t role) {
#ifdef _WIN32
    switch (role) {
        case TRTB_LIB_INFER:
            return "nvinfer";
        case TRTB_LIB_ONNX_PARSER:
            return "nvonnxparser";
        case TRTB_LIB_PLUGIN:
            return "nvinfer_plugin";
        case TRTB_LIB_CUDA_DRIVER:
            return "nvcuda";
    }
#else
    switch (role) {
        case TRTB_LIB_INFER:
            return "libnvinfer";
        case TRTB_LIB_ONNX_PARSER:
            return "libnvonnxparser";
        case TRTB_LIB_PLUGIN:
            return "libnvinfer_plugin";
        case TRTB_LIB_CUDA_DRIVER:
            return "libcuda";
    }
#endif
    return "library";
}

// Resolver looks entry points up in one handle and remembers the first that is missing.
struct Resolver {
    void* handle;
    std::string missing;

    template <typename Fn>
    void need(Fn*& fn, const char* name) {
        fn = find<Fn>(name);
        if (fn == nullptr && missing.empty()) {
            missing = name;
        }
    }

    template <typename Fn>
    Fn* find(const char* name) {
        void* sym = platform::library_symbol(handle, name);
        // A function pointer from dlsym's void*: POSIX guarantees the round trip (and Windows'
        // GetProcAddress hands out a function pointer to begin with).
        return reinterpret_cast<Fn*>(sym);
    }
};

int32_t resolve(trtb_library* lib, std::string* missing) {
    Resolver r{lib->handle, {}};
    switch (lib->role) {
        case TRTB_LIB_INFER:
            r.need(lib->infer.get_version, "getInferLibVersion");
            r.need(lib->infer.create_builder, "createInferBuilder_INTERNAL");
            lib->infer.get_build = r.find<int32_t()>("getInferLibBuildVersion");
            break;
        case TRTB_LIB_ONNX_PARSER:
            r.need(lib->parser.create_parser, "createNvOnnxParser_INTERNAL");
            lib->parser.get_version = r.find<int()>("getNvOnnxParserVersion");
            break;
        case TRTB_LIB_PLUGIN:
            r.need(lib->plugin.init_plugins, "initLibNvInferPlugins");
            break;
        case TRTB_LIB_CUDA_DRIVER: {
            namespace sym = driver_symbol;
            DriverEntryPoints& d = lib->driver;
            r.need(d.init, sym::kInit);
            r.need(d.driver_get_version, sym::kDriverGetVersion);
            r.need(d.device_get_count, sym::kDeviceGetCount);
            r.need(d.device_get, sym::kDeviceGet);
            r.need(d.device_get_name, sym::kDeviceGetName);
            r.need(d.device_get_attribute, sym::kDeviceGetAttribute);
            r.need(d.primary_ctx_retain, sym::kPrimaryCtxRetain);
            r.need(d.primary_ctx_release, sym::kPrimaryCtxRelease);
            r.need(d.ctx_set_current, sym::kCtxSetCurrent);
            r.need(d.get_error_string, sym::kGetErrorString);
            r.need(d.stream_create, sym::kStreamCreate);
            r.need(d.stream_destroy, sym::kStreamDestroy);
            break;
        }
    }
    *missing = r.missing;
    return missing->empty() ? TRTB_OK : TRTB_ERR_UNAVAILABLE;
}

template <typename T>
const T* entry_points(int32_t role, T trtb_library::*member) {
    trtb_library* lib = installed[role].load(std::memory_order_acquire);
    return lib != nullptr ? &(lib->*member) : nullptr;
}

}  // namespace

int32_t install_linked(const LinkedLibraries& libs, trtb_status* status) {
    trtb_library* made[TRTB_LIB_COUNT] = {};
    for (int32_t role = 0; role < TRTB_LIB_COUNT; ++role) {
        made[role] = new (std::nothrow) trtb_library();
        if (made[role] == nullptr) {
            for (trtb_library* lib : made) {
                delete lib;
            }
            return set_status(status, TRTB_ERR_OUT_OF_MEMORY, "out of memory installing " + libs.name);
        }
        trtb_library* lib = made[role];
        lib->role = role;
        lib->info.role = role;
        lib->info.build = -1;
        copy_cut(lib->info.path, sizeof(lib->info.path), libs.name);
    }
    made[TRTB_LIB_INFER]->infer = libs.infer;
    made[TRTB_LIB_INFER]->info.version = libs.infer.get_version();
    made[TRTB_LIB_INFER]->info.build = libs.infer.get_build != nullptr ? libs.infer.get_build() : -1;
    made[TRTB_LIB_ONNX_PARSER]->parser = libs.parser;
    made[TRTB_LIB_ONNX_PARSER]->info.version = libs.parser.get_version != nullptr ? libs.parser.get_version() : 0;
    made[TRTB_LIB_PLUGIN]->plugin = libs.plugin;
    made[TRTB_LIB_CUDA_DRIVER]->driver = libs.driver;
    int version = 0;
    if (libs.driver.driver_get_version != nullptr && libs.driver.driver_get_version(&version) == kCudaSuccess) {
        made[TRTB_LIB_CUDA_DRIVER]->info.version = version;
    }
    std::lock_guard<std::mutex> lock(install_mu);
    for (int32_t role = 0; role < TRTB_LIB_COUNT; ++role) {
        if (installed[role].load(std::memory_order_acquire) != nullptr) {
            for (trtb_library* lib : made) {
                delete lib;
            }
            return set_status(status, TRTB_ERR_STATE,
                              std::string(role_name(role)) + " is already loaded in this process; " + libs.name +
                                  " cannot be installed beside it");
        }
    }
    for (int32_t role = 0; role < TRTB_LIB_COUNT; ++role) {
        installed[role].store(made[role], std::memory_order_release);
    }
    return set_status(status, TRTB_OK, "");
}

const InferEntryPoints* installed_infer() { return entry_points(TRTB_LIB_INFER, &trtb_library::infer); }
const ParserEntryPoints* installed_parser() { return entry_points(TRTB_LIB_ONNX_PARSER, &trtb_library::parser); }
const PluginEntryPoints* installed_plugin() { return entry_points(TRTB_LIB_PLUGIN, &trtb_library::plugin); }
const DriverEntryPoints* installed_driver() { return entry_points(TRTB_LIB_CUDA_DRIVER, &trtb_library::driver); }

namespace {

// driver_text says why call failed: "cuInit: no CUDA-capable device is detected (CUDA error
// 100)", in the words of cuGetErrorString where the driver has them.
std::string driver_text(const DriverEntryPoints& d, const char* call, int err) {
    const char* text = nullptr;
    if (d.get_error_string(err, &text) != kCudaSuccess || text == nullptr) {
        text = "unknown CUDA error";
    }
    return std::string(call) + ": " + text + " (CUDA error " + std::to_string(err) + ")";
}

// driver_ready returns the installed driver, initialised (cuInit(0) once per process: the
// driver API needs it before any other call, and it may be called again but answers the same).
const DriverEntryPoints* driver_ready(std::string* why) {
    const DriverEntryPoints* d = installed_driver();
    if (d == nullptr) {
#ifdef _WIN32
        *why = "the CUDA driver (nvcuda.dll) is not loaded in this process";
#else
        *why = "the CUDA driver (libcuda.so.1) is not loaded in this process";
#endif
        return nullptr;
    }
    static std::once_flag once;
    static int init_error = 0;
    std::call_once(once, [d] { init_error = d->init(0); });
    if (init_error != kCudaSuccess) {
        *why = driver_text(*d, "cuInit", init_error);
        return nullptr;
    }
    return d;
}

// device_handle turns an ordinal into the driver's device, refusing one out of range.
const DriverEntryPoints* device_handle(int ordinal, int* device, std::string* why) {
    int count = 0;
    if (!device_count(&count, why)) {
        return nullptr;
    }
    if (ordinal < 0 || ordinal >= count) {
        *why = "--device " + std::to_string(ordinal) + ": invalid device ordinal, CUDA sees " + std::to_string(count) +
               " GPU(s) numbered from 0";
        return nullptr;
    }
    const DriverEntryPoints* d = installed_driver();
    if (const int err = d->device_get(device, ordinal); err != kCudaSuccess) {
        *why = driver_text(*d, "cuDeviceGet", err);
        return nullptr;
    }
    return d;
}

}  // namespace

bool device_count(int* count, std::string* why) {
    *count = 0;
    const DriverEntryPoints* d = driver_ready(why);
    if (d == nullptr) {
        return false;
    }
    if (const int err = d->device_get_count(count); err != kCudaSuccess) {
        *count = 0;
        *why = driver_text(*d, "cuDeviceGetCount", err);
        return false;
    }
    return true;
}

bool describe_device(int ordinal, DeviceInfo* out, std::string* why) {
    int device = 0;
    const DriverEntryPoints* d = device_handle(ordinal, &device, why);
    if (d == nullptr) {
        return false;
    }
    *out = DeviceInfo{};
    if (const int err = d->device_get_name(out->name, static_cast<int>(sizeof(out->name)), device); err != kCudaSuccess) {
        *why = driver_text(*d, "cuDeviceGetName", err);
        return false;
    }
    out->name[sizeof(out->name) - 1] = '\0';
    const struct {
        int attribute;
        int* value;
    } attrs[] = {{kAttrComputeCapabilityMajor, &out->compute_major},
                 {kAttrComputeCapabilityMinor, &out->compute_minor},
                 {kAttrMultiprocessorCount, &out->multiprocessors}};
    for (const auto& a : attrs) {
        if (const int err = d->device_get_attribute(a.value, a.attribute, device); err != kCudaSuccess) {
            *why = driver_text(*d, "cuDeviceGetAttribute", err);
            return false;
        }
    }
    return true;
}

bool make_device_current(int ordinal, std::string* why) {
    int device = 0;
    const DriverEntryPoints* d = device_handle(ordinal, &device, why);
    if (d == nullptr) {
        return false;
    }
    CUctx_st* context = nullptr;
    if (const int err = d->primary_ctx_retain(&context, device); err != kCudaSuccess) {
        *why = driver_text(*d, "cuDevicePrimaryCtxRetain", err);
        return false;
    }
    if (const int err = d->ctx_set_current(context); err != kCudaSuccess) {
        *why = driver_text(*d, "cuCtxSetCurrent", err);
        (void)d->primary_ctx_release(device);
        return false;
    }
    return true;
}

void release_device(int ordinal) {
    std::string why;
    int device = 0;
    const DriverEntryPoints* d = device_handle(ordinal, &device, &why);
    if (d == nullptr) {
        return;
    }
    (void)d->ctx_set_current(nullptr);
    (void)d->primary_ctx_release(device);
}

bool create_stream(CUstream_st** stream, std::string* why) {
    *stream = nullptr;
    const DriverEntryPoints* d = driver_ready(why);
    if (d == nullptr) {
        return false;
    }
    if (const int err = d->stream_create(stream, kStreamNonBlocking); err != kCudaSuccess) {
        *stream = nullptr;
        *why = driver_text(*d, "cuStreamCreate", err);
        return false;
    }
    return true;
}

void destroy_stream(CUstream_st* stream) {
    const DriverEntryPoints* d = installed_driver();
    if (d != nullptr && stream != nullptr) {
        (void)d->stream_destroy(stream);
    }
}

}  // namespace trtb

extern "C" {

int32_t trtb_library_open(int32_t role, const char* path, trtb_library** out, trtb_library_info* info,
                          trtb_status* status) {
    try {
        if (out != nullptr) {
            *out = nullptr;
        }
        if (role < 0 || role >= TRTB_LIB_COUNT || out == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "trtb_library_open: bad role or out pointer");
        }
        if (path == nullptr || path[0] == '\0') {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "trtb_library_open: empty path");
        }
        // Bound now (RTLD_NOW; Windows binds every import at load): a library with an
        // unresolvable symbol fails here, naming it, not in the middle of a build.
        // Pinned for libnvinfer_plugin (RTLD_NODELETE; GET_MODULE_HANDLE_EX_FLAG_PIN): loading
        // it runs static initializers that may register plugin creators in libnvinfer's
        // registry, so it must stay mapped even when it was only probed (trtbuild version) and
        // "closed" again.
        std::string why;
        void* handle = trtb::platform::open_library(path, false, role == TRTB_LIB_PLUGIN, &why);
        if (handle == nullptr) {
            return trtb::set_status(status, TRTB_ERR_UNAVAILABLE, why);
        }
        auto* lib = new trtb_library();
        lib->role = role;
        lib->handle = handle;
        lib->info.role = role;
        lib->info.build = -1;
        trtb::copy_cut(lib->info.path, sizeof(lib->info.path), path);
        trtb::copy_cut(lib->info.resolved, sizeof(lib->info.resolved), trtb::platform::library_file(handle));
        std::string missing;
        if (trtb::resolve(lib, &missing) != TRTB_OK) {
            const std::string msg = std::string(trtb::role_name(role)) + " entry point " + missing +
                                    " is missing from " + path + "; it is not a TensorRT-compatible " +
                                    trtb::role_name(role);
            trtb_library_close(lib);
            return trtb::set_status(status, TRTB_ERR_UNAVAILABLE, msg);
        }
        if (role == TRTB_LIB_INFER) {
            lib->info.version = lib->infer.get_version();
            if (lib->infer.get_build != nullptr) {
                lib->info.build = lib->infer.get_build();
            }
        } else if (role == TRTB_LIB_ONNX_PARSER) {
            if (lib->parser.get_version != nullptr) {
                lib->info.version = lib->parser.get_version();
            }
        } else if (role == TRTB_LIB_CUDA_DRIVER) {
            // cuDriverGetVersion needs no cuInit: it is answered even without a GPU.
            int v = 0;
            if (lib->driver.driver_get_version(&v) == trtb::kCudaSuccess) {
                lib->info.version = v;
            }
        }
        if (info != nullptr) {
            *info = lib->info;
        }
        *out = lib;
        return trtb::set_status(status, TRTB_OK, "");
    } catch (const std::bad_alloc&) {
        return trtb::set_status(status, TRTB_ERR_OUT_OF_MEMORY, "host memory ran out while loading a library");
    } catch (...) {
        return trtb::set_status(status, TRTB_ERR_INTERNAL, "internal error while loading a library");
    }
}

void trtb_library_close(trtb_library* lib) {
    if (lib == nullptr) {
        return;
    }
    trtb::platform::close_library(lib->handle);
    delete lib;
}

int32_t trtb_library_install(trtb_library* lib, trtb_status* status) {
    try {
        if (lib == nullptr || lib->role < 0 || lib->role >= TRTB_LIB_COUNT) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "trtb_library_install: no library");
        }
        std::lock_guard<std::mutex> lock(trtb::install_mu);
        if (trtb::installed[lib->role].load(std::memory_order_acquire) != nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                                    std::string(trtb::role_name(lib->role)) + " is already loaded in this process");
        }
        trtb::installed[lib->role].store(lib, std::memory_order_release);
        return trtb::set_status(status, TRTB_OK, "");
    } catch (...) {
        return trtb::set_status(status, TRTB_ERR_INTERNAL, "internal error while installing a library");
    }
}

int32_t trtb_library_add_dir(const char* dir, trtb_status* status) {
    try {
        if (dir == nullptr || dir[0] == '\0') {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "trtb_library_add_dir: empty folder");
        }
        std::string why;
        if (!trtb::platform::add_library_dir(dir, &why)) {
            return trtb::set_status(status, TRTB_ERR_UNAVAILABLE, why);
        }
        return trtb::set_status(status, TRTB_OK, "");
    } catch (...) {
        return trtb::set_status(status, TRTB_ERR_INTERNAL, "internal error while adding a library folder");
    }
}

int32_t trtb_check_builder(int32_t device, trtb_status* status) {
    return trtb::tensorrt_check_builder(device, status);
}

int32_t trtb_library_installed(int32_t role, trtb_library_info* info) {
    if (role < 0 || role >= TRTB_LIB_COUNT) {
        return 0;
    }
    trtb_library* lib = trtb::installed[role].load(std::memory_order_acquire);
    if (lib == nullptr) {
        return 0;
    }
    if (info != nullptr) {
        *info = lib->info;
    }
    return 1;
}

}  // extern "C"
