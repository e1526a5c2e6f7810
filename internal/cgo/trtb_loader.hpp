// trtb_loader.hpp: the entry points of the libraries the loader installed (trtb_loader.h), for
// the TensorRT backend. It needs neither TensorRT's nor CUDA's headers: the signatures are
// written out here from them and checked against them in tensorrt_build.cpp, which has both.
#ifndef TRTB_LOADER_HPP
#define TRTB_LOADER_HPP

#include "trtb_loader.h"

#include <cstdint>

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
};

// PluginEntryPoints are libnvinfer_plugin's (NvInferPlugin.h).
struct PluginEntryPoints {
    bool (*init_plugins)(void* logger, const char* lib_namespace);  // initLibNvInferPlugins
};

// CudaEntryPoints are the CUDA runtime functions the backend calls. cudaError_t is an enum,
// passed as int; cudaDeviceAttr likewise. struct cudaDeviceProp changed between CUDA 12 and 13,
// so the compute capability is read through cudaDeviceGetAttribute, and cudaGetDeviceProperties
// serves only cuda_device_name, which reads the struct's first member (see below).
struct CudaEntryPoints {
    int (*get_device_count)(int* count);                        // cudaGetDeviceCount
    int (*set_device)(int device);                              // cudaSetDevice
    int (*get_last_error)();                                    // cudaGetLastError
    const char* (*get_error_string)(int error);                 // cudaGetErrorString
    int (*device_get_attribute)(int* value, int attr, int dev);  // cudaDeviceGetAttribute
    int (*runtime_get_version)(int* version);                   // cudaRuntimeGetVersion
    int (*get_device_properties)(void* prop, int device);       // cudaGetDeviceProperties(_v2); may be null
};

// The installed entry points, or null when that library is not installed. The pointers stay
// valid for the life of the process once installed (libraries are never unloaded).
const InferEntryPoints* installed_infer();
const ParserEntryPoints* installed_parser();
const PluginEntryPoints* installed_plugin();
const CudaEntryPoints* installed_cuda();

// cuda_device_name writes the name of device into name (size bytes, NUL-terminated) and
// returns true, or returns false. It calls cudaGetDeviceProperties with a buffer much larger
// than any version's struct cudaDeviceProp and reads only `name`, the first member in every
// CUDA release, so the struct's size, which differs between CUDA 12 and 13, does not matter.
bool cuda_device_name(int device, char* name, std::size_t size);

}  // namespace trtb

#endif  // TRTB_LOADER_HPP
