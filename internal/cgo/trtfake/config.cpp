// config.cpp: optimization profiles and the builder config (objects.hpp), with TensorRT's
// checks of what they are given: a refused value is an API usage error of the call, and the
// setting keeps what it had.

#include "objects.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <utility>

namespace trtb {
namespace TRTB_FAKE {

namespace {

const char* selector_name(nvinfer1::OptProfileSelector s) {
    switch (s) {
        case nvinfer1::OptProfileSelector::kMIN:
            return "kMIN";
        case nvinfer1::OptProfileSelector::kOPT:
            return "kOPT";
        default:
            return "kMAX";
    }
}

int selector_index(nvinfer1::OptProfileSelector s) {
    return std::min(std::max(static_cast<int>(s), 0), 2);
}

std::string dims_text(const nvinfer1::Dims& d) {
    std::string out = "(";
    for (int32_t i = 0; i < d.nbDims; ++i) {
        out += (i > 0 ? "," : "") + std::to_string(d.d[i]);
    }
    return out + ")";
}

template <size_t N>
bool listed(int32_t value, const int32_t (&values)[N]) {
    return std::find(values, values + N, value) != values + N;
}

#if TRTB_SHIM_MAJOR != 10
// route_ok checks a build route as trtexec's --setBuildRoute takes one: comma-separated
// "[+|-]knob=value" items of letters, digits and underscores.
bool route_ok(const std::string& route) {
    if (route.empty()) {
        return false;
    }
    size_t at = 0;
    while (at <= route.size()) {
        size_t end = route.find(',', at);
        if (end == std::string::npos) {
            end = route.size();
        }
        std::string item = route.substr(at, end - at);
        at = end + 1;
        if (!item.empty() && (item[0] == '+' || item[0] == '-')) {
            item.erase(0, 1);
        }
        const size_t eq = item.find('=');
        if (eq == 0 || eq == std::string::npos || eq + 1 == item.size()) {
            return false;
        }
        for (char c : item) {
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '=' || c == '.')) {
                return false;
            }
        }
    }
    return true;
}
#endif

}  // namespace

// ---------------------------------------------------------------------------------------------
// Profiles.

bool ProfileImpl::setDimensions(char const* input, nvinfer1::OptProfileSelector select, nvinfer1::Dims const& dims) noexcept {
    return api_guard(*ctx_, "IOptimizationProfile::setDimensions", false, [&] {
        const std::string name = input != nullptr ? input : "";
        auto refuse = [&](const std::string& why) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IOptimizationProfile::setDimensions", "API Usage Error", why);
            return false;
        };
        if (dims.nbDims < 0 || dims.nbDims > nvinfer1::Dims::MAX_DIMS) {
            return refuse("input " + name + ": rank " + std::to_string(dims.nbDims) + " is out of range");
        }
        for (int32_t i = 0; i < dims.nbDims; ++i) {
            if (dims.d[i] < 0) {
                return refuse("input " + name + ": " + selector_name(select) + " dimensions " + dims_text(dims) +
                              " must not be negative");
            }
        }
        Shape& sh = shapes_[name];
        const int k = selector_index(select);
        for (int other = 0; other < 3; ++other) {
            if (other == k || !sh.set[other]) {
                continue;
            }
            const nvinfer1::Dims& o = sh.dims[other];
            if (o.nbDims != dims.nbDims) {
                return refuse("input " + name + ": " + selector_name(select) + " dimensions " + dims_text(dims) +
                              " have another rank than the profile's other dimensions " + dims_text(o));
            }
            for (int32_t i = 0; i < dims.nbDims; ++i) {
                if ((other < k && o.d[i] > dims.d[i]) || (other > k && o.d[i] < dims.d[i])) {
                    return refuse("input " + name + ": the profile needs kMIN <= kOPT <= kMAX, and " +
                                  selector_name(select) + " " + dims_text(dims) + " breaks it against " +
                                  selector_name(static_cast<nvinfer1::OptProfileSelector>(other)) + " " + dims_text(o));
                }
            }
        }
        sh.dims[k] = dims;
        sh.set[k] = true;
        return true;
    });
}

