//go:build tensorrt

// tensorrt_entry.cpp: TensorRT's and CUDA's C entry points as the TensorRT backend calls them:
// through the libraries the worker loaded at run time (trtb_loader.h), never through the link.
// The headers' own inline factories (nvinfer1::createInferBuilder, nvonnxparser::createParser)
// are mirrored here, with the same version arguments, and the hand-written signatures of
// trtb_loader.hpp are checked against the headers' declarations at compile time (decltype
// names a function without using it, so nothing is linked).

#include "tensorrt_shim.hpp"
#include "trtb_loader.hpp"

#include <NvInferPlugin.h>

#include <mutex>
#include <type_traits>

namespace trtb {
namespace trt {

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

// The CUDA runtime's, with cudaError_t and cudaDeviceAttr passed as int (both are enums whose
// values fit; the C ABI passes such enums as int).
static_assert(sizeof(cudaError_t) == sizeof(int) && sizeof(cudaDeviceAttr) == sizeof(int),
              "CUDA enums are not int-sized");
static_assert(std::is_same<decltype(&cudaGetDeviceCount), cudaError_t (*)(int*)>::value, "");
static_assert(std::is_same<decltype(&cudaSetDevice), cudaError_t (*)(int)>::value, "");
static_assert(std::is_same<decltype(&cudaGetLastError), cudaError_t (*)()>::value, "");
static_assert(std::is_same<decltype(&cudaGetErrorString), const char* (*)(cudaError_t)>::value, "");
static_assert(std::is_same<decltype(&cudaDeviceGetAttribute), cudaError_t (*)(int*, cudaDeviceAttr, int)>::value, "");
static_assert(std::is_same<decltype(&cudaRuntimeGetVersion), cudaError_t (*)(int*)>::value, "");
static_assert(cudaSuccess == 0, "cudaSuccess is not 0");
static_assert(cudaDevAttrComputeCapabilityMajor == 75 && cudaDevAttrComputeCapabilityMinor == 76 &&
                  cudaDevAttrMultiProcessorCount == 16,
              "cudaDeviceAttr values moved");
// cudaDeviceProp begins with its name in every release; cuda_device_name relies on it.
static_assert(offsetof(cudaDeviceProp, name) == 0, "cudaDeviceProp no longer begins with name");

bool loaded(std::string* why) {
    if (installed_infer() != nullptr && installed_parser() != nullptr && installed_cuda() != nullptr) {
        return true;
    }
    *why = "the TensorRT libraries are not loaded in this process (the worker loads them before a build; "
           "see trtbuild version)";
    return false;
}

nvinfer1::IBuilder* create_builder(nvinfer1::ILogger& logger) {
    const InferEntryPoints* infer = installed_infer();
    if (infer == nullptr) {
        return nullptr;
    }
    // As NvInfer.h's inline createInferBuilder: the headers' version tells the library which
    // interface layout the caller was compiled against.
    return static_cast<nvinfer1::IBuilder*>(infer->create_builder(&logger, NV_TENSORRT_VERSION));
}

nvonnxparser::IParser* create_parser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) {
    const ParserEntryPoints* parser = installed_parser();
    if (parser == nullptr) {
        return nullptr;
    }
    // As NvOnnxParser.h's inline createParser.
    return static_cast<nvonnxparser::IParser*>(parser->create_parser(&network, &logger, NV_ONNX_PARSER_VERSION));
}

int32_t loaded_version() {
    const InferEntryPoints* infer = installed_infer();
    return infer != nullptr ? infer->get_version() : 0;
}

int32_t loaded_build() {
    const InferEntryPoints* infer = installed_infer();
    return infer != nullptr && infer->get_build != nullptr ? infer->get_build() : -1;
}

const CudaEntryPoints* cuda() {
    return installed_cuda();
}

std::string cuda_error_text(int err) {
    const CudaEntryPoints* c = installed_cuda();
    const char* text = c != nullptr ? c->get_error_string(err) : nullptr;
    return text != nullptr ? std::string(text) : "CUDA error " + std::to_string(err);
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

}  // namespace trt
}  // namespace trtb
