// builder.cpp: the stand-in's builder and its plugin registry (objects.hpp); the builds
// themselves are build.cpp's.

#include "objects.hpp"

#include <cstdio>
#include <string>

namespace trtb {
namespace TRTB_FAKE {

// ---------------------------------------------------------------------------------------------
// The plugin registry.

void Registry::setErrorRecorder(nvinfer1::IErrorRecorder* const recorder) noexcept {
    if (recorder != nullptr) {
        recorder->incRefCount();
    }
    if (recorder_ != nullptr) {
        recorder_->decRefCount();
    }
    recorder_ = recorder;
}

Registry::PluginLibraryHandle Registry::loadLibrary(nvinfer1::AsciiChar const* path) noexcept {
    return api_guard(*ctx_, "IPluginRegistry::loadLibrary", static_cast<PluginLibraryHandle>(nullptr),
                     [&]() -> PluginLibraryHandle {
                         const std::string p = path != nullptr ? path : "";
                         // The stand-in runs no plugin code: a library it can open is "loaded".
                         std::FILE* f = std::fopen(p.c_str(), "rb");
                         if (f == nullptr) {
                             const std::string desc = "IPluginRegistry::loadLibrary: Error Code 6: API Usage Error "
                                                      "(Unable to load library: " + p + ")";
                             if (recorder_ != nullptr) {
                                 recorder_->reportError(ErrorCode::kFAILED_INITIALIZATION, desc.c_str());
                             } else {
                                 ctx_->log(Severity::kERROR, desc);
                             }
                             return nullptr;
                         }
                         std::fclose(f);
                         loaded_.push_back(std::make_unique<std::string>(p));
                         return loaded_.back().get();
                     });
}

// ---------------------------------------------------------------------------------------------
// The builder.

BuilderImpl::~BuilderImpl() {
    registry_.setErrorRecorder(nullptr);
    if (ctx_->settings().on_builder_deleted) {
        ctx_->settings().on_builder_deleted();
    }
}

nvinfer1::IBuilderConfig* BuilderImpl::createBuilderConfig() noexcept {
    return api_guard(*ctx_, "IBuilder::createBuilderConfig", static_cast<nvinfer1::IBuilderConfig*>(nullptr),
                     [&] { return static_cast<nvinfer1::IBuilderConfig*>(new Config(ctx_)); });
}

nvinfer1::INetworkDefinition* BuilderImpl::createNetworkV2(nvinfer1::NetworkDefinitionCreationFlags flags) noexcept {
    return api_guard(*ctx_, "IBuilder::createNetworkV2", static_cast<nvinfer1::INetworkDefinition*>(nullptr),
                     [&]() -> nvinfer1::INetworkDefinition* {
                         for (int32_t bit = 0; bit < 32; ++bit) {
                             bool known = false;
                             for (int32_t v : nvinfer1::trtfake_stubs::kNetworkDefinitionCreationFlagValues) {
                                 known = known || v == bit;
                             }
                             if ((flags >> bit & 1U) != 0 && !known) {
                                 ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilder::createNetworkV2", "API Usage Error",
                                             "bit " + std::to_string(bit) + " is not a network creation flag of TensorRT " +
                                                 version_text(ctx_->version()));
                                 return nullptr;
                             }
                         }
#if TRTB_SHIM_MAJOR == 10
                         // TensorRT 10 types a network strongly only when asked (weak typing is
                         // deprecated, not gone).
                         const bool strongly_typed =
                             (flags >> static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED) & 1U) != 0;
#else
                         // TensorRT 11 has no weak typing: every network is strongly typed.
                         const bool strongly_typed = true;
#endif
                         return new Network(ctx_, strongly_typed);
                     });
}

nvinfer1::IOptimizationProfile* BuilderImpl::createOptimizationProfile() noexcept {
    return api_guard(*ctx_, "IBuilder::createOptimizationProfile", static_cast<nvinfer1::IOptimizationProfile*>(nullptr),
                     [&] {
                         profiles_.push_back(std::make_unique<Profile>(ctx_));
                         return static_cast<nvinfer1::IOptimizationProfile*>(profiles_.back().get());
                     });
}

nvinfer1::IHostMemory* BuilderImpl::buildSerializedNetwork(nvinfer1::INetworkDefinition& network,
                                                           nvinfer1::IBuilderConfig& config) noexcept {
    std::string plan;
    const bool built = build("IBuilder::buildSerializedNetwork", network, config, [&plan](const std::string& bytes) {
        plan = bytes;
        return true;
    });
    if (!built) {
        return nullptr;
    }
    return api_guard(*ctx_, "IBuilder::buildSerializedNetwork", static_cast<nvinfer1::IHostMemory*>(nullptr),
                     [&] { return static_cast<nvinfer1::IHostMemory*>(new HostMemory(ctx_, std::move(plan))); });
}

bool BuilderImpl::buildSerializedNetworkToStream(nvinfer1::INetworkDefinition& network, nvinfer1::IBuilderConfig& config,
                                                 nvinfer1::IStreamWriter& writer) noexcept {
    return build("IBuilder::buildSerializedNetworkToStream", network, config, [this, &writer](const std::string& bytes) {
        // As TensorRT streams a plan: in pieces, each written whole or the build fails.
        constexpr size_t kChunk = 1 << 16;
        for (size_t at = 0; at < bytes.size(); at += kChunk) {
            const int64_t n = static_cast<int64_t>(std::min(kChunk, bytes.size() - at));
            if (writer.write(bytes.data() + at, n) != n) {
                ctx_->error(ErrorCode::kFAILED_EXECUTION, "IBuilder::buildSerializedNetworkToStream", "Internal Error",
                            "the stream writer did not take the whole plan");
                return false;
            }
        }
        return true;
    });
}

}  // namespace TRTB_FAKE
}  // namespace trtb
