// tensorrt_entry.cpp: TensorRT's and the CUDA driver's C entry points as the TensorRT backend
// calls them: through the libraries the worker loaded at run time (trtb_loader.h), never
// through the link.
// The headers' own inline factories (nvinfer1::createInferBuilder, nvonnxparser::createParser)
// are mirrored here, with the same version arguments, and the hand-written signatures of
// trtb_loader.hpp are checked against the headers' declarations at compile time (decltype
// names a function without using it, so nothing is linked).

#include "tensorrt_shim.hpp"
#include "../trtb_loader.hpp"

#include <cuda.h>

#include <mutex>
#include <type_traits>

namespace trtb {
namespace TRTB_SHIM {

// The entry points' types, as NvInfer.h, NvInferRuntimeBase.h, NvInferRuntime.h,
// NvOnnxParser.h and NvInferPlugin.h declare them (10.x and 11.x alike), minus noexcept.
static_assert(std::is_same<decltype(getInferLibVersion), int32_t() noexcept>::value,
              "getInferLibVersion changed its signature");
static_assert(std::is_same<decltype(getInferLibBuildVersion), int32_t() noexcept>::value,
              "getInferLibBuildVersion changed its signature");
static_assert(std::is_same<decltype(createInferBuilder_INTERNAL), void*(void*, int32_t) noexcept>::value,
              "createInferBuilder_INTERNAL changed its signature");
static_assert(std::is_same<decltype(createNvOnnxParser_INTERNAL), void*(void*, void*, int) noexcept>::value,
              "createNvOnnxParser_INTERNAL changed its signature");
static_assert(std::is_same<decltype(initLibNvInferPlugins), bool(void*, char const*)>::value,
              "initLibNvInferPlugins changed its signature");
static_assert(std::is_same<decltype(InferEntryPoints::get_version), int32_t (*)()>::value, "");
static_assert(std::is_same<decltype(InferEntryPoints::create_builder), void* (*)(void*, int32_t)>::value, "");
static_assert(std::is_same<decltype(ParserEntryPoints::create_parser), void* (*)(void*, void*, int)>::value, "");
static_assert(std::is_same<decltype(PluginEntryPoints::init_plugins), bool (*)(void*, char const*)>::value, "");

static_assert(std::is_same<decltype(getNvOnnxParserVersion), int() noexcept>::value,
              "getNvOnnxParserVersion changed its signature");
static_assert(std::is_same<decltype(ParserEntryPoints::get_version), int (*)()>::value, "");

// The CUDA driver's, with CUresult and CUdevice_attribute passed as int (both are enums whose
// values fit; the C ABI passes such enums as int), and the symbols dlsym looks up: cuda.h maps
// some API names to versioned ones (#define cuDevicePrimaryCtxRelease
// cuDevicePrimaryCtxRelease_v2), and the stringified macro is the name the library exports.
static_assert(sizeof(CUresult) == sizeof(int) && sizeof(CUdevice_attribute) == sizeof(int),
              "CUDA driver enums are not int-sized");
static_assert(std::is_same<CUdevice, int>::value, "CUdevice is not an int");
static_assert(std::is_same<CUcontext, CUctx_st*>::value && std::is_same<CUstream, CUstream_st*>::value,
              "CUcontext or CUstream is not the opaque pointer trtb_loader.hpp declares");
// The profile stream is a driver stream handed to IBuilderConfig::setProfileStream.
static_assert(std::is_same<CUstream, cudaStream_t>::value, "CUstream and cudaStream_t differ");

#define TRTB_STRINGIFY_NAME(x) #x
#define TRTB_SYMBOL_OF(x) TRTB_STRINGIFY_NAME(x)
constexpr bool same_text(const char* a, const char* b) {
    return *a == *b && (*a == '\0' || same_text(a + 1, b + 1));
}
#define TRTB_CHECK_DRIVER_ENTRY(api, member, symbol, type)                                               \
    static_assert(std::is_same<decltype(&api), type>::value, #api " changed its signature");        \
    static_assert(same_text(TRTB_SYMBOL_OF(api), driver_symbol::symbol), #api " is exported under another name"); \
    static_assert(std::is_same<decltype(DriverEntryPoints::member), int (*)(TRTB_ARGS_##member)>::value, #member)

#define TRTB_ARGS_init unsigned int
#define TRTB_ARGS_driver_get_version int*
#define TRTB_ARGS_device_get_count int*
#define TRTB_ARGS_device_get int*, int
#define TRTB_ARGS_device_get_name char*, int, int
#define TRTB_ARGS_device_get_attribute int*, int, int
#define TRTB_ARGS_primary_ctx_retain CUcontext*, int
#define TRTB_ARGS_primary_ctx_release int
#define TRTB_ARGS_ctx_set_current CUcontext
#define TRTB_ARGS_get_error_string int, const char**
#define TRTB_ARGS_stream_create CUstream*, unsigned int
#define TRTB_ARGS_stream_destroy CUstream

TRTB_CHECK_DRIVER_ENTRY(cuInit, init, kInit, CUresult (*)(unsigned int));
TRTB_CHECK_DRIVER_ENTRY(cuDriverGetVersion, driver_get_version, kDriverGetVersion, CUresult (*)(int*));
TRTB_CHECK_DRIVER_ENTRY(cuDeviceGetCount, device_get_count, kDeviceGetCount, CUresult (*)(int*));
TRTB_CHECK_DRIVER_ENTRY(cuDeviceGet, device_get, kDeviceGet, CUresult (*)(CUdevice*, int));
TRTB_CHECK_DRIVER_ENTRY(cuDeviceGetName, device_get_name, kDeviceGetName, CUresult (*)(char*, int, CUdevice));
TRTB_CHECK_DRIVER_ENTRY(cuDeviceGetAttribute, device_get_attribute, kDeviceGetAttribute,
                        CUresult (*)(int*, CUdevice_attribute, CUdevice));
TRTB_CHECK_DRIVER_ENTRY(cuDevicePrimaryCtxRetain, primary_ctx_retain, kPrimaryCtxRetain, CUresult (*)(CUcontext*, CUdevice));
TRTB_CHECK_DRIVER_ENTRY(cuDevicePrimaryCtxRelease, primary_ctx_release, kPrimaryCtxRelease, CUresult (*)(CUdevice));
TRTB_CHECK_DRIVER_ENTRY(cuCtxSetCurrent, ctx_set_current, kCtxSetCurrent, CUresult (*)(CUcontext));
TRTB_CHECK_DRIVER_ENTRY(cuGetErrorString, get_error_string, kGetErrorString, CUresult (*)(CUresult, const char**));
TRTB_CHECK_DRIVER_ENTRY(cuStreamCreate, stream_create, kStreamCreate, CUresult (*)(CUstream*, unsigned int));
TRTB_CHECK_DRIVER_ENTRY(cuStreamDestroy, stream_destroy, kStreamDestroy, CUresult (*)(CUstream));

static_assert(CUDA_SUCCESS == kCudaSuccess, "CUDA_SUCCESS moved");
static_assert(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == kAttrComputeCapabilityMajor &&
                  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == kAttrComputeCapabilityMinor &&
                  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == kAttrMultiprocessorCount,
              "CUdevice_attribute values moved");
static_assert(CU_STREAM_NON_BLOCKING == kStreamNonBlocking, "CU_STREAM_NON_BLOCKING moved");

bool loaded(std::string* why) {
    if (installed_infer() != nullptr && installed_parser() != nullptr) {
        return true;
    }
    // coverage: tensorrt.cpp calls a shim only with its libraries installed
    *why = "the TensorRT libraries are not loaded in this process (the worker loads them before a build; "
           "see trtbuild version)";
    return false;
}

nvinfer1::IBuilder* create_builder(nvinfer1::ILogger& logger) {
    const InferEntryPoints* infer = installed_infer();
    if (infer == nullptr) {
        return nullptr;  // coverage: tensorrt.cpp calls a shim only with its libraries installed
    }
    // As NvInfer.h's inline createInferBuilder: the headers' version tells the library which
    // interface layout the caller was compiled against.
    return static_cast<nvinfer1::IBuilder*>(infer->create_builder(&logger, NV_TENSORRT_VERSION));
}

nvonnxparser::IParser* create_parser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) {
    const ParserEntryPoints* parser = installed_parser();
    if (parser == nullptr) {
        return nullptr;  // coverage: tensorrt.cpp calls a shim only with its libraries installed
    }
    // As NvOnnxParser.h's inline createParser.
    return static_cast<nvonnxparser::IParser*>(parser->create_parser(&network, &logger, NV_ONNX_PARSER_VERSION));
}

int32_t loaded_version() {
    const InferEntryPoints* infer = installed_infer();
    return infer != nullptr ? infer->get_version() : 0;
}

int32_t loaded_parser_version() {
    const ParserEntryPoints* parser = installed_parser();
    return parser != nullptr && parser->get_version != nullptr ? parser->get_version() : 0;
}

bool init_builtin_plugins() {
    const PluginEntryPoints* plugin = installed_plugin();
    if (plugin == nullptr) {
        return true;
    }
    // libnvinfer_plugin registers EfficientNMS, BatchedNMS, ROIAlign and most of its other
    // creators only here (plugin/api/inferPlugin.cpp; its export map, plugin/exports/
    // nvinfer_plugin.map, exports nothing else), and keeps the logger for good.
    static std::once_flag once;
    static bool registered = false;
    std::call_once(once, [plugin] { registered = plugin->init_plugins(&ProcessLogger::get(), ""); });
    return registered;
}

}  // namespace TRTB_SHIM
}  // namespace trtb
