// trtb_loader.cpp: the run-time loader of trtb_loader.h. Compiled into every binary; it needs
// no TensorRT or CUDA header.
//
// Ownership: a trtb_library owns one dlopen handle until it is closed or installed. Installed
// libraries are never unloaded (TensorRT, its plugin registry and libnvinfer_plugin keep
// pointers into each other, and into the logger handed to them), so their entry points stay
// valid for the life of the process. Installing publishes the entry points with a release
// store; readers load them with acquire, so a build thread sees them whole.

#include "trtb_internal.hpp"
#include "trtb_loader.hpp"

#include <dlfcn.h>
#include <link.h>

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
    trtb::CudaEntryPoints cuda{};
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

std::string dl_error(const char* fallback) {
    const char* e = dlerror();
    return e != nullptr ? std::string(e) : std::string(fallback);
}

const char* role_name(int32_t role) {
    switch (role) {
        case TRTB_LIB_INFER:
            return "libnvinfer";
        case TRTB_LIB_ONNX_PARSER:
            return "libnvonnxparser";
        case TRTB_LIB_PLUGIN:
            return "libnvinfer_plugin";
        case TRTB_LIB_CUDART:
            return "libcudart";
    }
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
        dlerror();
        void* sym = dlsym(handle, name);
        // A function pointer from dlsym's void*: POSIX guarantees the round trip.
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
            break;
        case TRTB_LIB_PLUGIN:
            r.need(lib->plugin.init_plugins, "initLibNvInferPlugins");
            break;
        case TRTB_LIB_CUDART:
            r.need(lib->cuda.get_device_count, "cudaGetDeviceCount");
            r.need(lib->cuda.set_device, "cudaSetDevice");
            r.need(lib->cuda.get_last_error, "cudaGetLastError");
            r.need(lib->cuda.get_error_string, "cudaGetErrorString");
            r.need(lib->cuda.device_get_attribute, "cudaDeviceGetAttribute");
            r.need(lib->cuda.runtime_get_version, "cudaRuntimeGetVersion");
            // CUDA 12 exports the 12.x layout as cudaGetDeviceProperties_v2 (its header maps the
            // name to it); CUDA 13 exports cudaGetDeviceProperties again. Either is only used
            // for `name` (see cuda_device_name).
            lib->cuda.get_device_properties = r.find<int(void*, int)>("cudaGetDeviceProperties_v2");
            if (lib->cuda.get_device_properties == nullptr) {
                lib->cuda.get_device_properties = r.find<int(void*, int)>("cudaGetDeviceProperties");
            }
            break;
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

const InferEntryPoints* installed_infer() { return entry_points(TRTB_LIB_INFER, &trtb_library::infer); }
const ParserEntryPoints* installed_parser() { return entry_points(TRTB_LIB_ONNX_PARSER, &trtb_library::parser); }
const PluginEntryPoints* installed_plugin() { return entry_points(TRTB_LIB_PLUGIN, &trtb_library::plugin); }
const CudaEntryPoints* installed_cuda() { return entry_points(TRTB_LIB_CUDART, &trtb_library::cuda); }

bool cuda_device_name(int device, char* name, size_t size) {
    const CudaEntryPoints* cuda = installed_cuda();
    if (cuda == nullptr || cuda->get_device_properties == nullptr || name == nullptr || size == 0) {
        return false;
    }
    // struct cudaDeviceProp is about 1 KiB in CUDA 12 and 13; 16 KiB leaves room for any growth.
    // `name` (char[256]) is its first member in every release.
    alignas(std::max_align_t) static thread_local unsigned char prop[16384];
    std::memset(prop, 0, sizeof(prop));
    if (cuda->get_device_properties(prop, device) != 0) {
        (void)cuda->get_last_error();
        return false;
    }
    size_t n = 0;
    while (n < 255 && n + 1 < size && prop[n] != '\0') {
        name[n] = static_cast<char>(prop[n]);
        ++n;
    }
    name[n] = '\0';
    return true;
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
        dlerror();
        // RTLD_NOW: a library with an unresolvable symbol fails here, with dlerror naming it,
        // not in the middle of a build. RTLD_LOCAL: TensorRT's symbols stay out of the global
        // scope; libnvonnxparser and plugin libraries still bind to this libnvinfer, because
        // the dynamic loader matches their DT_NEEDED libnvinfer.so.<major> to the loaded
        // library's SONAME.
        // RTLD_NODELETE for libnvinfer_plugin: loading it runs static initializers that may
        // register plugin creators in libnvinfer's registry, so it must stay mapped even when
        // it was only probed (trtbuild version) and "closed" again.
        const int mode = RTLD_NOW | RTLD_LOCAL | (role == TRTB_LIB_PLUGIN ? RTLD_NODELETE : 0);
        void* handle = dlopen(path, mode);
        if (handle == nullptr) {
            return trtb::set_status(status, TRTB_ERR_UNAVAILABLE, trtb::dl_error("dlopen failed"));
        }
        auto* lib = new trtb_library();
        lib->role = role;
        lib->handle = handle;
        lib->info.role = role;
        lib->info.build = -1;
        trtb::copy_cut(lib->info.path, sizeof(lib->info.path), path);
        struct link_map* map = nullptr;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
            trtb::copy_cut(lib->info.resolved, sizeof(lib->info.resolved), map->l_name);
        }
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
        } else if (role == TRTB_LIB_CUDART) {
            int v = 0;
            if (lib->cuda.runtime_get_version(&v) == 0) {
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
    if (lib->handle != nullptr) {
        dlclose(lib->handle);
    }
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
