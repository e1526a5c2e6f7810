// objects.hpp: the stand-in's TensorRT objects. Each public class the shim holds (IBuilder,
// ITensor, ...) is a TensorRT wrapper whose inline methods call its implementation object
// through mImpl; here each is a small subclass that owns its implementation as a member and
// points mImpl at it, and the implementation derives from the generated stubs
// (stubsN_gen.hpp), overriding what the shim calls. Interfaces that are pure virtual
// themselves (IPluginRegistry, IParser, IParserError) derive from their stubs directly. The
// ownership and threading rules are trtfake.hpp's.
#ifndef TRTB_FAKE_OBJECTS_HPP
#define TRTB_FAKE_OBJECTS_HPP

#include "graph.hpp"
#include "model.hpp"
#include "settings.hpp"
#include "trtfake.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trtb {
namespace TRTB_FAKE {

namespace stubs = nvinfer1::apiv::trtfake_stubs;
using nvinfer1::ErrorCode;
using Severity = nvinfer1::ILogger::Severity;

class Builder;
class Network;
class TimingCache;

// ---------------------------------------------------------------------------------------------
// Context (context.cpp): what every object of one builder shares.

// Context is a builder's logger and error recorder, its settings and its version. Errors go to
// the error recorder the shim attached to the builder (reportError) and, without one, to the
// logger, as TensorRT does; an unimplemented function called on any of the builder's objects
// is such an error too, and poisons the builder: its next build fails.
//
// Threading: every method may be called from any thread; the recorder is swapped under a lock
// and reported to outside it (the shim's recorder is thread-safe, as TensorRT requires).
class Context final : public trtb_fake::Unimplemented {
public:
    Context(nvinfer1::ILogger* logger, Settings settings);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    // log writes one line at severity through the logger (none: dropped).
    void log(Severity severity, const std::string& text) const noexcept;
    // error reports TensorRT's error "<api>: Error Code <code>: <kind> (<text>)".
    void error(ErrorCode code, const char* api, const char* kind, const std::string& text) const noexcept;

    // set_recorder attaches recorder (TensorRT takes a reference: incRefCount) and drops the
    // one attached before (decRefCount).
    void set_recorder(nvinfer1::IErrorRecorder* recorder) noexcept;
    nvinfer1::IErrorRecorder* recorder() const noexcept;

    void report(char const* method) const noexcept override;
    [[noreturn]] void fatal(char const* method) const noexcept override;
    // unimplemented returns the functions reported since the builder was made; empty: none.
    std::vector<std::string> unimplemented() const;

    const Settings& settings() const { return settings_; }
    nvinfer1::ILogger* logger() const { return logger_; }
    int32_t version() const;  // what getInferLibVersion says
    int32_t build() const;

private:
    nvinfer1::ILogger* const logger_;
    const Settings settings_;
    mutable std::mutex mu_;
    nvinfer1::IErrorRecorder* recorder_ = nullptr;  // guarded by mu_
    mutable std::vector<std::string> unimplemented_;  // guarded by mu_
};

using ContextPtr = std::shared_ptr<Context>;

// refused reports whether the refuse setting names api ("IBuilder::createNetworkV2"; a glob),
// and if so logs TensorRT's error for it: the call then fails as TensorRT's do, with its
// fallback (null, false), so that a caller's failure paths can be tried.
bool refused(const Context& ctx, const char* api) noexcept;

// api_guard runs f and turns an exception into TensorRT's internal error of api (reported to
// ctx) and the result fallback: no exception leaves a function of TensorRT's API. An api the
// refuse setting names returns fallback without running f (refused).
template <typename F, typename R>
R api_guard(const Context& ctx, const char* api, R fallback, F f) noexcept {
    if (refused(ctx, api)) {
        return fallback;
    }
    try {
        return f();
    } catch (const std::exception& e) {
        ctx.error(ErrorCode::kINTERNAL_ERROR, api, "Internal Error", e.what());
    } catch (...) {
        ctx.error(ErrorCode::kINTERNAL_ERROR, api, "Internal Error", "unknown exception");
    }
    return fallback;
}

// ---------------------------------------------------------------------------------------------
// The network (network.cpp).

// TensorImpl is a tensor of the network: an input, an output or what a layer makes.
class TensorImpl final : public stubs::VTensorStubs {
public:
    TensorImpl(Network& network, std::string name) : VTensorStubs(network_context(network)), network_(network), name_(std::move(name)) {}

