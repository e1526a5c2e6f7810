// tensorrt_trtexec.cpp: trtexec's other build settings in the TensorRT backend (see
// tensorrt_shim.hpp for how the backend is split and its rules): I/O types and formats, layer
// precisions with constraints (10.x), profiling verbosity, tactic sources, DLA with GPU
// fallback, memory pools besides the workspace, and --best (10.x). Each maps trtbuild's own
// enum values to TensorRT names, since TensorRT 11 renumbered TacticSource and removed weak
// typing. Unverified on a GPU: compile-checked against the public headers of 10.16 and 11.1.

#include "tensorrt_shim.hpp"

#include <string>
#include <utility>

namespace trtb {
namespace TRTB_SHIM {
namespace {

// data_type maps a trtb_data_type to TensorRT's DataType.
nvinfer1::DataType data_type(int32_t t) {
    switch (t) {
        case TRTB_TYPE_FP16:
            return nvinfer1::DataType::kHALF;
        case TRTB_TYPE_BF16:
            return nvinfer1::DataType::kBF16;
        case TRTB_TYPE_INT8:
            return nvinfer1::DataType::kINT8;
        case TRTB_TYPE_FP8:
            return nvinfer1::DataType::kFP8;
        case TRTB_TYPE_INT32:
            return nvinfer1::DataType::kINT32;
        case TRTB_TYPE_INT64:
            return nvinfer1::DataType::kINT64;
        case TRTB_TYPE_BOOL:
            return nvinfer1::DataType::kBOOL;
        case TRTB_TYPE_UINT8:
            return nvinfer1::DataType::kUINT8;
        case TRTB_TYPE_INT4:
            return nvinfer1::DataType::kINT4;
        default:
            return nvinfer1::DataType::kFLOAT;
    }
}

// tensor_formats maps trtb_tensor_format bits to a TensorFormats bit set.
nvinfer1::TensorFormats tensor_formats(uint32_t bits) {
    using F = nvinfer1::TensorFormat;
    const std::pair<uint32_t, F> map[] = {
        {TRTB_FORMAT_CHW, F::kLINEAR},         {TRTB_FORMAT_CHW2, F::kCHW2},
        {TRTB_FORMAT_HWC8, F::kHWC8},          {TRTB_FORMAT_CHW4, F::kCHW4},
        {TRTB_FORMAT_CHW16, F::kCHW16},        {TRTB_FORMAT_CHW32, F::kCHW32},
        {TRTB_FORMAT_DHWC8, F::kDHWC8},        {TRTB_FORMAT_CDHW32, F::kCDHW32},
        {TRTB_FORMAT_HWC, F::kHWC},            {TRTB_FORMAT_DLA_LINEAR, F::kDLA_LINEAR},
        {TRTB_FORMAT_DLA_HWC4, F::kDLA_HWC4},  {TRTB_FORMAT_HWC16, F::kHWC16},
        {TRTB_FORMAT_DHWC, F::kDHWC},
    };
    nvinfer1::TensorFormats out = 0;
    for (const auto& m : map) {
        if ((bits & m.first) != 0) {
            out |= 1U << static_cast<uint32_t>(m.second);
        }
    }
    return out;
}

// tactic_sources maps trtb_tactic_source bits to a TacticSources bit set; *missing gets the
// names of bits this TensorRT lacks.
nvinfer1::TacticSources tactic_sources(uint32_t bits, std::string* missing) {
    using T = nvinfer1::TacticSource;
    nvinfer1::TacticSources out = 0;
    auto add = [&out](T t) { out |= 1U << static_cast<uint32_t>(t); };
#if NV_TENSORRT_MAJOR < 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    if ((bits & TRTB_TACTIC_CUBLAS) != 0) {
        add(T::kCUBLAS);
    }
    if ((bits & TRTB_TACTIC_CUBLAS_LT) != 0) {
        add(T::kCUBLAS_LT);
    }
    if ((bits & TRTB_TACTIC_CUDNN) != 0) {
        add(T::kCUDNN);
    }
#pragma GCC diagnostic pop
#else
    const std::pair<uint32_t, const char*> gone[] = {
        {TRTB_TACTIC_CUBLAS, "CUBLAS"}, {TRTB_TACTIC_CUBLAS_LT, "CUBLAS_LT"}, {TRTB_TACTIC_CUDNN, "CUDNN"}};
    for (const auto& g : gone) {
        if ((bits & g.first) != 0) {
            *missing += (missing->empty() ? "" : ", ") + std::string(g.second);
        }
    }
#endif
    (void)missing;
    if ((bits & TRTB_TACTIC_EDGE_MASK_CONVOLUTIONS) != 0) {
        add(T::kEDGE_MASK_CONVOLUTIONS);
    }
    if ((bits & TRTB_TACTIC_JIT_CONVOLUTIONS) != 0) {
        add(T::kJIT_CONVOLUTIONS);
    }
    return out;
}

#if NV_TENSORRT_MAJOR < 11
// non_activation reports types a layer precision never applies to (trtexec skips them for "*").
bool non_activation(nvinfer1::DataType t) {
    return t == nvinfer1::DataType::kINT32 || t == nvinfer1::DataType::kINT64 ||
           t == nvinfer1::DataType::kBOOL || t == nvinfer1::DataType::kUINT8;
}
#endif

}  // namespace

bool weakly_typed(const Settings& s) {
#if NV_TENSORRT_MAJOR < 11
    return s.precision != 0 || s.extra.best || s.extra.precision_constraints != TRTB_PRECISION_CONSTRAINTS_NONE ||
           s.extra.use_dla;
#else
    (void)s;
    return false;
#endif
}

int32_t check_extra_settings(const Settings& s, std::string* message) {
    const ExtraSettings& x = s.extra;
#if NV_TENSORRT_MAJOR >= 11
    const std::string v = std::to_string(NV_TENSORRT_MAJOR);
    if (x.best) {
        *message = "TensorRT " + v + " has no weak typing, so --best has no precisions to choose from: the model's "
                   "types are the engine's; use --fp16 or --bf16 (trtbuild converts the model) or a Q/DQ-quantized model";
        return TRTB_ERR_UNSUPPORTED;
    }
    if (x.precision_constraints != TRTB_PRECISION_CONSTRAINTS_NONE || !x.layer_precisions.empty()) {
        *message = "TensorRT " + v + " builds every network strongly typed: each layer runs in the types the model "
                   "gives it, so --precisionConstraints and --layerPrecisions have nothing to constrain; change the "
                   "types in the model (trtbuild convert, or ModelOpt AutoCast) and build without them";
        return TRTB_ERR_UNSUPPORTED;
    }
    std::string missing;
    tactic_sources(x.tactic_sources_on | x.tactic_sources_off, &missing);
    if (!missing.empty()) {
        *message = "TensorRT " + v + " has no tactic source " + missing +
                   "; it has EDGE_MASK_CONVOLUTIONS and JIT_CONVOLUTIONS: leave the others out of --tacticSources";
        return TRTB_ERR_UNSUPPORTED;
    }
#else
    if (x.strongly_typed && weakly_typed(s)) {
        *message = "a strongly typed network takes its types from the model, so --stronglyTyped cannot go with "
                   "--fp16, --bf16, --int8, --fp8, --best, --precisionConstraints or --useDLACore on TensorRT 10; "
                   "drop --stronglyTyped or the others";
        return TRTB_ERR_INVALID_ARGUMENT;
    }
#endif
    message->clear();
    return TRTB_OK;
}

Outcome TensorRTBuild::apply_extra_settings(Objects& o) {
    const ExtraSettings& x = s_.extra;
    nvinfer1::INetworkDefinition& network = *o.network;
    nvinfer1::IBuilderConfig& config = *o.config;
    const uint64_t mark = logger_.mark();
    const bool strongly_typed = !weakly_typed(s_);

    // I/O types and formats: one entry for every tensor, or one per tensor, as trtexec takes them.
    struct Side {
        const char* flag;
        const std::vector<trtb_io_format>& formats;
        int32_t count;
        bool input;
    };
    for (const Side side : {Side{"--inputIOFormats", x.input_formats, network.getNbInputs(), true},
                            Side{"--outputIOFormats", x.output_formats, network.getNbOutputs(), false}}) {
        if (side.formats.empty()) {
            continue;
        }
        const int32_t n = static_cast<int32_t>(side.formats.size());
        if (n != 1 && n != side.count) {
            return fail(TRTB_ERR_INVALID_ARGUMENT,
                        std::string(side.flag) + " gives " + std::to_string(n) + " formats but the network has " +
                            std::to_string(side.count) + (side.input ? " inputs" : " outputs") +
                            "; give one format for all of them or one per tensor, in order");
        }
        for (int32_t i = 0; i < side.count; ++i) {
            nvinfer1::ITensor* t = side.input ? network.getInput(i) : network.getOutput(i);
            if (t == nullptr) {
                continue;  // coverage: getInput and getOutput are null only for an index past their counts
            }
            const trtb_io_format& f = side.formats[n == 1 ? 0 : i];
            const nvinfer1::DataType want = data_type(f.type);
            if (t->getType() != want) {
                if (strongly_typed) {
                    return fail(TRTB_ERR_INVALID_ARGUMENT,
                                std::string(side.flag) + " asks for " + data_type_name(f.type) + " at tensor " +
                                    t->getName() + ", but the network is strongly typed and the model makes it another "
                                    "type; give the model's type there, or change the model");
                }
#if NV_TENSORRT_MAJOR < 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
                t->setType(want);
#pragma GCC diagnostic pop
#endif
            }
            t->setAllowedFormats(tensor_formats(f.formats));
        }
    }

#if NV_TENSORRT_MAJOR < 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    // Layer precisions with constraints; exact names first, then "*" for every other layer
    // whose precision is an activation type (trtexec's rule).
    if (x.precision_constraints == TRTB_PRECISION_CONSTRAINTS_PREFER) {
        config.setFlag(BuilderFlag::kPREFER_PRECISION_CONSTRAINTS);
    } else if (x.precision_constraints == TRTB_PRECISION_CONSTRAINTS_OBEY) {
        config.setFlag(BuilderFlag::kOBEY_PRECISION_CONSTRAINTS);
    }
    if (!x.layer_precisions.empty()) {
        const int32_t* all = nullptr;
        std::vector<bool> matched(x.layer_precisions.size(), false);
        for (size_t k = 0; k < x.layer_precisions.size(); ++k) {
            if (x.layer_precisions[k].first == "*") {
                all = &x.layer_precisions[k].second;
                matched[k] = true;
            }
        }
        for (int32_t i = 0; i < network.getNbLayers(); ++i) {
            nvinfer1::ILayer* layer = network.getLayer(i);
            if (layer == nullptr) {
                continue;  // coverage: getLayer is null only for an index past getNbLayers
            }
            const std::string name = layer->getName() != nullptr ? layer->getName() : "";
            const int32_t* type = nullptr;
            for (size_t k = 0; k < x.layer_precisions.size(); ++k) {
                if (x.layer_precisions[k].first == name) {
                    type = &x.layer_precisions[k].second;
                    matched[k] = true;
                }
            }
            if (type == nullptr && all != nullptr && !non_activation(layer->getPrecision()) &&
                !(layer->getNbInputs() >= 1 && layer->getInput(0) != nullptr && layer->getInput(0)->isShapeTensor()) &&
                !(layer->getNbOutputs() >= 1 && layer->getOutput(0) != nullptr &&
                  non_activation(layer->getOutput(0)->getType()))) {
                type = all;
            }
            if (type != nullptr) {
                layer->setPrecision(data_type(*type));
            }
        }
        for (size_t k = 0; k < matched.size(); ++k) {
            if (!matched[k]) {
                logger_.note(TRTB_SEVERITY_WARNING, "--layerPrecisions: the network has no layer named " +
                                                        x.layer_precisions[k].first + "; its precision was not set");
            }
        }
    }
    if (x.best) {
        // trtexec's --best: every precision; bf16 only where the GPU has it (Ampere and newer).
        config.setFlag(BuilderFlag::kFP16);
        config.setFlag(BuilderFlag::kINT8);
        // The compute capability from the CUDA driver (trtb_loader.hpp), as tensorrt_version.
        DeviceInfo d;
        if (std::string why; describe_device(s_.device, &d, &why) && d.compute_major >= 8) {
            config.setFlag(BuilderFlag::kBF16);
        }
    }
#pragma GCC diagnostic pop
#endif

    switch (x.profiling_verbosity) {
        case TRTB_PROFILING_LAYER_NAMES_ONLY:
            config.setProfilingVerbosity(nvinfer1::ProfilingVerbosity::kLAYER_NAMES_ONLY);
            break;
        case TRTB_PROFILING_NONE:
            config.setProfilingVerbosity(nvinfer1::ProfilingVerbosity::kNONE);
            break;
        case TRTB_PROFILING_DETAILED:
            config.setProfilingVerbosity(nvinfer1::ProfilingVerbosity::kDETAILED);
            break;
        default:
            break;
    }

    if ((x.tactic_sources_on | x.tactic_sources_off) != 0) {
        std::string missing;  // refused by check_extra_settings
        nvinfer1::TacticSources sources = config.getTacticSources();
        sources |= tactic_sources(x.tactic_sources_on, &missing);
        sources &= ~tactic_sources(x.tactic_sources_off, &missing);
        if (!config.setTacticSources(sources)) {  // coverage: the stand-in takes every source check_extra_settings lets through
            return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused --tacticSources: " + errors_since(mark));
        }
    }

    if (x.use_dla) {
        const int32_t cores = o.builder->getNbDLACores();
        if (x.dla_core >= cores) {
            return fail(TRTB_ERR_UNSUPPORTED,
                        "--useDLACore " + std::to_string(x.dla_core) + ": this device has " + std::to_string(cores) +
                            " DLA cores" + (cores > 0 ? ", numbered from 0" : "; build without --useDLACore"));
        }
        // coverage: the stand-in GPU, a Hopper, has no DLA core
        config.setDefaultDeviceType(nvinfer1::DeviceType::kDLA);
        config.setDLACore(x.dla_core);
        if (x.gpu_fallback) {
            config.setFlag(BuilderFlag::kGPU_FALLBACK);
        }
#if NV_TENSORRT_MAJOR < 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        // As trtexec: DLA runs fp16 or int8, and keeps the precisions it is given.
        config.setFlag(BuilderFlag::kPREFER_PRECISION_CONSTRAINTS);
        if ((s_.precision & TRTB_PRECISION_INT8) == 0) {
            config.setFlag(BuilderFlag::kFP16);
        }
#pragma GCC diagnostic pop
#endif
    }

    const std::pair<uint32_t, nvinfer1::MemoryPoolType> pools[] = {
        {TRTB_POOL_TACTIC_SHARED_MEMORY, nvinfer1::MemoryPoolType::kTACTIC_SHARED_MEMORY},
        {TRTB_POOL_DLA_MANAGED_SRAM, nvinfer1::MemoryPoolType::kDLA_MANAGED_SRAM},
        {TRTB_POOL_DLA_LOCAL_DRAM, nvinfer1::MemoryPoolType::kDLA_LOCAL_DRAM},
        {TRTB_POOL_DLA_GLOBAL_DRAM, nvinfer1::MemoryPoolType::kDLA_GLOBAL_DRAM},
    };
    for (int b = 0; b < 4; ++b) {
        if ((x.pools_set & pools[b].first) != 0) {
            config.setMemoryPoolLimit(pools[b].second, static_cast<size_t>(x.pool_bytes[b]));
        }
    }

    // TensorRT reports a refused setting to the error recorder and ignores the call.
    if (logger_.mark() > mark) {
        return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused a build option: " + errors_since(mark));
    }
    return ok();
}

}  // namespace TRTB_SHIM
}  // namespace trtb
