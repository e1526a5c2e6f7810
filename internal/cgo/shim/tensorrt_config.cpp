// tensorrt_config.cpp: the build options of the TensorRT backend: trtb_options checked and
// copied into Settings, Settings applied to the IBuilderConfig, and the optimization profiles
// (see tensorrt_shim.hpp for how the backend is split and its rules).

#include "tensorrt_shim.hpp"

#include <string>
#include <utility>
#include <vector>

// IBuilderConfig::setBuildRoute came with TensorRT 11.1 (absent from the 11.0 and 10.x
// headers). With 11.1's headers on an 11.0 library, Go refuses --set-build-route before the
// build reaches the backend (trt.CheckFlags, from internal/trt's table of older minors).
#define TRTB_HAS_BUILD_ROUTE TRTB_TRT_AT_LEAST(11, 1)

namespace trtb {
namespace TRTB_SHIM {
namespace {

#if !TRTB_HAS_PRECISION_FLAGS
// precision_names names precision bits as their command-line flags.
std::string precision_names(uint32_t bits) {
    std::string out;
    const std::pair<uint32_t, const char*> names[] = {{TRTB_PRECISION_FP16, "--fp16"},
                                                      {TRTB_PRECISION_BF16, "--bf16"},
                                                      {TRTB_PRECISION_INT8, "--int8"},
                                                      {TRTB_PRECISION_FP8, "--fp8"}};
    for (const auto& n : names) {
        if ((bits & n.first) != 0) {
            if (!out.empty()) {
                out += ", ";
            }
            out += n.second;
        }
    }
    return out;
}  // coverage: the unwinding of an allocation failure
#endif

// set_shape_values gives a shape tensor input its values for one selector.
bool set_shape_values(nvinfer1::IOptimizationProfile& profile, const char* input,
                      nvinfer1::OptProfileSelector select, const int64_t* values, int32_t n) {
#if TRTB_HAS_SHAPE_VALUES_V2
    return profile.setShapeValuesV2(input, select, values, n);
#else
    std::vector<int32_t> narrow(values, values + n);
    return profile.setShapeValues(input, select, narrow.data(), n);
#endif
}

}  // namespace

// copy_settings checks options with trtb::check_options, the one checker of both backends
// (options.cpp), then refuses what only this TensorRT can not honour, and copies them into
// *out. On a bad option it returns its code and sets *message; *out is then untouched.
int32_t copy_settings(const trtb_options& o, Settings* out, std::string* message) {
    Settings s;
    if (int32_t code = check_options(o, &s, message); code != TRTB_OK) {
        return code;
    }
    auto bad = [message](int32_t code, std::string text) {
        *message = std::move(text);
        return code;
    };
#if !TRTB_HAS_PRECISION_FLAGS
    if (s.precision != 0) {
        return bad(TRTB_ERR_UNSUPPORTED,
                   precision_names(s.precision) + " cannot be builder flags on TensorRT " +
                       std::to_string(NV_TENSORRT_MAJOR) +
                       ", which builds every network strongly typed; convert the model (ModelOpt AutoCast for "
                       "fp16/bf16, Q/DQ quantization for int8/fp8) and build it without these flags");
    }
#endif
#if !TRTB_HAS_SAME_COMPUTE_CAPABILITY
    if (s.hardware_compat == TRTB_HARDWARE_COMPAT_SAME_COMPUTE_CAPABILITY) {
        return bad(TRTB_ERR_UNSUPPORTED,
                   "--hardware-compat same-compute-capability needs TensorRT 10.9 or newer; this trtbuild "
                   "was compiled against TensorRT " + version_text(kCompiledVersion));
    }
#endif
#if TRTB_HAS_PRECISION_FLAGS
    // "This flag is not supported when HardwareCompatibilityLevel::kAMPERE_PLUS is enabled"
    // (BuilderFlag::kFP8, NvInfer.h 10.x): refused here rather than by the build.
    if ((s.precision & TRTB_PRECISION_FP8) != 0 && s.hardware_compat == TRTB_HARDWARE_COMPAT_AMPERE_PLUS) {
        return bad(TRTB_ERR_INVALID_ARGUMENT,
                   "--fp8 cannot be combined with --hardware-compat ampere+: TensorRT 10 does not support its FP8 "
                   "flag (which only enables FP8 plugin inputs and outputs) in ampere+ engines; drop one of them");
    }
#endif
#if !TRTB_HAS_BUILD_ROUTE
    if (!s.extra.build_route.empty()) {
        return bad(TRTB_ERR_UNSUPPORTED,
                   "--set-build-route needs TensorRT 11.1 or newer (IBuilderConfig::setBuildRoute); this trtbuild "
                   "was compiled against TensorRT " + version_text(kCompiledVersion) +
                       ": leave it out, or build with TensorRT 11.1 or newer");
    }
#endif
    if (int32_t code = check_extra_settings(s, message); code != TRTB_OK) {
        return code;
    }
    *out = std::move(s);
    return TRTB_OK;
}

Outcome TensorRTBuild::configure(Objects& o) {
    nvinfer1::IBuilderConfig& config = *o.config;
    const uint64_t mark = logger_.mark();

#if TRTB_HAS_PRECISION_FLAGS
    // Deprecated since 10.12 and removed in 11: the Go side prints the deprecation notice.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    if ((s_.precision & TRTB_PRECISION_FP16) != 0) {
        config.setFlag(BuilderFlag::kFP16);
    }
    if ((s_.precision & TRTB_PRECISION_BF16) != 0) {
        config.setFlag(BuilderFlag::kBF16);
    }
    if ((s_.precision & TRTB_PRECISION_INT8) != 0) {
        config.setFlag(BuilderFlag::kINT8);
    }
    if ((s_.precision & TRTB_PRECISION_FP8) != 0) {
        // kFP8 does not select FP8 layers: it only "Enable[s] plugins with FP8 input/output"
        // (BuilderFlag, NvInfer.h 10.x). FP8 layers come from Q/DQ nodes in the model.
        logger_.note(TRTB_SEVERITY_WARNING,
                     "--fp8 on TensorRT 10 only lets plugins take FP8 inputs and outputs; FP8 layers need a "
                     "model with FP8 Q/DQ nodes (for example from NVIDIA ModelOpt)");
        config.setFlag(BuilderFlag::kFP8);
    }
#pragma GCC diagnostic pop
#endif