nvinfer1::Dims ProfileImpl::getDimensions(char const* input, nvinfer1::OptProfileSelector select) const noexcept {
    nvinfer1::Dims none{};
    none.nbDims = -1;
    const auto it = shapes_.find(input != nullptr ? input : "");
    if (it == shapes_.end() || !it->second.set[selector_index(select)]) {
        return none;
    }
    return it->second.dims[selector_index(select)];
}

bool ProfileImpl::setShapeValuesV2(char const* input, nvinfer1::OptProfileSelector select, int64_t const* values,
                                   int32_t nb) noexcept {
    return api_guard(*ctx_, "IOptimizationProfile::setShapeValuesV2", false, [&] {
        if (nb < 0 || (nb > 0 && values == nullptr)) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IOptimizationProfile::setShapeValuesV2", "API Usage Error",
                        "no values given");
            return false;
        }
        Shape& sh = shapes_[input != nullptr ? input : ""];
        const int k = selector_index(select);
        sh.values[k].assign(values, values + nb);
        sh.values_set[k] = true;
        return true;
    });
}

bool ProfileImpl::isValid() const noexcept {
    for (const auto& kv : shapes_) {
        const Shape& sh = kv.second;
        const bool dims = sh.set[0] || sh.set[1] || sh.set[2];
        const bool values = sh.values_set[0] || sh.values_set[1] || sh.values_set[2];
        if ((dims && !(sh.set[0] && sh.set[1] && sh.set[2])) ||
            (values && !(sh.values_set[0] && sh.values_set[1] && sh.values_set[2]))) {
            return false;
        }
        if (values) {
            for (size_t i = 0; i < sh.values[0].size(); ++i) {
                if (sh.values[1].size() != sh.values[0].size() || sh.values[2].size() != sh.values[0].size() ||
                    sh.values[0][i] > sh.values[1][i] || sh.values[1][i] > sh.values[2][i]) {
                    return false;
                }
            }
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// The builder config.

ConfigImpl::ConfigImpl(ContextPtr ctx) : VBuilderConfigStubs(*ctx), ctx_(std::move(ctx)) {
    // TensorRT's defaults: TF32 on; the convolution tactic sources that are not libraries.
    flags_ = uint64_t{1} << static_cast<int32_t>(nvinfer1::BuilderFlag::kTF32);
    tactic_sources_ = (1U << static_cast<uint32_t>(nvinfer1::TacticSource::kEDGE_MASK_CONVOLUTIONS)) |
                      (1U << static_cast<uint32_t>(nvinfer1::TacticSource::kJIT_CONVOLUTIONS));
}

bool ConfigImpl::valid_flag(nvinfer1::BuilderFlag flag, const char* api) const {
    const int32_t v = static_cast<int32_t>(flag);
    if (listed(v, nvinfer1::trtfake_stubs::kBuilderFlagValues)) {
        return true;
    }
    // TensorRT 11 renumbered BuilderFlag without the precision flags weak typing needed: a
    // value it has no flag for is refused, as TensorRT refuses any value out of its enum.
    ctx_->error(ErrorCode::kINVALID_ARGUMENT, api, "API Usage Error",
                "BuilderFlag value " + std::to_string(v) + " is not a builder flag of TensorRT " +
                    version_text(ctx_->version()) +
                    (kMajor >= 11 ? " (TensorRT 11 builds every network strongly typed: its precision flags are gone)" : ""));
    return false;
}

void ConfigImpl::setFlag(nvinfer1::BuilderFlag flag) noexcept {
    // Refused (the refuse setting), the flag stays as it was, with the call's error.
    if (!refused(*ctx_, "IBuilderConfig::setFlag") && valid_flag(flag, "IBuilderConfig::setFlag")) {
        flags_ |= uint64_t{1} << static_cast<int32_t>(flag);
    }
}

void ConfigImpl::clearFlag(nvinfer1::BuilderFlag flag) noexcept {
    if (valid_flag(flag, "IBuilderConfig::clearFlag")) {
        flags_ &= ~(uint64_t{1} << static_cast<int32_t>(flag));
    }
}

bool ConfigImpl::getFlag(nvinfer1::BuilderFlag flag) const noexcept {
    return valid_flag(flag, "IBuilderConfig::getFlag") && this->flag(static_cast<int32_t>(flag));
}

void ConfigImpl::setAvgTimingIterations(int32_t n) noexcept {
    if (n < 1) {
        ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setAvgTimingIterations", "API Usage Error",
                    "averaging iterations must be at least 1, not " + std::to_string(n));
        return;
    }
    avg_timing_ = n;
}

nvinfer1::ITimingCache const* ConfigImpl::getTimingCache() const noexcept {
    return cache_;
}

int32_t ConfigImpl::addOptimizationProfile(nvinfer1::IOptimizationProfile const* profile) noexcept {
    return api_guard(*ctx_, "IBuilderConfig::addOptimizationProfile", int32_t{-1}, [&]() -> int32_t {
        if (profile == nullptr) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::addOptimizationProfile", "API Usage Error",
                        "no profile given");
            return -1;
        }
        // Profiles come from the stand-in's createOptimizationProfile: nothing else makes one.
        const ProfileImpl& p = static_cast<Profile const*>(profile)->impl();
        if (!p.isValid()) {
            ctx_->error(ErrorCode::kINVALID_CONFIG, "IBuilderConfig::addOptimizationProfile", "API Usage Error",
                        "the optimization profile is not valid: every input it names needs kMIN, kOPT and kMAX, "
                        "kMIN <= kOPT <= kMAX");
            return -1;
        }
        profiles_.push_back(&p);
        return static_cast<int32_t>(profiles_.size()) - 1;
    });
}

