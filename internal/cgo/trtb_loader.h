/*
 * trtb_loader.h: the run-time loader of the TensorRT backend's shared libraries.
 *
 * trtbuild is one binary with or without TensorRT installed: the backend never links
 * libnvinfer, libnvonnxparser, libnvinfer_plugin or the CUDA driver (libcuda). The worker loads
 * them with dlopen (LoadLibraryExW on Windows) before a TensorRT build and resolves their C
 * entry points with dlsym (GetProcAddress); the backend (tensorrt_*.cpp) calls TensorRT and CUDA only through those entry points and the
 * objects they make. No CUDA runtime (libcudart) is loaded: TensorRT links it statically, and
 * the GPU is listed, named and selected through the driver API.
 *
 * This loader needs neither TensorRT's nor CUDA's headers and is compiled into every binary,
 * so its search order and version guard are tested everywhere, against stand-in libraries.
 * The search order itself is Go's (internal/trt.Search); this file only opens one candidate
 * at a time and installs the ones chosen.
 *
 * Threading: trtb_library_open and trtb_library_close may be called from any thread.
 * trtb_library_install must not race with a TensorRT build or another install (the worker
 * installs once, before its build). What is installed stays loaded for the life of the
 * process: TensorRT, its plugin registry and libnvinfer_plugin keep pointers into each other.
 */
#ifndef TRTB_LOADER_H
#define TRTB_LOADER_H

#include <stdint.h>

#include "trtb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The libraries, as internal/trt.Library numbers them. */
enum trtb_library_role {
    TRTB_LIB_INFER = 0,       /* libnvinfer.so.<major>; nvinfer_<major>.dll on Windows */
    TRTB_LIB_ONNX_PARSER = 1, /* libnvonnxparser.so.<major>; nvonnxparser_<major>.dll */
    TRTB_LIB_PLUGIN = 2,      /* libnvinfer_plugin.so.<major>; nvinfer_plugin_<major>.dll */
    TRTB_LIB_CUDA_DRIVER = 3, /* libcuda.so.1; nvcuda.dll */
    TRTB_LIB_COUNT = 4
};

/* trtb_library_info describes one opened library. */
typedef struct trtb_library_info {
    int32_t role;
    /* libnvinfer: getInferLibVersion() (major*10000+minor*100+patch); libnvonnxparser:
     * getNvOnnxParserVersion() where the library exports it (major*10000+minor*100+patch), else
     * 0; libcuda: cuDriverGetVersion() (major*1000+minor*10, the newest CUDA the driver
     * supports); 0 for the others. */
    int32_t version;
    /* libnvinfer: getInferLibBuildVersion() where the library exports it (TensorRT 10.x has it
     * since 10.?; see tensorrt.md), else -1. */
    int32_t build;
    char path[1024];     /* what dlopen (LoadLibraryExW) was given, UTF-8 */
    char resolved[1024]; /* the file the loader actually mapped (dlinfo; GetModuleFileNameW), or "" */
} trtb_library_info;

/* trtb_library is one opened library with its entry points resolved. */
typedef struct trtb_library trtb_library;

/* trtb_library_open opens path with dlopen(RTLD_NOW | RTLD_LOCAL) (on Windows LoadLibraryExW with
 * LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS for a path, only the
 * default folders for a bare name: see trtb_platform.hpp) and resolves the entry points
 * of role, which must all be there. For libnvinfer it then asks the library for its version.
 * It does not check versions (Go does) and makes nothing current: the library is used only
 * once installed.
 * Errors: TRTB_ERR_UNAVAILABLE when dlopen fails (no such file, wrong architecture, an
 * undefined symbol, ...) or an entry point is missing, with dlerror's text;
 * TRTB_ERR_INVALID_ARGUMENT for a bad role or path. On success *out owns the library; pass it
 * to trtb_library_install or trtb_library_close. */
int32_t trtb_library_open(int32_t role, const char *path, trtb_library **out, trtb_library_info *info,
                          trtb_status *status);

/* trtb_library_close unloads a library that was not installed (libnvinfer_plugin stays mapped:
 * it is opened with RTLD_NODELETE, because its static initializers may have registered plugin
 * creators with libnvinfer). NULL is ignored. */
void trtb_library_close(trtb_library *lib);

/* trtb_library_add_dir adds the absolute folder dir to the folders this process's loader
 * searches for DLLs loaded by bare name (Windows: AddDllDirectory, the first call also
 * SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS), so that TensorRT finds its
 * builder resources and lean runtime next to nvinfer_<major>.dll, and no DLL is taken from the
 * working folder or PATH). TRTB_ERR_UNAVAILABLE with Windows' text when it is refused, and on
 * Linux, where the worker starts with LD_LIBRARY_PATH instead. */
int32_t trtb_library_add_dir(const char *dir, trtb_status *status);

/* trtb_library_install makes lib the process's library of its role and takes it over; it is
 * never unloaded. A role is installed at most once: a second install is TRTB_ERR_INVALID_ARGUMENT
 * and lib stays the caller's. Not while a TensorRT build runs. */
int32_t trtb_library_install(trtb_library *lib, trtb_status *status);

/* trtb_library_installed fills info about the library installed for role and returns 1, or
 * returns 0 when none is. Any thread. */
int32_t trtb_library_installed(int32_t role, trtb_library_info *info);

/* trtb_check_builder creates a TensorRT builder on CUDA device `device` and deletes it again,
 * as a build would create it (the device's primary context current on the calling thread, the
 * process logger): TensorRT loads its builder resource library then, by file name. The
 * libraries must be installed. TRTB_ERR_UNAVAILABLE when there is no device or TensorRT
 * returns no builder, with the errors TensorRT logged (Error Code 6: ... Unable to load
 * library: ...). Not while a TensorRT build runs in the process. */
int32_t trtb_check_builder(int32_t device, trtb_status *status);

/* trtb_tensorrt_compiled describes the headers each TensorRT shim of this binary was compiled
 * against (the vendored headers of third_party/tensorrt): NV_TENSORRT_VERSION,
 * NV_TENSORRT_BUILD and CUDART_VERSION of the declarations in cudadecl/, newest major first.
 * It fills at most n entries of info and returns how many shims there are (2: TensorRT 11 and
 * 10). */
typedef struct trtb_compiled_info {
    int32_t tensorrt_version;
    int32_t tensorrt_build;
    int32_t cuda_version;
} trtb_compiled_info;
int32_t trtb_tensorrt_compiled(trtb_compiled_info *info, int32_t n);

#ifdef __cplusplus
}
#endif

#endif /* TRTB_LOADER_H */