    char const* getName() const noexcept override { return name_.c_str(); }
    nvinfer1::Dims getDimensions() const noexcept override { return dims_; }
    nvinfer1::DataType getType() const noexcept override { return type_; }
#if TRTB_SHIM_MAJOR == 10
    void setType(nvinfer1::DataType type) noexcept override;
#endif
    bool isNetworkInput() const noexcept override { return input_; }
    bool isNetworkOutput() const noexcept override { return output_; }
    bool isShapeTensor() const noexcept override { return shape_tensor_; }
    void setAllowedFormats(nvinfer1::TensorFormats formats) noexcept override { formats_ = formats; }
    nvinfer1::TensorFormats getAllowedFormats() const noexcept override { return formats_; }

    // The parser's side.
    void set(const std::vector<int64_t>& dims, nvinfer1::DataType type, bool input, bool output);
    void set_shape_tensor() { shape_tensor_ = true; }
    const std::string& name() const { return name_; }
    bool dynamic() const;

private:
    static const Context& network_context(Network& network);

    Network& network_;
    const std::string name_;
    nvinfer1::Dims dims_{};
    nvinfer1::DataType type_ = nvinfer1::DataType::kFLOAT;
    bool input_ = false, output_ = false, shape_tensor_ = false;
    nvinfer1::TensorFormats formats_ = 0;
};

// Tensor is the ITensor the shim holds.
class Tensor final : public nvinfer1::ITensor {
public:
    Tensor(Network& network, std::string name) : impl_(network, std::move(name)) { mImpl = &impl_; }
    ~Tensor() noexcept override = default;
    TensorImpl& impl() { return impl_; }
    const TensorImpl& impl() const { return impl_; }

private:
    TensorImpl impl_;
};

// LayerImpl is one layer of the network: a node of the model, or an initializer's constant.
class LayerImpl final : public stubs::VLayerStubs {
public:
    LayerImpl(Network& network, std::string name, std::string op);

    char const* getName() const noexcept override { return name_.c_str(); }
    int32_t getNbInputs() const noexcept override { return static_cast<int32_t>(inputs_.size()); }
    nvinfer1::ITensor* getInput(int32_t index) const noexcept override;
    int32_t getNbOutputs() const noexcept override { return static_cast<int32_t>(outputs_.size()); }
    nvinfer1::ITensor* getOutput(int32_t index) const noexcept override;
#if TRTB_SHIM_MAJOR == 10
    void setPrecision(nvinfer1::DataType type) noexcept override;
    nvinfer1::DataType getPrecision() const noexcept override { return precision_; }
    bool precisionIsSet() const noexcept override { return precision_set_; }
#endif

    void add_input(Tensor* t) { inputs_.push_back(t); }
    void add_output(Tensor* t) { outputs_.push_back(t); }
    const std::string& op() const { return op_; }
    bool precision_set() const { return precision_set_; }

private:
    Network& network_;
    const std::string name_, op_;
    std::vector<Tensor*> inputs_, outputs_;
    nvinfer1::DataType precision_ = nvinfer1::DataType::kFLOAT;
    bool precision_set_ = false;
};

// Layer is the ILayer the shim holds.
class Layer final : public nvinfer1::ILayer {
public:
    Layer(Network& network, std::string name, std::string op) : impl_(network, std::move(name), std::move(op)) { mLayer = &impl_; }
    ~Layer() noexcept override = default;
    LayerImpl& impl() { return impl_; }

private:
    LayerImpl impl_;
};

// NetworkImpl is the network: empty until the parser fills it from a model.
class NetworkImpl final : public stubs::VNetworkDefinitionStubs {
public:
    NetworkImpl(Network& owner, ContextPtr ctx, bool strongly_typed)
        : VNetworkDefinitionStubs(*ctx), owner_(owner), ctx_(std::move(ctx)), strongly_typed_(strongly_typed) {}

    int32_t getNbInputs() const noexcept override { return static_cast<int32_t>(inputs_.size()); }
    nvinfer1::ITensor* getInput(int32_t index) const noexcept override;
    int32_t getNbOutputs() const noexcept override { return static_cast<int32_t>(outputs_.size()); }
    nvinfer1::ITensor* getOutput(int32_t index) const noexcept override;
    int32_t getNbLayers() const noexcept override { return static_cast<int32_t>(layers_.size()); }
    nvinfer1::ILayer* getLayer(int32_t index) const noexcept override;