nvinfer1::ITimingCache* ConfigImpl::createTimingCache(void const* blob, std::size_t size) const noexcept {
    return api_guard(*ctx_, "IBuilderConfig::createTimingCache", static_cast<nvinfer1::ITimingCache*>(nullptr),
                     [&]() -> nvinfer1::ITimingCache* {
                         auto cache = std::make_unique<TimingCache>(ctx_, ctx_->settings().device);
                         if (blob != nullptr && size > 0) {
                             bool foreign = false;
                             std::string why;
                             if (!cache->impl().deserialize(std::string_view(static_cast<const char*>(blob), size), &foreign, &why)) {
                                 if (!foreign) {
                                     ctx_->error(ErrorCode::kUNSPECIFIED_ERROR, "IBuilderConfig::createTimingCache",
                                                 "Serialization", why);
                                     return nullptr;
                                 }
                                 // Another TensorRT's cache: TensorRT warns and starts from an empty one.
                                 ctx_->log(Severity::kWARNING, why);
                             }
                         }
                         return cache.release();
                     });
}

bool ConfigImpl::setTimingCache(nvinfer1::ITimingCache const& cache, bool ignore_mismatch) noexcept {
    return api_guard(*ctx_, "IBuilderConfig::setTimingCache", false, [&] {
        // Caches come from the stand-in's createTimingCache.
        TimingCache& c = const_cast<TimingCache&>(static_cast<TimingCache const&>(cache));
        if (c.impl().device() != ctx_->settings().device && !ignore_mismatch) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setTimingCache", "API Usage Error",
                        "the timing cache was created on another device (" + c.impl().device() + ", this is " +
                            ctx_->settings().device + "); set ignoreMismatch to use it anyway");
            return false;
        }
        cache_ = &c;
        return true;
    });
}

void ConfigImpl::setMemoryPoolLimit(nvinfer1::MemoryPoolType pool, std::size_t bytes) noexcept {
    if (pool == nvinfer1::MemoryPoolType::kWORKSPACE) {
        workspace_ = bytes;
    }
    pools_[static_cast<int32_t>(pool)] = bytes;
}

void ConfigImpl::setBuilderOptimizationLevel(int32_t level) noexcept {
    if (level < 0 || level > 5) {
        ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setBuilderOptimizationLevel", "API Usage Error",
                    "the builder optimization level must be 0 to 5, not " + std::to_string(level));
        return;
    }
    opt_level_ = level;
}

