// trtb_loader.hpp: the entry points of the libraries the loader installed (trtb_loader.h), for
// the TensorRT backend, and the GPU through the CUDA driver. It needs neither TensorRT's nor
// CUDA's headers: the signatures are written out here from them and checked against them in
// tensorrt_entry.cpp, which has both.
#ifndef TRTB_LOADER_HPP
#define TRTB_LOADER_HPP

#include "trtb_loader.h"

#include <cstddef>
#include <cstdint>
#include <string>

// The driver's opaque handles, declared as cuda.h declares them (typedef struct CUctx_st
// *CUcontext; typedef struct CUstream_st *CUstream), so that they are the same types.
struct CUctx_st;
struct CUstream_st;

namespace trtb {

// InferEntryPoints are libnvinfer's C entry points (NvInferRuntimeBase.h, NvInfer.h,
// NvInferRuntime.h of 10.x and 11.x).
struct InferEntryPoints {
    int32_t (*get_version)();                                 // getInferLibVersion
    int32_t (*get_build)();                                   // getInferLibBuildVersion; may be null
    void* (*create_builder)(void* logger, int32_t version);  // createInferBuilder_INTERNAL
};

// ParserEntryPoints are libnvonnxparser's (NvOnnxParser.h).
struct ParserEntryPoints {
    void* (*create_parser)(void* network, void* logger, int version);  // createNvOnnxParser_INTERNAL
    int (*get_version)();                                               // getNvOnnxParserVersion; may be null
};

// PluginEntryPoints are libnvinfer_plugin's (NvInferPlugin.h).
struct PluginEntryPoints {
    bool (*init_plugins)(void* logger, const char* lib_namespace);  // initLibNvInferPlugins
};

// DriverEntryPoints are the CUDA driver API functions (cuda.h) the backend calls. CUresult
// and CUdevice_attribute are enums, passed as int; CUdevice is an int; CUcontext and CUstream
// are the same opaque pointer types as cuda.h's. The symbols are the versioned names cuda.h
// maps the API names to (kDriverSymbols); tensorrt_entry.cpp checks both against cuda.h.
struct DriverEntryPoints {
    int (*init)(unsigned int flags);                                // cuInit
    int (*driver_get_version)(int* version);                        // cuDriverGetVersion
    int (*device_get_count)(int* count);                            // cuDeviceGetCount
    int (*device_get)(int* device, int ordinal);                    // cuDeviceGet
    int (*device_get_name)(char* name, int len, int device);        // cuDeviceGetName
    int (*device_get_attribute)(int* value, int attribute, int device);  // cuDeviceGetAttribute
    int (*primary_ctx_retain)(CUctx_st** context, int device);      // cuDevicePrimaryCtxRetain
    int (*primary_ctx_release)(int device);                         // cuDevicePrimaryCtxRelease_v2
    int (*ctx_set_current)(CUctx_st* context);                      // cuCtxSetCurrent
    int (*get_error_string)(int error, const char** text);          // cuGetErrorString
    int (*stream_create)(CUstream_st** stream, unsigned int flags);  // cuStreamCreate
    int (*stream_destroy)(CUstream_st* stream);                     // cuStreamDestroy_v2
};

// The symbols dlsym looks up for DriverEntryPoints, in its order.
namespace driver_symbol {
constexpr char kInit[] = "cuInit";
constexpr char kDriverGetVersion[] = "cuDriverGetVersion";
constexpr char kDeviceGetCount[] = "cuDeviceGetCount";
constexpr char kDeviceGet[] = "cuDeviceGet";
constexpr char kDeviceGetName[] = "cuDeviceGetName";
constexpr char kDeviceGetAttribute[] = "cuDeviceGetAttribute";
constexpr char kPrimaryCtxRetain[] = "cuDevicePrimaryCtxRetain";
constexpr char kPrimaryCtxRelease[] = "cuDevicePrimaryCtxRelease_v2";
constexpr char kCtxSetCurrent[] = "cuCtxSetCurrent";
constexpr char kGetErrorString[] = "cuGetErrorString";
constexpr char kStreamCreate[] = "cuStreamCreate";
constexpr char kStreamDestroy[] = "cuStreamDestroy_v2";
}  // namespace driver_symbol

// cuda.h's values of what the backend passes (checked against cuda.h in tensorrt_entry.cpp).
constexpr int kCudaSuccess = 0;                        // CUDA_SUCCESS
constexpr int kAttrMultiprocessorCount = 16;           // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrComputeCapabilityMajor = 75;        // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeCapabilityMinor = 76;        // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr unsigned int kStreamNonBlocking = 0x1;       // CU_STREAM_NON_BLOCKING

// LinkedLibraries are the entry points of a TensorRT compiled into the binary: the stand-in
// TensorRT (trtb_fake.h). name is what the libraries' trtb_library_info path says.
struct LinkedLibraries {
    InferEntryPoints infer{};
    ParserEntryPoints parser{};
    PluginEntryPoints plugin{};
    DriverEntryPoints driver{};
    std::string name;
};

// install_linked installs libs as the process's libnvinfer, libnvonnxparser, libnvinfer_plugin
// and CUDA driver, all or none: TRTB_ERR_STATE when one of them is installed already. The
// tables are copied; the functions they point to are the binary's, valid for its life.
int32_t install_linked(const LinkedLibraries& libs, trtb_status* status);

// The installed entry points, or null when that library is not installed. The pointers stay
// valid for the life of the process once installed (libraries are never unloaded).
const InferEntryPoints* installed_infer();
const ParserEntryPoints* installed_parser();
const PluginEntryPoints* installed_plugin();
const DriverEntryPoints* installed_driver();

// ---------------------------------------------------------------------------------------------
// The GPU, through the installed CUDA driver. Every function returns false with *why (one line
// naming the call, cuGetErrorString's text and the CUDA error number) when the driver is not
// installed or refuses; none throws.

// DeviceInfo describes one CUDA device.
struct DeviceInfo {
    char name[256] = {};  // cuDeviceGetName: "NVIDIA H200", "NVIDIA A100-SXM4-40GB MIG 1g.5gb"
    int compute_major = 0, compute_minor = 0;
    int multiprocessors = 0;  // fewer on a MIG slice than on the whole GPU
};

// device_count initialises the driver (cuInit, once per process) and counts the devices.
bool device_count(int* count, std::string* why);
// describe_device fills *out for device ordinal.
bool describe_device(int ordinal, DeviceInfo* out, std::string* why);
// make_device_current selects device ordinal for the calling thread, as cudaSetDevice does for
// the runtime: it retains the device's primary context (the one the CUDA runtime, which
// TensorRT links statically, uses) and makes it current on this thread, so that TensorRT's
// work on this thread goes to that device. An ordinal out of range is refused naming how many
// devices there are. The retain is the caller's: release it with release_device once no
// TensorRT object made on this thread is left (a worker's build keeps it until the process
// exits).
bool make_device_current(int ordinal, std::string* why);
// release_device makes no context current on the calling thread and releases the retain of
// make_device_current (cuDevicePrimaryCtxRelease).
void release_device(int ordinal);
// create_stream creates a stream of the current context that does not synchronize with the
// legacy default stream (CU_STREAM_NON_BLOCKING), as trtexec's profile stream; the caller owns
// it and destroys it with destroy_stream. CUstream and the runtime's cudaStream_t are one type.
bool create_stream(CUstream_st** stream, std::string* why);
void destroy_stream(CUstream_st* stream);

}  // namespace trtb

#endif  // TRTB_LOADER_HPP