    // fill makes the network of a parsed model; it may be filled once.
    bool fill(Model model, std::string* why);
    bool filled() const { return filled_; }
    const Model& model() const { return model_; }
    const std::vector<Tensor*>& inputs() const { return inputs_; }
    const std::vector<Tensor*>& outputs() const { return outputs_; }
    const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
    bool strongly_typed() const { return strongly_typed_; }
    const Context& context() const { return *ctx_; }

private:
    Tensor* tensor(const std::string& name);

    Network& owner_;  // the Network this is the implementation of
    ContextPtr ctx_;
    const bool strongly_typed_;
    bool filled_ = false;
    Model model_;
    std::map<std::string, std::unique_ptr<Tensor>> tensors_;
    std::vector<Tensor*> inputs_, outputs_;
    std::vector<std::unique_ptr<Layer>> layers_;
};

// Network is the INetworkDefinition the shim holds.
class Network final : public nvinfer1::INetworkDefinition {
public:
    Network(ContextPtr ctx, bool strongly_typed) : impl_(*this, std::move(ctx), strongly_typed) { mImpl = &impl_; }
    ~Network() noexcept override = default;
    NetworkImpl& impl() { return impl_; }
    const NetworkImpl& impl() const { return impl_; }

private:
    NetworkImpl impl_;
};

// ---------------------------------------------------------------------------------------------
// Configuration (config.cpp).

// ProfileImpl is an optimization profile: min, opt and max of each input it was given.
class ProfileImpl final : public stubs::VOptimizationProfileStubs {
public:
    explicit ProfileImpl(ContextPtr ctx) : VOptimizationProfileStubs(*ctx), ctx_(std::move(ctx)) {}

    bool setDimensions(char const* input, nvinfer1::OptProfileSelector select, nvinfer1::Dims const& dims) noexcept override;
    nvinfer1::Dims getDimensions(char const* input, nvinfer1::OptProfileSelector select) const noexcept override;
    bool setShapeValuesV2(char const* input, nvinfer1::OptProfileSelector select, int64_t const* values,
                          int32_t nb) noexcept override;
    bool isValid() const noexcept override;

    // Shape is what the profile holds for one input.
    struct Shape {
        bool set[3] = {false, false, false};  // by OptProfileSelector
        nvinfer1::Dims dims[3]{};
        std::vector<int64_t> values[3];  // a shape tensor's values
        bool values_set[3] = {false, false, false};
    };
    const std::map<std::string, Shape>& shapes() const { return shapes_; }

private:
    ContextPtr ctx_;
    std::map<std::string, Shape> shapes_;
};

// Profile is the IOptimizationProfile the shim holds; the builder owns it.
class Profile final : public nvinfer1::IOptimizationProfile {
public:
    explicit Profile(ContextPtr ctx) : impl_(std::move(ctx)) { mImpl = &impl_; }
    ~Profile() noexcept override = default;
    const ProfileImpl& impl() const { return impl_; }

private:
    ProfileImpl impl_;
};

// ConfigImpl is a builder config: everything the shim sets, kept for the build.
class ConfigImpl final : public stubs::VBuilderConfigStubs {
public:
    explicit ConfigImpl(ContextPtr ctx);

    void setFlag(nvinfer1::BuilderFlag flag) noexcept override;
    void clearFlag(nvinfer1::BuilderFlag flag) noexcept override;
    bool getFlag(nvinfer1::BuilderFlag flag) const noexcept override;
    void setAvgTimingIterations(int32_t n) noexcept override;
    void setProgressMonitor(nvinfer1::IProgressMonitor* monitor) noexcept override { monitor_ = monitor; }
    nvinfer1::IProgressMonitor* getProgressMonitor() const noexcept override { return monitor_; }
    void setProfileStream(cudaStream_t const stream) noexcept override { stream_ = stream; }
    int32_t addOptimizationProfile(nvinfer1::IOptimizationProfile const* profile) noexcept override;
    int32_t getNbOptimizationProfiles() const noexcept override { return static_cast<int32_t>(profiles_.size()); }
    nvinfer1::ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept override;
    bool setTimingCache(nvinfer1::ITimingCache const& cache, bool ignore_mismatch) noexcept override;
    nvinfer1::ITimingCache const* getTimingCache() const noexcept override;
    void setMemoryPoolLimit(nvinfer1::MemoryPoolType pool, std::size_t bytes) noexcept override;
    void setBuilderOptimizationLevel(int32_t level) noexcept override;
#if TRTB_SHIM_MAJOR == 10
    void setMaxAuxStreams(int32_t n) noexcept override;
#else
    bool setMaxAuxStreams(int32_t n) noexcept override;
    bool setBuildRoute(char const* route) noexcept override;
#endif
    void setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel level) noexcept override;
    void setPluginsToSerialize(char const* const* paths, int32_t n) noexcept override;
    void setProfilingVerbosity(nvinfer1::ProfilingVerbosity verbosity) noexcept override;
    nvinfer1::TacticSources getTacticSources() const noexcept override { return tactic_sources_; }
    bool setTacticSources(nvinfer1::TacticSources sources) noexcept override;
    void setDefaultDeviceType(nvinfer1::DeviceType type) noexcept override;
    void setDLACore(int32_t core) noexcept override;