    if ((s_.flags & TRTB_FLAG_NO_TF32) != 0) {
        config.clearFlag(BuilderFlag::kTF32);
    }
    if ((s_.flags & TRTB_FLAG_REFIT) != 0) {
        config.setFlag(BuilderFlag::kREFIT);
    }
    if ((s_.flags & TRTB_FLAG_STRIP_WEIGHTS) != 0) {
        config.setFlag(BuilderFlag::kSTRIP_PLAN);  // implies kREFIT_IDENTICAL
    }
    if ((s_.flags & TRTB_FLAG_VERSION_COMPATIBLE) != 0) {
        config.setFlag(BuilderFlag::kVERSION_COMPATIBLE);
    }
    if ((s_.flags & TRTB_FLAG_EXCLUDE_LEAN_RUNTIME) != 0) {
        config.setFlag(BuilderFlag::kEXCLUDE_LEAN_RUNTIME);
    }
    if ((s_.flags & TRTB_FLAG_SPARSE_WEIGHTS) != 0) {
        config.setFlag(BuilderFlag::kSPARSE_WEIGHTS);
    }
    if ((s_.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0) {
        config.setFlag(BuilderFlag::kDISABLE_TIMING_CACHE);
    }
    if ((s_.flags & TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS) != 0) {
        config.setFlag(BuilderFlag::kERROR_ON_TIMING_CACHE_MISS);
    }

    if (s_.workspace_bytes > 0) {
        config.setMemoryPoolLimit(nvinfer1::MemoryPoolType::kWORKSPACE, static_cast<size_t>(s_.workspace_bytes));
    }
    if (s_.opt_level >= 0) {
        config.setBuilderOptimizationLevel(s_.opt_level);
    }
    if (s_.extra.avg_timing > 0) {
        config.setAvgTimingIterations(s_.extra.avg_timing);  // trtexec always sets it (8 by default)
    }
#if TRTB_HAS_BUILD_ROUTE
    if (!s_.extra.build_route.empty()) {
        logger_.note(TRTB_SEVERITY_INFO, "using build route " + s_.extra.build_route);
        if (!config.setBuildRoute(s_.extra.build_route.c_str())) {
            return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused --set-build-route \"" + s_.extra.build_route +
                                                       "\": " + errors_since(mark) +
                                                       "; trtexec --helpBuildRoute lists the knobs and their values");
        }
    }
#endif
    if (s_.max_aux_streams >= 0) {
#if NV_TENSORRT_MAJOR >= 11
        if (!config.setMaxAuxStreams(s_.max_aux_streams)) {
            return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused --max-aux-streams " +
                                                       std::to_string(s_.max_aux_streams) + ": " + errors_since(mark));
        }
#else
        config.setMaxAuxStreams(s_.max_aux_streams);  // returns void before 11.0
#endif
    }
    switch (s_.hardware_compat) {
        case TRTB_HARDWARE_COMPAT_AMPERE_PLUS:
            config.setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel::kAMPERE_PLUS);
            break;
#if TRTB_HAS_SAME_COMPUTE_CAPABILITY
        case TRTB_HARDWARE_COMPAT_SAME_COMPUTE_CAPABILITY:
            config.setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel::kSAME_COMPUTE_CAPABILITY);
            break;
