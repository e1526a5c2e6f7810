// entry.cpp: what the C entry points of libnvinfer and libnvonnxparser do (objects.hpp), for
// the stand-in installed in the binary (trtb_fake_install) and the stand-in libraries
// (library.cpp) alike.

#include "objects.hpp"

#include <string>

namespace trtb {
namespace TRTB_FAKE {

bool refused(const Context& ctx, const char* api) noexcept {
    try {
        if (!glob(ctx.settings().refuse, api)) {
            return false;
        }
        ctx.error(ErrorCode::kFAILED_ALLOCATION, api, "Internal Error", "the stand-in refuses it (its refuse setting)");
    } catch (...) {
        // A refusal that cannot be logged is still a refusal.
    }
    return true;
}

nvinfer1::IBuilder* create_builder(void* logger_arg, int32_t version, const Settings& settings) noexcept {
    auto* logger = static_cast<nvinfer1::ILogger*>(logger_arg);
    try {
        auto ctx = std::make_shared<Context>(logger, settings);
        if (refused(*ctx, "createInferBuilder")) {
            return nullptr;
        }
        // As TensorRT: the caller's headers (NV_TENSORRT_VERSION) must be of this major, since
        // the classes it calls are laid out as that major lays them out.
        if (version / 10000 != kMajor) {
            ctx->log(Severity::kERROR, "createInferBuilder: Error Code 6: API Usage Error (the application was compiled "
                                       "against TensorRT " + version_text(version) + ", this is TensorRT " +
                                       version_text(ctx->version()) + ")");
            return nullptr;
        }
        ctx->log(Severity::kINFO, "[MemUsageChange] Init CUDA: CPU +2, GPU +0, now: CPU 246, GPU 460 (MiB)");
        ctx->log(Severity::kINFO,
                 "[MemUsageChange] Init builder kernel library: CPU +522, GPU +10, now: CPU 768, GPU 470 (MiB)");
        return new Builder(std::move(ctx));
    } catch (...) {
        if (logger != nullptr) {
            logger->log(Severity::kINTERNAL_ERROR, "createInferBuilder: out of memory");
        }
        return nullptr;
    }
}

nvonnxparser::IParser* create_parser(void* network, void* logger, int version) noexcept {
    auto* log = static_cast<nvinfer1::ILogger*>(logger);
    if (network == nullptr) {
        return nullptr;
    }
    // The network is one the stand-in's builder made: the parser is of the same TensorRT.
    Network& net = *static_cast<Network*>(static_cast<nvinfer1::INetworkDefinition*>(network));
    if (version / 10000 != NV_ONNX_PARSER_VERSION / 10000) {
        if (log != nullptr) {
            log->log(Severity::kERROR, "createNvOnnxParser: the application was compiled against another ONNX parser");
        }
        return nullptr;
    }
    if (refused(net.impl().context(), "createNvOnnxParser")) {
        return nullptr;
    }
    try {
        return new Parser(net, log);
    } catch (...) {
        return nullptr;
    }
}

}  // namespace TRTB_FAKE
}  // namespace trtb