    // What the build reads.
    bool flag(int32_t value) const { return value >= 0 && value < 64 && (flags_ >> value & 1) != 0; }
    int32_t avg_timing() const { return avg_timing_; }
    int32_t opt_level() const { return opt_level_; }
    const std::vector<const ProfileImpl*>& profiles() const { return profiles_; }
    TimingCache* cache() const { return cache_; }
    uint64_t workspace() const { return workspace_; }
    const std::vector<std::string>& plugins_to_serialize() const { return plugins_; }
    bool dla() const { return dla_; }
    // settings_text is what the shim set beyond the above, one "name value" line each, for the
    // plan: the memory pools, the profiling verbosity, the tactic sources, the auxiliary
    // streams, the hardware compatibility level and the build route (those set only).
    std::string settings_text() const;

private:
    bool valid_flag(nvinfer1::BuilderFlag flag, const char* api) const;

    ContextPtr ctx_;
    uint64_t flags_ = 0;
    int32_t avg_timing_ = 1;
    nvinfer1::IProgressMonitor* monitor_ = nullptr;
    cudaStream_t stream_ = nullptr;
    std::vector<const ProfileImpl*> profiles_;
    TimingCache* cache_ = nullptr;
    uint64_t workspace_ = 0;  // 0: the device's memory
    int32_t opt_level_ = 3;
    std::vector<std::string> plugins_;
    nvinfer1::TacticSources tactic_sources_ = 0;
    bool tactic_sources_set_ = false;
    bool dla_ = false;
    std::map<int32_t, uint64_t> pools_;  // pool (MemoryPoolType) -> bytes, the workspace too
    int32_t verbosity_ = -1;             // ProfilingVerbosity; -1: not set
    int32_t aux_streams_ = -1;           // -1: not set
    int32_t hardware_compat_ = -1;       // HardwareCompatibilityLevel; -1: not set
#if TRTB_SHIM_MAJOR != 10
    std::string route_;
#endif

};

// Config is the IBuilderConfig the shim holds.
class Config final : public nvinfer1::IBuilderConfig {
public:
    explicit Config(ContextPtr ctx) : impl_(std::move(ctx)) { mImpl = &impl_; }
    ~Config() noexcept override = default;
    ConfigImpl& impl() { return impl_; }

private:
    ConfigImpl impl_;
};

// ---------------------------------------------------------------------------------------------
// Timing caches and host memory (timing_cache.cpp).

// HostMemoryImpl holds bytes the stand-in hands out: a plan or a serialized cache.
class HostMemoryImpl final : public stubs::VHostMemoryStubs {
public:
    HostMemoryImpl(ContextPtr ctx, std::string bytes) : VHostMemoryStubs(*ctx), ctx_(std::move(ctx)), bytes_(std::move(bytes)) {}
    void* data() const noexcept override { return const_cast<char*>(bytes_.data()); }
    std::size_t size() const noexcept override { return bytes_.size(); }

private:
    ContextPtr ctx_;
    std::string bytes_;
};

// HostMemory is the IHostMemory the shim holds.
class HostMemory final : public nvinfer1::IHostMemory {
public:
    HostMemory(ContextPtr ctx, std::string bytes) : impl_(std::move(ctx), std::move(bytes)) { mImpl = &impl_; }
    ~HostMemory() noexcept override = default;

private:
    HostMemoryImpl impl_;
};

// CacheKey is a timing cache key, TimingCacheKey's 16 bytes as two halves.
using CacheKey = std::pair<uint64_t, uint64_t>;

