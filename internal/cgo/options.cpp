// options.cpp: the one checker of trtb_options that both C++ backends call (see
// check_options in trtb_internal.hpp). Backend-specific refusals (an option a TensorRT major
// cannot honour) stay in the backend, after this check.

#include "trtb_internal.hpp"
#include "trtb_platform.hpp"

#include <cstring>

namespace trtb {

namespace {

std::string dims_text(const int64_t* d, int32_t n) {
    std::string out = "[";
    for (int32_t i = 0; i < n; ++i) {
        if (i > 0) {
            out += ',';
        }
        out += std::to_string(d[i]);
    }
    return out + "]";
}

}  // namespace

int32_t check_options(const trtb_options& o, BuildSettings* out, std::string* message) {
    auto bad = [message](std::string text) {
        *message = std::move(text);
        return TRTB_ERR_INVALID_ARGUMENT;
    };
    if (o.size != sizeof(trtb_options)) {
        return bad("build options are " + std::to_string(o.size) + " bytes but this builder expects " +
                   std::to_string(sizeof(trtb_options)) +
                   ": the caller and the builder disagree on trtb.h; rebuild both from one tree");
    }
    if (o.model_path == nullptr || o.model_path[0] == '\0') {
        return bad("no model path given: pass the .onnx file to build");
    }
    {
        const platform::FileFacts plan = platform::file_facts(o.plan_fd);
        if (!plan.open) {
            return bad("plan file descriptor " + std::to_string(o.plan_fd) +
                       " is not open: pass an open, empty, writable file");
        }
        if (!plan.writable) {
            return bad("the plan file is open read-only: open it for writing");
        }
        if (plan.regular && plan.size != 0) {
            return bad("the plan file already holds " + std::to_string(static_cast<long long>(plan.size)) +
                       " bytes: pass a new, empty file");
        }
    }
    if (o.log_severity < TRTB_SEVERITY_INTERNAL_ERROR || o.log_severity > TRTB_SEVERITY_VERBOSE) {
        return bad("log severity " + std::to_string(o.log_severity) +
                   " is out of range: use 0 (internal error) to 4 (verbose)");
    }
    if (o.device < 0) {
        return bad("--device " + std::to_string(o.device) +
                   " is negative: CUDA devices are numbered from 0");
    }
    if ((o.precision & ~kValidPrecision) != 0) {
        return bad("unknown precision bits 0x" + hex_text(o.precision & ~kValidPrecision) +
                   ": the caller is newer than this builder; rebuild both from one tree");
    }
    if ((o.flags & ~kValidFlags) != 0) {
        return bad("unknown builder flag bits 0x" + hex_text(o.flags & ~kValidFlags) +
                   ": the caller is newer than this builder; rebuild both from one tree");
    }
    if ((o.flags & TRTB_FLAG_EXCLUDE_LEAN_RUNTIME) != 0 && (o.flags & TRTB_FLAG_VERSION_COMPATIBLE) == 0) {
        return bad("excluding the lean runtime only applies to version-compatible engines: add "
                   "--version-compatible");
    }
    if ((o.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0 &&
        (o.flags & TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS) != 0) {
        return bad("failing on timing cache misses needs a timing cache: do not disable the timing cache");
    }
    if (o.opt_level < -1 || o.opt_level > 5) {
        return bad("--opt-level " + std::to_string(o.opt_level) + " is out of range: use 0 to 5");
    }
    if (o.max_aux_streams < -1) {
        return bad("--max-aux-streams " + std::to_string(o.max_aux_streams) +
                   " is negative: use 0 or more");
    }
    if (o.hardware_compat < TRTB_HARDWARE_COMPAT_NONE ||
        o.hardware_compat > TRTB_HARDWARE_COMPAT_SAME_COMPUTE_CAPABILITY) {
        return bad("unknown hardware compatibility level " + std::to_string(o.hardware_compat) +
                   ": use none, ampere+ or same-compute-capability");
    }
    if (o.nb_profiles < 0 || o.nb_profiles > kMaxProfiles || (o.nb_profiles > 0 && o.profiles == nullptr)) {
        return bad("the optimization profile list is malformed (" + std::to_string(o.nb_profiles) +
                   " profiles, at most " + std::to_string(kMaxProfiles) + ")");
    }
    if (o.nb_plugin_paths < 0 || (o.nb_plugin_paths > 0 && o.plugin_paths == nullptr)) {
        return bad("the plugin list is malformed (" + std::to_string(o.nb_plugin_paths) + " paths)");
    }
    if (o.timing_cache_size > 0 && o.timing_cache == nullptr) {
        return bad("timing cache size is set but the data is NULL");
    }

    BuildSettings s;
    s.model_path = o.model_path;
    s.plan_fd = o.plan_fd;
    s.log_severity = o.log_severity;
    s.device = o.device;
    s.precision = o.precision;
    s.flags = o.flags;
    s.opt_level = o.opt_level;
    s.max_aux_streams = o.max_aux_streams;
    s.hardware_compat = o.hardware_compat;
    s.workspace_bytes = o.workspace_bytes;
    for (int32_t p = 0; p < o.nb_profiles; ++p) {
        const trtb_profile& prof = o.profiles[p];
        if (prof.nb_shapes < 0 || (prof.nb_shapes > 0 && prof.shapes == nullptr)) {
            return bad("profile " + std::to_string(p) + ": the shape list is malformed");
        }
        std::vector<ProfileShape> shapes;
        for (int32_t i = 0; i < prof.nb_shapes; ++i) {
            const trtb_shape& in = prof.shapes[i];
            if (in.input == nullptr || in.input[0] == '\0') {
                return bad("profile " + std::to_string(p) + ", shape " + std::to_string(i) +
                           ": no input name; name the input the shape is for");
            }
            if (in.nb_dims < 0 || in.nb_dims > TRTB_MAX_DIMS) {
                return bad("profile " + std::to_string(p) + ", input " + in.input + ": rank " +
                           std::to_string(in.nb_dims) + " is out of range 0.." + std::to_string(TRTB_MAX_DIMS));
            }
            ProfileShape sh;
            sh.input = in.input;
            sh.nb_dims = in.nb_dims;
            for (int32_t d = 0; d < in.nb_dims; ++d) {
                if (in.min[d] < 0 || in.min[d] > in.opt[d] || in.opt[d] > in.max[d]) {
                    return bad("profile " + std::to_string(p) + ", input " + in.input + ": min " +
                               dims_text(in.min, in.nb_dims) + ", opt " + dims_text(in.opt, in.nb_dims) +
                               ", max " + dims_text(in.max, in.nb_dims) +
                               " must satisfy 0 <= min <= opt <= max in every dimension");
                }
                sh.min[d] = in.min[d];
                sh.opt[d] = in.opt[d];
                sh.max[d] = in.max[d];
            }
            shapes.push_back(std::move(sh));
        }
        s.profiles.push_back(std::move(shapes));
    }
    for (int32_t i = 0; i < o.nb_plugin_paths; ++i) {
        if (o.plugin_paths[i] == nullptr || o.plugin_paths[i][0] == '\0') {
            return bad("plugin path " + std::to_string(i) + " is empty: give the plugin library's file");
        }
        s.plugin_paths.emplace_back(o.plugin_paths[i]);
    }
    if (o.timing_cache != nullptr && o.timing_cache_size > 0) {
        s.has_timing_cache = true;
        // Borrowed until trtb_build_destroy (trtb.h): a large cache is not copied.
        s.timing_cache = std::string_view(static_cast<const char*>(o.timing_cache), static_cast<size_t>(o.timing_cache_size));
    }
    if (!check_build_settings(o, &s.extra, message)) {
        return TRTB_ERR_INVALID_ARGUMENT;
    }
    *out = std::move(s);
    message->clear();
    return TRTB_OK;
}

std::string hex_text(uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    do {
        out.insert(out.begin(), digits[v & 0xf]);
        v >>= 4;
    } while (v != 0);
    return out;
}

}  // namespace trtb