#endif
        default:
            break;  // kNONE, TensorRT's default; others were refused by copy_settings
    }

    // TensorRT reports a refused setting to the error recorder and ignores the call.
    if (logger_.mark() > mark) {
        return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused a build option: " + errors_since(mark));
    }

    // A version-compatible engine carries the plugin libraries the parser used (trtexec does the
    // same), unless the lean runtime is left out, in which case the application provides them.
    if ((s_.flags & TRTB_FLAG_VERSION_COMPATIBLE) != 0) {
        int64_t nb_libs = 0;
        char const* const* libs = o.parser->getUsedVCPluginLibraries(nb_libs);
        if (libs != nullptr && nb_libs > 0) {
            // coverage: the stand-in's parser imports no plugin layer, so it names no plugin library
            for (int64_t i = 0; i < nb_libs; ++i) {
                const uint64_t lib_mark = logger_.mark();
                if (o.builder->getPluginRegistry().loadLibrary(libs[i]) == nullptr) {
                    // Already registered (for example through --plugins) is fine; say why anyway.
                    logger_.note(TRTB_SEVERITY_WARNING, std::string("plugin library ") + libs[i] +
                                                            " of the version-compatible engine was not loaded again: " +
                                                            errors_since(lib_mark));
                } else {
                    logger_.note(TRTB_SEVERITY_INFO,
                                 std::string("version-compatible engine uses plugin library ") + libs[i]);
                }
            }
            if ((s_.flags & TRTB_FLAG_EXCLUDE_LEAN_RUNTIME) == 0) {
                config.setPluginsToSerialize(libs, static_cast<int32_t>(nb_libs));
            }
        }
    }

    config.setProgressMonitor(&monitor_);
    return ok();
}