// CacheEntry is what the cache keeps for a key: the tactic chosen and its time.
struct CacheEntry {
    uint64_t tactic = 0;
    uint64_t time_ns = 0;
};

// TimingCacheImpl is a timing cache. It says which TensorRT (major.minor) and device made it;
// the text it serializes to is trtfake's own format (timing_cache.cpp).
class TimingCacheImpl final : public stubs::VTimingCacheStubs {
public:
    // Record is one entry: its key and what the cache keeps for it.
    using Record = std::pair<CacheKey, CacheEntry>;

    TimingCacheImpl(ContextPtr ctx, std::string device);

    nvinfer1::IHostMemory* serialize() const noexcept override;
    bool combine(nvinfer1::ITimingCache const& input, bool ignore_mismatch) noexcept override;
    int64_t queryKeys(nvinfer1::TimingCacheKey* keys, int64_t capacity) const noexcept override;

    // deserialize reads blob (only during the call); false with *why when it is not a cache
    // of this TensorRT (*foreign) or not a cache at all.
    bool deserialize(std::string_view blob, bool* foreign, std::string* why);
    const std::string& device() const { return device_; }
    bool find(const CacheKey& key, CacheEntry* out) const;
    void insert(const CacheKey& key, const CacheEntry& e);
    size_t count() const;

private:
    // each_locked calls f(key, entry) for every entry in key order; mu_ held.
    template <class F>
    void each_locked(F&& f) const {
        auto a = sorted_.begin();
        auto b = added_.begin();
        while (a != sorted_.end() || b != added_.end()) {
            if (b == added_.end() || (a != sorted_.end() && a->first < b->first)) {
                f(a->first, a->second);
                ++a;
            } else {
                f(b->first, b->second);
                ++b;
            }
        }
    }
    const CacheEntry* lookup_locked(const CacheKey& key) const;  // mu_ held; null when absent
    size_t count_locked() const;                                // mu_ held

    ContextPtr ctx_;
    std::string device_;
    mutable std::mutex mu_;
    // The entries, each key in one of the two: those read or combined in, sorted by key in one
    // vector (32 bytes an entry: a cache of millions of entries stays compact), and those a
    // build inserted since (a few per timed node).
    std::vector<Record> sorted_;              // guarded by mu_
    std::map<CacheKey, CacheEntry> added_;    // guarded by mu_
};

// TimingCache is the ITimingCache the shim holds.
class TimingCache final : public nvinfer1::ITimingCache {
public:
    TimingCache(ContextPtr ctx, std::string device) : impl_(std::move(ctx), std::move(device)) { mImpl = &impl_; }
    ~TimingCache() noexcept override = default;
    TimingCacheImpl& impl() { return impl_; }
    const TimingCacheImpl& impl() const { return impl_; }

private:
    TimingCacheImpl impl_;
};

// ---------------------------------------------------------------------------------------------
// The builder and its plugin registry (builder.cpp).

// Registry is a builder's plugin registry: it loads plugin libraries' files and keeps an error
// recorder; it registers no creator (the stand-in builds no plugin layer).
class Registry final : public nvinfer1::trtfake_stubs::IPluginRegistryStubs {
public:
    explicit Registry(ContextPtr ctx) : IPluginRegistryStubs(*ctx), ctx_(std::move(ctx)) {}
    void setErrorRecorder(nvinfer1::IErrorRecorder* const recorder) noexcept override;
    nvinfer1::IErrorRecorder* getErrorRecorder() const noexcept override { return recorder_; }
    PluginLibraryHandle loadLibrary(nvinfer1::AsciiChar const* path) noexcept override;

private:
    ContextPtr ctx_;
    nvinfer1::IErrorRecorder* recorder_ = nullptr;
    std::vector<std::unique_ptr<std::string>> loaded_;  // their handles
};

// BuilderImpl is a builder.
class BuilderImpl final : public stubs::VBuilderStubs {
public:
    explicit BuilderImpl(ContextPtr ctx) : VBuilderStubs(*ctx), ctx_(std::move(ctx)), registry_(ctx_) {}
    ~BuilderImpl() override;

