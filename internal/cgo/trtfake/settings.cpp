// settings.cpp: reading a stand-in's settings (settings.hpp).

#include "settings.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace trtb {
namespace TRTB_FAKE {

namespace {

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t");
    if (a == std::string::npos) {
        return "";
    }
    const size_t b = s.find_last_not_of(" \t");
    return s.substr(a, b - a + 1);
}

bool to_int(const std::string& v, int64_t lo, int64_t hi, int64_t* out) {
    if (v.empty()) {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (errno != 0 || end == nullptr || *end != '\0' || n < lo || n > hi) {
        return false;
    }
    *out = n;
    return true;
}

// to_duration reads "250us", "5ms", "2s", "100ns" or a bare number of nanoseconds.
bool to_duration(const std::string& v, int64_t* out) {
    static const struct {
        const char* suffix;
        int64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    for (const auto& u : units) {
        const std::string suffix = u.suffix;
        if (v.size() > suffix.size() && v.compare(v.size() - suffix.size(), suffix.size(), suffix) == 0) {
            int64_t n = 0;
            if (!to_int(v.substr(0, v.size() - suffix.size()), 0, INT64_MAX / u.ns, &n)) {
                return false;
            }
            *out = n * u.ns;
            return true;
        }
    }
    return to_int(v, 0, INT64_MAX, out);
}

// to_fraction reads a number from 0 to 1.
bool to_fraction(const std::string& v, double* out) {
    if (v.empty()) {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    const double f = std::strtod(v.c_str(), &end);
    if (errno != 0 || end == nullptr || *end != '\0' || !(f >= 0 && f <= 1)) {
        return false;
    }
    *out = f;
    return true;
}

bool to_bool(const std::string& v, bool* out) {
    if (v == "1" || v == "true") {
        *out = true;
        return true;
    }
    if (v == "0" || v == "false") {
        *out = false;
        return true;
    }
    return false;
}

}  // namespace

bool parse_settings(const std::string& text, Settings* out, std::string* error) {
    Settings s;
    size_t at = 0;
    while (at <= text.size()) {
        size_t end = text.find(';', at);
        if (end == std::string::npos) {
            end = text.size();
        }
        const std::string item = trim(text.substr(at, end - at));
        at = end + 1;
        if (item.empty()) {
            continue;
        }
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
            *error = "trtfake setting \"" + item + "\" is not key=value";
            return false;
        }
        const std::string key = trim(item.substr(0, eq));
        const std::string v = trim(item.substr(eq + 1));
        int64_t n = 0;
        bool ok = true;
        if (key == "step") {
            ok = to_duration(v, &s.step_ns);
        } else if (key == "seed") {
            errno = 0;
            char* end = nullptr;
            const unsigned long long seed = std::strtoull(v.c_str(), &end, 10);
            ok = !v.empty() && v[0] != '-' && errno == 0 && end != nullptr && *end == '\0';
            s.seed = static_cast<uint64_t>(seed);
        } else if (key == "threads") {
            ok = to_int(v, 1, 256, &n);
            s.threads = static_cast<int32_t>(n);
        } else if (key == "tactics") {
            ok = to_int(v, 1, 1000, &n);
            s.tactics = static_cast<int32_t>(n);
        } else if (key == "iterations") {
            ok = to_int(v, 1, 1000, &n);
            s.iterations = static_cast<int32_t>(n);
        } else if (key == "fail-phase") {
            s.fail_phase = v;
        } else if (key == "early-phase") {
            s.early_phase = v;
        } else if (key == "abort-phase") {
            s.abort_phase = v;
        } else if (key == "fail-at") {
            ok = to_fraction(v, &s.fail_at);
        } else if (key == "abort-at") {
            ok = to_fraction(v, &s.abort_at);
        } else if (key == "long-step") {
            ok = to_duration(v, &s.long_step_ns);
        } else if (key == "ignore-cancel") {
            ok = to_bool(v, &s.ignore_cancel);
        } else if (key == "silent") {
            ok = to_duration(v, &s.silent_ns);
        } else if (key == "pre-silent") {
            ok = to_duration(v, &s.pre_silent_ns);
        } else if (key == "post-silent") {
            ok = to_duration(v, &s.post_silent_ns);
        } else if (key == "flood") {
            ok = to_bool(v, &s.flood);
        } else if (key == "time-callbacks") {
            ok = to_bool(v, &s.time_callbacks);
        } else if (key == "hold-after") {
            ok = to_int(v, 0, INT32_MAX, &n);
            s.hold_after = static_cast<int32_t>(n);
        } else if (key == "skip-finish") {
            ok = to_bool(v, &s.skip_finish);
        } else if (key == "fp16-fail-node") {
            s.fp16_fail_node = v;
        } else if (key == "refuse") {
            s.refuse = v;
        } else if (key == "keep-fp32") {
            s.keep_fp32.clear();
            size_t k = 0;
            while (k <= v.size()) {
                size_t c = v.find(',', k);
                if (c == std::string::npos) {
                    c = v.size();
                }
                const std::string name = trim(v.substr(k, c - k));
                if (!name.empty()) {
                    s.keep_fp32.push_back(name);
                }
                k = c + 1;
            }
        } else if (key == "regime") {
            if (v == "auto") {
                s.regime = Regime::kAuto;
            } else if (v == "cnn") {
                s.regime = Regime::kCNN;
            } else if (v == "myelin") {
                s.regime = Regime::kMyelin;
            } else {
                ok = false;
            }
        } else if (key == "myelin") {
            ok = to_duration(v, &s.myelin_ns);
        } else if (key == "device") {
            ok = !v.empty();
            s.device = v;
        } else if (key == "version") {
            ok = to_int(v, 100000, 999999, &n);
            s.version = static_cast<int32_t>(n);
        } else if (key == "build") {
            ok = to_int(v, 0, INT32_MAX, &n);
            s.build = static_cast<int32_t>(n);
        } else {
            *error = "unknown trtfake setting \"" + key + "\"";
            return false;
        }
        if (!ok) {
            *error = "trtfake setting " + key + ": bad value \"" + v + "\"";
            return false;
        }
    }
    *out = std::move(s);
    return true;
}

bool glob(const std::string& pattern, const std::string& name) {
    if (pattern.empty()) {
        return false;
    }
    // Greedy matching with one backtrack point.
    size_t p = 0, n = 0, star = std::string::npos, resume = 0;
    while (n < name.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = n;
        } else if (p < pattern.size() && pattern[p] == name[n]) {
            ++p;
            ++n;
        } else if (star != std::string::npos) {
            p = star + 1;
            n = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

}  // namespace TRTB_FAKE
}  // namespace trtb
