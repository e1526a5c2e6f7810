// build_settings.cpp: checks of trtexec's build settings in trtb_options (ABI 3 and 5), shared by the
// simulated builder and the TensorRT shim, so both refuse the same malformed options.

#include "trtb_internal.hpp"

#include <string>

namespace trtb {

namespace {

const char* const kTypeNames[] = {"", "fp32", "fp16", "bf16", "int8", "fp8",
                                  "int32", "int64", "bool", "uint8", "int4"};
const char* const kFormatNames[] = {"chw", "chw2", "hwc8", "chw4", "chw16", "chw32", "dhwc8",
                                    "cdhw32", "hwc", "dla_linear", "dla_hwc4", "hwc16", "dhwc"};
const char* const kTacticNames[] = {"cublas", "cublas_lt", "cudnn", "edge_mask_convolutions",
                                    "jit_convolutions"};
const char* const kPoolNames[] = {"tacticSharedMem", "dlaSRAM", "dlaLocalDRAM", "dlaGlobalDRAM"};
const char* const kVerbosityNames[] = {"", "layer_names_only", "none", "detailed"};
const char* const kConstraintNames[] = {"none", "prefer", "obey"};

constexpr uint32_t kAllFormats = (1u << 13) - 1;
constexpr uint32_t kAllTactics = (1u << 5) - 1;
constexpr uint32_t kAllPools = (1u << 4) - 1;

bool fail(std::string* status, const std::string& message) {
    *status = message;
    return false;
}

bool valid_type(int32_t t) { return t >= TRTB_TYPE_FP32 && t <= TRTB_TYPE_INT4; }

// check_formats checks one list of I/O formats and appends its trtexec spelling to *text.
bool check_formats(const char* what, const trtb_io_format* list, int32_t n,
                   std::vector<trtb_io_format>* kept, std::string* text, std::string* status) {
    if (n < 0 || (n > 0 && list == nullptr)) {
        return fail(status, std::string("bad ") + what + " format list");
    }
    for (int32_t i = 0; i < n; ++i) {
        const trtb_io_format& f = list[i];
        if (!valid_type(f.type)) {
            return fail(status, std::string(what) + " format " + std::to_string(i) +
                                    ": unknown data type " + std::to_string(f.type));
        }
        if (f.formats == 0 || (f.formats & ~kAllFormats) != 0) {
            return fail(status, std::string(what) + " format " + std::to_string(i) +
                                    ": give one or more known tensor formats");
        }
        kept->push_back(f);
        if (i > 0) {
            *text += ',';
        }
        *text += kTypeNames[f.type];
        *text += ':';
        bool first = true;
        for (int b = 0; b < 13; ++b) {
            if ((f.formats & (1u << b)) != 0) {
                *text += first ? "" : "+";
                *text += kFormatNames[b];
                first = false;
            }
        }
    }
    return true;
}

std::string bit_names(uint32_t bits, const char* const* names, int n, char sign) {
    std::string out;
    for (int b = 0; b < n; ++b) {
        if ((bits & (1u << b)) != 0) {
            out += out.empty() ? "" : ",";
            out += sign;
            out += names[b];
        }
    }
    return out;
}

}  // namespace

const char* data_type_name(int32_t type) {
    return valid_type(type) ? kTypeNames[type] : "unknown";
}

bool check_build_settings(const trtb_options& o, ExtraSettings* kept, std::string* status) {
    ExtraSettings x;
    std::string out;
    std::string text;
    if (!check_formats("input", o.input_formats, o.nb_input_formats, &x.input_formats, &text, status)) {
        return false;
    }
    if (!text.empty()) {
        out += "input_formats " + text + "\n";
    }
    text.clear();
    if (!check_formats("output", o.output_formats, o.nb_output_formats, &x.output_formats, &text, status)) {
        return false;
    }
    if (!text.empty()) {
        out += "output_formats " + text + "\n";
    }

    if (o.precision_constraints < TRTB_PRECISION_CONSTRAINTS_NONE ||
        o.precision_constraints > TRTB_PRECISION_CONSTRAINTS_OBEY) {
        return fail(status, "unknown precision constraints " + std::to_string(o.precision_constraints));
    }
    x.precision_constraints = o.precision_constraints;
    if (o.nb_layer_precisions < 0 || (o.nb_layer_precisions > 0 && o.layer_precisions == nullptr)) {
        return fail(status, "bad layer precision list");
    }
    if (o.nb_layer_precisions > 0 && o.precision_constraints == TRTB_PRECISION_CONSTRAINTS_NONE) {
        return fail(status, "layer precisions have no effect without precision constraints: ask "
                            "for prefer or obey");
    }
    if (o.precision_constraints != TRTB_PRECISION_CONSTRAINTS_NONE) {
        out += std::string("precision_constraints ") + kConstraintNames[o.precision_constraints] + "\n";
    }
    text.clear();
    for (int32_t i = 0; i < o.nb_layer_precisions; ++i) {
        const trtb_layer_precision& lp = o.layer_precisions[i];
        if (lp.layer == nullptr || lp.layer[0] == '\0') {
            return fail(status, "layer precision " + std::to_string(i) + ": no layer name");
        }
        if (!valid_type(lp.type)) {
            return fail(status, std::string("layer ") + lp.layer + ": unknown data type " +
                                    std::to_string(lp.type));
        }
        x.layer_precisions.emplace_back(lp.layer, lp.type);
        text += (i > 0 ? "," : "") + std::string(lp.layer) + ":" + kTypeNames[lp.type];
    }
    if (!text.empty()) {
        out += "layer_precisions " + text + "\n";
    }

    if (o.profiling_verbosity < TRTB_PROFILING_DEFAULT || o.profiling_verbosity > TRTB_PROFILING_DETAILED) {
        return fail(status, "unknown profiling verbosity " + std::to_string(o.profiling_verbosity));
    }
    x.profiling_verbosity = o.profiling_verbosity;
    if (o.profiling_verbosity != TRTB_PROFILING_DEFAULT) {
        out += std::string("profiling_verbosity ") + kVerbosityNames[o.profiling_verbosity] + "\n";
    }

    if (((o.tactic_sources_on | o.tactic_sources_off) & ~kAllTactics) != 0) {
        return fail(status, "unknown tactic source bits");
    }
    if ((o.tactic_sources_on & o.tactic_sources_off) != 0) {
        return fail(status, "a tactic source is both enabled and disabled: give each once");
    }
    x.tactic_sources_on = o.tactic_sources_on;
    x.tactic_sources_off = o.tactic_sources_off;
    if ((o.tactic_sources_on | o.tactic_sources_off) != 0) {
        std::string on = bit_names(o.tactic_sources_on, kTacticNames, 5, '+');
        std::string off = bit_names(o.tactic_sources_off, kTacticNames, 5, '-');
        out += "tactic_sources " + on + (on.empty() || off.empty() ? "" : ",") + off + "\n";
    }

    if (o.use_dla != 0) {
        if (o.dla_core < 0) {
            return fail(status, "DLA core " + std::to_string(o.dla_core) + " is negative: use 0 or more");
        }
        out += "dla_core " + std::to_string(o.dla_core) + (o.gpu_fallback != 0 ? " gpu_fallback" : "") + "\n";
    } else if (o.gpu_fallback != 0) {
        return fail(status, "GPU fallback needs a DLA core: also ask for one");
    }
    x.use_dla = o.use_dla != 0;
    x.dla_core = o.dla_core;
    x.gpu_fallback = o.gpu_fallback != 0;
    if (o.best != 0 && o.strongly_typed != 0) {
        return fail(status, "a strongly typed network takes its precisions from the model, so "
                            "\"best\" has nothing to choose: ask for one of them");
    }
    x.strongly_typed = o.strongly_typed != 0;
    x.best = o.best != 0;
    if (x.strongly_typed) {
        out += "strongly_typed\n";
    }
    if (x.best) {
        out += "best\n";
    }
    if ((o.pools_set & ~kAllPools) != 0) {
        return fail(status, "unknown memory pool bits");
    }
    x.pools_set = o.pools_set;
    const uint64_t sizes[] = {o.tactic_shared_memory_bytes, o.dla_managed_sram_bytes,
                              o.dla_local_dram_bytes, o.dla_global_dram_bytes};
    text.clear();
    for (int b = 0; b < 4; ++b) {
        x.pool_bytes[b] = sizes[b];
        if ((o.pools_set & (1u << b)) != 0) {
            text += (text.empty() ? "" : ",") + std::string(kPoolNames[b]) + ":" + std::to_string(sizes[b]);
        }
    }
    if (!text.empty()) {
        out += "mem_pools " + text + "\n";
    }
    if (o.avg_timing < 0) {
        return fail(status, "--avg-timing " + std::to_string(o.avg_timing) +
                                " is negative: give how many iterations each tactic's timing averages, 1 or more "
                                "(trtexec uses 8)");
    }
    x.avg_timing = o.avg_timing;
    if (o.avg_timing > 0) {
        out += "avg_timing " + std::to_string(o.avg_timing) + "\n";
    }
    if (o.build_route != nullptr && o.build_route[0] != '\0') {
        for (const char* c = o.build_route; *c != '\0'; ++c) {
            if (static_cast<unsigned char>(*c) < 0x20 || *c == 0x7f) {
                return fail(status, "the build route holds a control character: give knobs such as "
                                    "-conv_use_long_w=off, separated by spaces");
            }
        }
        x.build_route = o.build_route;
        out += "build_route " + x.build_route + "\n";
    }
    x.summary = out;
    *kept = std::move(x);
    return true;
}

}  // namespace trtb