    nvinfer1::IBuilderConfig* createBuilderConfig() noexcept override;
    nvinfer1::INetworkDefinition* createNetworkV2(nvinfer1::NetworkDefinitionCreationFlags flags) noexcept override;
    nvinfer1::IOptimizationProfile* createOptimizationProfile() noexcept override;
    void setErrorRecorder(nvinfer1::IErrorRecorder* recorder) noexcept override { ctx_->set_recorder(recorder); }
    nvinfer1::IErrorRecorder* getErrorRecorder() const noexcept override { return ctx_->recorder(); }
    nvinfer1::IHostMemory* buildSerializedNetwork(nvinfer1::INetworkDefinition& network,
                                                  nvinfer1::IBuilderConfig& config) noexcept override;
    bool buildSerializedNetworkToStream(nvinfer1::INetworkDefinition& network, nvinfer1::IBuilderConfig& config,
                                        nvinfer1::IStreamWriter& writer) noexcept override;
    nvinfer1::ILogger* getLogger() const noexcept override { return ctx_->logger(); }
    nvinfer1::IPluginRegistry& getPluginRegistry() noexcept override { return registry_; }
    int32_t getNbDLACores() const noexcept override { return 0; }

private:
    // build runs a build (build.cpp) and hands the plan to sink; false when it failed or was
    // cancelled.
    template <typename Sink>
    bool build(const char* api, nvinfer1::INetworkDefinition& network, nvinfer1::IBuilderConfig& config, Sink sink);

    ContextPtr ctx_;
    Registry registry_;
    std::vector<std::unique_ptr<Profile>> profiles_;
};

// Builder is the IBuilder the shim holds.
class Builder final : public nvinfer1::IBuilder {
public:
    explicit Builder(ContextPtr ctx) : impl_(std::move(ctx)) { mImpl = &impl_; }
    ~Builder() noexcept override = default;

private:
    BuilderImpl impl_;
};

// ---------------------------------------------------------------------------------------------
// The ONNX parser (parser.cpp).

// ParserError is one error of a parse.
class ParserError final : public nvonnxparser::trtfake_stubs::IParserErrorStubs {
public:
    ParserError(const Context& ctx, nvonnxparser::ErrorCode code, std::string desc, int node, std::string node_name,
                std::string node_op)
        : IParserErrorStubs(ctx), code_(code), desc_(std::move(desc)), node_(node), node_name_(std::move(node_name)),
          node_op_(std::move(node_op)) {}
    nvonnxparser::ErrorCode code() const noexcept override { return code_; }
    char const* desc() const noexcept override { return desc_.c_str(); }
    int node() const noexcept override { return node_; }
    char const* nodeName() const noexcept override { return node_name_.c_str(); }
    char const* nodeOperator() const noexcept override { return node_op_.c_str(); }

private:
    nvonnxparser::ErrorCode code_;
    std::string desc_;
    int node_;
    std::string node_name_, node_op_;
};

// Parser is the stand-in's ONNX parser of one network.
class Parser final : public nvonnxparser::trtfake_stubs::IParserStubs {
public:
    Parser(Network& network, nvinfer1::ILogger* logger);
    ~Parser() noexcept override = default;

    bool parseFromFile(char const* path, int verbosity) noexcept override;
    int getNbErrors() const noexcept override { return static_cast<int>(errors_.size()); }
    nvonnxparser::IParserError const* getError(int index) const noexcept override;
    void clearErrors() noexcept override { errors_.clear(); }
    char const* const* getUsedVCPluginLibraries(int64_t& nb) const noexcept override;

private:
    bool parse(const std::string& path, int verbosity);
    void add_error(nvonnxparser::ErrorCode code, std::string desc, int node = -1, std::string name = "",
                   std::string op = "");

    Network& network_;
    nvinfer1::ILogger* logger_;
    std::vector<std::unique_ptr<ParserError>> errors_;
};

// ---------------------------------------------------------------------------------------------
// Entry points (entry.cpp): what libnvinfer's, libnvonnxparser's and libnvinfer_plugin's C
// functions do, for the binary's installed stand-in and the stand-in libraries alike.

// create_builder is createInferBuilder_INTERNAL: a builder with settings, or null (with an
// error logged) when the caller's headers are of another major.
nvinfer1::IBuilder* create_builder(void* logger, int32_t version, const Settings& settings) noexcept;
// create_parser is createNvOnnxParser_INTERNAL; network must be one of the stand-in's.
nvonnxparser::IParser* create_parser(void* network, void* logger, int version) noexcept;

}  // namespace TRTB_FAKE
}  // namespace trtb

#endif  // TRTB_FAKE_OBJECTS_HPP