#if TRTB_SHIM_MAJOR == 10
void ConfigImpl::setMaxAuxStreams(int32_t n) noexcept {
    // Refused (the refuse setting), the call is ignored with its error, as a value TensorRT refuses.
    if (refused(*ctx_, "IBuilderConfig::setMaxAuxStreams")) {
        return;
    }
    if (n < 0) {
        ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setMaxAuxStreams", "API Usage Error",
                    "the number of auxiliary streams must not be negative");
        return;
    }
    aux_streams_ = n;
}
#else
bool ConfigImpl::setMaxAuxStreams(int32_t n) noexcept {
    if (refused(*ctx_, "IBuilderConfig::setMaxAuxStreams")) {
        return false;
    }
    if (n < 0) {
        ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setMaxAuxStreams", "API Usage Error",
                    "the number of auxiliary streams must not be negative");
        return false;
    }
    aux_streams_ = n;
    return true;
}

bool ConfigImpl::setBuildRoute(char const* route) noexcept {
    return api_guard(*ctx_, "IBuilderConfig::setBuildRoute", false, [&] {
        const std::string r = route != nullptr ? route : "";
        if (!route_ok(r)) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setBuildRoute", "API Usage Error",
                        "\"" + r + "\" is not a build route: give [+|-]knob=value items, comma-separated");
            return false;
        }
        route_ = r;
        return true;
    });
}
#endif

void ConfigImpl::setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel level) noexcept {
    hardware_compat_ = static_cast<int32_t>(level);
}

// kBuilderFlagNames are BuilderFlag's names, for the plan (deprecated ones too).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr std::pair<nvinfer1::BuilderFlag, const char*> kBuilderFlagNames[] = {
    {nvinfer1::BuilderFlag::kDEBUG, "kDEBUG"},
    {nvinfer1::BuilderFlag::kGPU_FALLBACK, "kGPU_FALLBACK"},
    {nvinfer1::BuilderFlag::kREFIT, "kREFIT"},
    {nvinfer1::BuilderFlag::kDISABLE_TIMING_CACHE, "kDISABLE_TIMING_CACHE"},
    {nvinfer1::BuilderFlag::kTF32, "kTF32"},
    {nvinfer1::BuilderFlag::kSPARSE_WEIGHTS, "kSPARSE_WEIGHTS"},
    {nvinfer1::BuilderFlag::kSAFETY_SCOPE, "kSAFETY_SCOPE"},
    {nvinfer1::BuilderFlag::kDIRECT_IO, "kDIRECT_IO"},
    {nvinfer1::BuilderFlag::kVERSION_COMPATIBLE, "kVERSION_COMPATIBLE"},
    {nvinfer1::BuilderFlag::kEXCLUDE_LEAN_RUNTIME, "kEXCLUDE_LEAN_RUNTIME"},
    {nvinfer1::BuilderFlag::kERROR_ON_TIMING_CACHE_MISS, "kERROR_ON_TIMING_CACHE_MISS"},
    {nvinfer1::BuilderFlag::kDISABLE_COMPILATION_CACHE, "kDISABLE_COMPILATION_CACHE"},
    {nvinfer1::BuilderFlag::kSTRIP_PLAN, "kSTRIP_PLAN"},
    {nvinfer1::BuilderFlag::kREFIT_IDENTICAL, "kREFIT_IDENTICAL"},
    {nvinfer1::BuilderFlag::kWEIGHT_STREAMING, "kWEIGHT_STREAMING"},
    {nvinfer1::BuilderFlag::kREFIT_INDIVIDUAL, "kREFIT_INDIVIDUAL"},
    {nvinfer1::BuilderFlag::kSTRICT_NANS, "kSTRICT_NANS"},
    {nvinfer1::BuilderFlag::kMONITOR_MEMORY, "kMONITOR_MEMORY"},
    {nvinfer1::BuilderFlag::kEDITABLE_TIMING_CACHE, "kEDITABLE_TIMING_CACHE"},
    {nvinfer1::BuilderFlag::kDISTRIBUTIVE_INDEPENDENCE, "kDISTRIBUTIVE_INDEPENDENCE"},