Outcome TensorRTBuild::add_profiles(Objects& o) {
    nvinfer1::INetworkDefinition& network = *o.network;
    std::vector<Input> inputs;
    bool any_dynamic = false;
    for (int32_t i = 0; i < network.getNbInputs(); ++i) {
        nvinfer1::ITensor* t = network.getInput(i);
        if (t == nullptr) {
            continue;  // coverage: getInput is null only for an index past getNbInputs
        }
        Input in;
        in.name = t->getName() != nullptr ? t->getName() : "";
        in.dims = t->getDimensions();
        in.shape_tensor = t->isShapeTensor();
        for (int32_t d = 0; d < in.dims.nbDims; ++d) {
            in.dynamic = in.dynamic || in.dims.d[d] < 0;
        }
        if (in.shape_tensor) {
            in.dynamic = true;
            in.nb_values = in.dims.nbDims == 0 ? 1 : static_cast<int32_t>(in.dims.d[0]);
        }
        any_dynamic = any_dynamic || in.dynamic;
        inputs.push_back(std::move(in));
    }
    auto input_names = [&inputs]() {
        std::string names;
        for (const Input& in : inputs) {
            names += (names.empty() ? "" : ", ") + in.name;
        }
        return names.empty() ? std::string("none") : names;
    };
    auto find = [&inputs](const std::string& name) -> const Input* {
        for (const Input& in : inputs) {
            if (in.name == name) {
                return &in;
            }
        }
        return nullptr;
    };

    // Check every given shape against the network first.
    for (size_t p = 0; p < s_.profiles.size(); ++p) {
        for (const Shape& sh : s_.profiles[p]) {
            const Input* in = find(sh.input);
            if (in == nullptr) {
                return fail(TRTB_ERR_INVALID_ARGUMENT, "the model has no input named " + sh.input +
                                                           "; its inputs are: " + input_names());
            }
            if (in->shape_tensor) {
                if (sh.nb_dims != in->nb_values) {
                    return fail(TRTB_ERR_INVALID_ARGUMENT,
                                "input " + sh.input + " is a shape tensor of " + std::to_string(in->nb_values) +
                                    " values; give it " + std::to_string(in->nb_values) + " values, not " +
                                    std::to_string(sh.nb_dims));
                }
                continue;
            }
            if (sh.nb_dims != in->dims.nbDims) {
                return fail(TRTB_ERR_INVALID_ARGUMENT,
                            "input " + sh.input + " has rank " + std::to_string(in->dims.nbDims) + " (" +
                                dims_text(in->dims.d, in->dims.nbDims) + "), but its shape has rank " +
                                std::to_string(sh.nb_dims));
            }
            for (int32_t d = 0; d < sh.nb_dims; ++d) {
                const int64_t fixed = in->dims.d[d];
                if (fixed >= 0 && (sh.min[d] != fixed || sh.opt[d] != fixed || sh.max[d] != fixed)) {
                    return fail(TRTB_ERR_INVALID_ARGUMENT,
                                "input " + sh.input + " is " + dims_text(in->dims.d, in->dims.nbDims) +
                                    ": dimension " + std::to_string(d) + " is fixed at " + std::to_string(fixed) +
                                    " and cannot be given as " + std::to_string(sh.min[d]) + ".." +
                                    std::to_string(sh.max[d]));
                }
            }
        }
    }
    // As trtexec (setupNetworkAndConfig, samples/common/sampleEngines.cpp), an output that is a
    // shape tensor, or has a dynamic dimension, also makes the network dynamic: the profiles
    // are added then even when every input is static ("A shape tensor output with known static
    // dimensions may have dynamic shape values inside it").
    bool dynamic_output = false;
    for (int32_t i = 0; i < network.getNbOutputs(); ++i) {
        const nvinfer1::ITensor* t = network.getOutput(i);
        if (t == nullptr) {
            continue;  // coverage: getOutput is null only for an index past getNbOutputs
        }
        const nvinfer1::Dims d = t->getDimensions();
        bool dynamic = t->isShapeTensor();
        for (int32_t k = 0; k < d.nbDims; ++k) {
            dynamic = dynamic || d.d[k] == -1;
        }
        dynamic_output = dynamic_output || dynamic;
    }
    if (!any_dynamic && !dynamic_output) {
        return ok();  // static network: the shapes matched it, and it needs no profile
    }

    std::vector<std::vector<Shape>> profiles = s_.profiles;
    if (profiles.empty()) {
        profiles.emplace_back();
    }
    for (size_t p = 0; p < profiles.size(); ++p) {
        const std::string where = profiles.size() > 1 ? " in profile " + std::to_string(p) : "";
        const uint64_t mark = logger_.mark();
        nvinfer1::IOptimizationProfile* profile = o.builder->createOptimizationProfile();  // owned by the builder
        if (profile == nullptr) {
            return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create an optimization profile: " + errors_since(mark));
        }
        for (const Input& in : inputs) {
            if (!in.dynamic) {
                continue;
            }
            const Shape* given = nullptr;
            for (const Shape& sh : profiles[p]) {
                if (sh.input == in.name) {
                    given = &sh;
                }
            }
            Shape fallback;
            if (given == nullptr) {
                // trtexec's rule: a dynamic input without a shape gets 1 for each dynamic dimension.
                fallback.input = in.name;
                if (in.shape_tensor) {
                    fallback.nb_dims = in.nb_values;
                    for (int32_t d = 0; d < in.nb_values && d < TRTB_MAX_DIMS; ++d) {
                        fallback.min[d] = fallback.opt[d] = fallback.max[d] = 1;
                    }
                } else {
                    fallback.nb_dims = in.dims.nbDims;
                    for (int32_t d = 0; d < in.dims.nbDims; ++d) {
                        const int64_t v = in.dims.d[d] < 0 ? 1 : in.dims.d[d];
                        fallback.min[d] = fallback.opt[d] = fallback.max[d] = v;
                    }
                }
                logger_.note(TRTB_SEVERITY_WARNING,
                             "input " + in.name + " is dynamic (" + dims_text(in.dims.d, in.dims.nbDims) +
                                 ") and has no shape" + where + "; using " +
                                 dims_text(fallback.opt, fallback.nb_dims) + " (give it with --shapes)");
                given = &fallback;
            }
            bool set = true;
            if (in.shape_tensor) {
                if (given->nb_dims > TRTB_MAX_DIMS) {
                    return fail(TRTB_ERR_UNSUPPORTED, "input " + in.name + " is a shape tensor of more than " +
                                                          std::to_string(TRTB_MAX_DIMS) + " values");
                }
                set = set_shape_values(*profile, in.name.c_str(), nvinfer1::OptProfileSelector::kMIN, given->min, given->nb_dims) &&
                      set_shape_values(*profile, in.name.c_str(), nvinfer1::OptProfileSelector::kOPT, given->opt, given->nb_dims) &&
                      set_shape_values(*profile, in.name.c_str(), nvinfer1::OptProfileSelector::kMAX, given->max, given->nb_dims);
            } else {
                nvinfer1::Dims mn{}, op{}, mx{};
                mn.nbDims = op.nbDims = mx.nbDims = given->nb_dims;
                for (int32_t d = 0; d < given->nb_dims; ++d) {
                    mn.d[d] = given->min[d];
                    op.d[d] = given->opt[d];
                    mx.d[d] = given->max[d];
                }
                set = profile->setDimensions(in.name.c_str(), nvinfer1::OptProfileSelector::kMIN, mn) &&
                      profile->setDimensions(in.name.c_str(), nvinfer1::OptProfileSelector::kOPT, op) &&
                      profile->setDimensions(in.name.c_str(), nvinfer1::OptProfileSelector::kMAX, mx);
            }
            if (!set) {
                return fail(TRTB_ERR_INVALID_ARGUMENT, "TensorRT refused the shape of input " + in.name + where +
                                                           ": " + errors_since(mark));
            }
        }
        if (o.config->addOptimizationProfile(profile) < 0) {
            return fail(TRTB_ERR_INVALID_ARGUMENT,
                        "optimization profile " + std::to_string(p) + " is not valid: " + errors_since(mark));
        }
    }
    return ok();
}

}  // namespace TRTB_SHIM
}  // namespace trtb
