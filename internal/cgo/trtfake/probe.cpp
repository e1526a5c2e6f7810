// probe.cpp: test-only questions to the stand-in (probe.hpp):
//
//   "unimplemented"  a function the stand-in does not implement (IBuilder::setMaxThreads) is
//                    called, then a network is built: both fail, naming the function.
//   "weak-typing"    weak typing is asked for: TensorRT 10's stand-in is given kFP16 on a
//                    strongly typed network of one layer and a build of it; TensorRT 11's,
//                    which has no weak typing, the BuilderFlag value TensorRT 10 gave kFP16.

#include "objects.hpp"
#include "probe.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace trtb {
namespace TRTB_FAKE {

namespace {

// Answers collects what the stand-in said: a logger and an error recorder in one.
class Answers final : public nvinfer1::ILogger, public nvinfer1::IErrorRecorder {
public:
    void log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept override {
        if (severity <= Severity::kERROR) {
            add("log: " + std::string(msg));
        }
    }
    int32_t getNbErrors() const noexcept override { return 0; }
    nvinfer1::ErrorCode getErrorCode(int32_t) const noexcept override { return ErrorCode::kSUCCESS; }
    ErrorDesc getErrorDesc(int32_t) const noexcept override { return ""; }
    bool hasOverflowed() const noexcept override { return false; }
    void clear() noexcept override {}
    bool reportError(nvinfer1::ErrorCode, ErrorDesc desc) noexcept override {
        add("error: " + std::string(desc));
        return true;
    }
    RefCount incRefCount() noexcept override { return ++refs_; }
    RefCount decRefCount() noexcept override { return --refs_; }

    void add(const std::string& line) {
        std::lock_guard<std::mutex> lock(mu_);
        text_ += line + "\n";
    }
    std::string text() {
        std::lock_guard<std::mutex> lock(mu_);
        return text_;
    }

private:
    std::mutex mu_;
    std::string text_;
    std::atomic<RefCount> refs_{0};
};

// Discard is a stream writer that keeps nothing.
class Discard final : public nvinfer1::IStreamWriter {
public:
    int64_t write(void const*, int64_t n) override { return n; }
};

}  // namespace

std::string probe(const std::string& what) {
    Answers answers;
    std::unique_ptr<nvinfer1::IBuilder> builder(
        static_cast<nvinfer1::IBuilder*>(create_builder(&answers, NV_TENSORRT_VERSION, Settings{})));
    if (builder == nullptr) {
        return "result: no builder\n" + answers.text();
    }
    builder->setErrorRecorder(&answers);
    std::string result;
    if (what == "unimplemented") {
        const bool set = builder->setMaxThreads(2);
        std::unique_ptr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(0));
        std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
        Discard out;
        const bool built = builder->buildSerializedNetworkToStream(*network, *config, out);
        result = "result: setMaxThreads " + std::to_string(set) + ", built " + std::to_string(built) + "\n";
    } else if (what == "weak-typing") {
#if TRTB_SHIM_MAJOR == 10
        std::unique_ptr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(
            1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED)));
        // A network as a parse leaves one (x -> Relu -> y), so that the build refuses the flag,
        // not an empty network.
        Model m;
        m.ir_version = 8;
        m.opset = 17;
        m.nodes.push_back(Node{"relu", "Relu", "", {"x"}, {"y"}});
        m.inputs.push_back(Value{"x", kOnnxFloat, true, {1, 8}});
        m.outputs.push_back(Value{"y", kOnnxFloat, true, {1, 8}});
        std::string why;
        if (!static_cast<Network*>(network.get())->impl().fill(std::move(m), &why)) {
            return "result: no network: " + why + "\n" + answers.text();
        }
        std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        config->setFlag(nvinfer1::BuilderFlag::kFP16);
        const bool set = config->getFlag(nvinfer1::BuilderFlag::kFP16);
#pragma GCC diagnostic pop
        Discard out;
        const bool built = builder->buildSerializedNetworkToStream(*network, *config, out);
        result = "result: kFP16 set " + std::to_string(set) + ", built " + std::to_string(built) + "\n";
#else
        std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
        const auto fp16_of_10 = static_cast<nvinfer1::BuilderFlag>(0);
        config->setFlag(fp16_of_10);
        const bool set = config->getFlag(fp16_of_10);
        result = "result: flag 0 set " + std::to_string(set) + "\n";
#endif
    } else {
        result = "result: no probe " + what + "\n";
    }
    builder->setErrorRecorder(nullptr);
    return result + answers.text();
}

}  // namespace TRTB_FAKE
}  // namespace trtb