#if TRTB_SHIM_MAJOR == 10
    {nvinfer1::BuilderFlag::kFP16, "kFP16"},
    {nvinfer1::BuilderFlag::kINT8, "kINT8"},
    {nvinfer1::BuilderFlag::kOBEY_PRECISION_CONSTRAINTS, "kOBEY_PRECISION_CONSTRAINTS"},
    {nvinfer1::BuilderFlag::kPREFER_PRECISION_CONSTRAINTS, "kPREFER_PRECISION_CONSTRAINTS"},
    {nvinfer1::BuilderFlag::kREJECT_EMPTY_ALGORITHMS, "kREJECT_EMPTY_ALGORITHMS"},
    {nvinfer1::BuilderFlag::kFP8, "kFP8"},
    {nvinfer1::BuilderFlag::kBF16, "kBF16"},
    {nvinfer1::BuilderFlag::kWEIGHTLESS, "kWEIGHTLESS"},
    {nvinfer1::BuilderFlag::kINT4, "kINT4"},
    {nvinfer1::BuilderFlag::kFP4, "kFP4"},
#endif
};
#pragma GCC diagnostic pop

std::string ConfigImpl::settings_text() const {
    std::string out;
    if (!pools_.empty()) {
        out += "memory_pools";
        for (const auto& p : pools_) {
            out += " " + std::to_string(p.first) + ":" + std::to_string(p.second);
        }
        out += "\n";
    }
    if (verbosity_ >= 0) {
        out += "profiling_verbosity " + std::to_string(verbosity_) + "\n";
    }
    if (tactic_sources_set_) {
        char buf[16];
        std::snprintf(buf, sizeof(buf), "0x%x", static_cast<unsigned>(tactic_sources_));
        out += std::string("tactic_sources ") + buf + "\n";
    }
    if (aux_streams_ >= 0) {
        out += "max_aux_streams " + std::to_string(aux_streams_) + "\n";
    }
    if (hardware_compat_ >= 0) {
        out += "hardware_compat " + std::to_string(hardware_compat_) + "\n";
    }
    std::string flags;
    for (const auto& f : kBuilderFlagNames) {
        if (flag(static_cast<int32_t>(f.first))) {
            flags += (flags.empty() ? "" : ",") + std::string(f.second);
        }
    }
    out += "builder_flags " + (flags.empty() ? std::string("none") : flags) + "\n";
#if TRTB_SHIM_MAJOR != 10
    if (!route_.empty()) {
        out += "build_route " + route_ + "\n";
    }
#endif
    return out;
}

void ConfigImpl::setPluginsToSerialize(char const* const* paths, int32_t n) noexcept {
    api_guard(*ctx_, "IBuilderConfig::setPluginsToSerialize", 0, [&] {
        plugins_.clear();
        for (int32_t i = 0; paths != nullptr && i < n; ++i) {
            plugins_.emplace_back(paths[i] != nullptr ? paths[i] : "");
        }
        return 0;
    });
}

void ConfigImpl::setProfilingVerbosity(nvinfer1::ProfilingVerbosity verbosity) noexcept {
    verbosity_ = static_cast<int32_t>(verbosity);
}

bool ConfigImpl::setTacticSources(nvinfer1::TacticSources sources) noexcept {
    for (int32_t bit = 0; bit < 32; ++bit) {
        if ((sources >> bit & 1U) != 0 && !listed(bit, nvinfer1::trtfake_stubs::kTacticSourceValues)) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setTacticSources", "API Usage Error",
                        "bit " + std::to_string(bit) + " is not a tactic source of TensorRT " + version_text(ctx_->version()));
            return false;
        }
    }
    tactic_sources_ = sources;
    tactic_sources_set_ = true;
    return true;
}

void ConfigImpl::setDefaultDeviceType(nvinfer1::DeviceType type) noexcept {
    dla_ = type == nvinfer1::DeviceType::kDLA;
}

void ConfigImpl::setDLACore(int32_t core) noexcept {
    if (core >= 0) {
        ctx_->error(ErrorCode::kINVALID_ARGUMENT, "IBuilderConfig::setDLACore", "API Usage Error",
                    "DLA core " + std::to_string(core) + " does not exist: this device has no DLA");
    }
}

}  // namespace TRTB_FAKE
}  // namespace trtb
