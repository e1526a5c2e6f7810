// sim.cpp: the simulated builder. It needs no GPU and no TensorRT, yet it reports progress the
// way TensorRT's builder does, so that everything above the C boundary (queue, drain, progress
// tree, cancel, timing cache files) can be exercised for real. docs/tensorrt.md lists what each
// choice below is modelled on.
//
// Shape of one build (phase names are those of a real TensorRT trace; keep them exactly):
//
//                                                          pre_silent_ns of nothing first
//   Building engine (4 steps)                              the thread that called run
//     Building engine from subgraph (1)
//       Computing profile costs (1)
//         Timing graph nodes (one step per layer)           silent_ns of nothing at its start
//           Finding fastest tactic for <layer> (tactics)    by default on the thread that
//             Measuring tactic time (iterations)            called run; one per tactic not in
//                                                          the cache
//                                                          post_silent_ns after timing
//
// Layers are TensorRT's optimized graph when the op types are known (optimize_graph: removed
// no-op nodes, fused "conv + bn + relu" layers named after all their nodes, reformat layers),
// else the given names one by one.
//
// Threads: one builder thread by default, as IBuilder::setMaxThreads defaults to 1, so every
// callback comes from the thread that called run, strictly nested. With `threads` > 1 several
// threads time layers at once, so equally named phases ("Measuring tactic time") are active on
// different threads at the same time; steps of the shared "Timing graph nodes" are then reported
// under a lock, in increasing order, as layers finish.
//
// Cancel: every reported step goes through Build::step_complete; when it returns false the
// thread finishes its open phases early (or, with skip_finish_on_stop, reports no finish) and
// stops, and the other threads stop at their next step boundary. Nothing interrupts a step in
// progress (TensorRT cannot either), so the latency of a cancel is the length of the longest
// step in flight.
//
// Timing cache format (what write_timing_cache writes and what options.timing_cache may hold):
//
//   TRTBUILD-SIM-TIMING-CACHE 1\n
//   <signature>\t<tactic index>\t<nanoseconds>\n    one line per entry, sorted by signature, tactic
//
// where <signature> is the layer's signature (its fused op types, its place in the optimized
// graph, the network's input shapes and the precision; the layer's name when no op types were
// given) and escapes backslash, tab, newline and carriage return as \\, \t, \n and \r. A
// cache that does not follow this format is ignored as a whole, with a warning, as TensorRT
// ignores a cache of another version.

#include "timing_cache_rules.hpp"
#include "trtb_internal.hpp"
#include "trtb_platform.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

namespace trtb {

namespace {

constexpr char kCacheMagic[] = "TRTBUILD-SIM-TIMING-CACHE 1";
constexpr char kPlanMagic[] = "TRTBUILD-SIMULATED-PLAN 1\n";

constexpr char kPhaseRoot[] = "Building engine";
constexpr char kPhaseSubgraph[] = "Building engine from subgraph";
constexpr char kPhaseProfile[] = "Computing profile costs";
constexpr char kPhaseNodes[] = "Timing graph nodes";
constexpr char kPhaseFindPrefix[] = "Finding fastest tactic for ";
constexpr char kPhaseMeasure[] = "Measuring tactic time";

// Defaults for zero fields of trtb_sim_options, and the accepted ranges.
constexpr int32_t kDefaultThreads = 1;  // IBuilder::setMaxThreads defaults to 1
constexpr int32_t kDefaultTactics = 6;
constexpr int32_t kDefaultIterations = 4;
constexpr int64_t kDefaultStepNs = 5'000'000;
// kTrtexecAvgTiming is trtexec's --avgTiming default: a measuring step of step_ns is timed with
// this many averaging iterations, and a build asking for another count scales it.
constexpr int64_t kTrtexecAvgTiming = 8;
constexpr int32_t kDefaultLayers = 16;
constexpr int32_t kMaxThreads = 256;
constexpr int32_t kMaxTactics = 1000;
constexpr int32_t kMaxIterations = 10000;
constexpr int32_t kMaxLayers = 1 << 24;
// kFloodFullPauseNs is how long a flooding builder thread pauses after a step the full queue
// dropped (see RunState::step).
constexpr int64_t kFloodFullPauseNs = 50'000;

// kHoldPollNs is how often a thread held by hold_after looks for a cancel.
constexpr int64_t kHoldPollNs = 1'000'000;

using CacheKey = std::pair<std::string, int32_t>;

// MinGW's printf attribute means Microsoft's printf, which lacks %zu; its C++ library uses the
// C99 one (__USE_MINGW_ANSI_STDIO), which __MINGW_PRINTF_FORMAT names.
#ifdef __MINGW_PRINTF_FORMAT
std::string format(const char* fmt, ...) __attribute__((format(__MINGW_PRINTF_FORMAT, 1, 2)));
#else
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#endif

std::string format(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return std::string();
    }
    if (static_cast<size_t>(n) < sizeof(buf)) {
        return std::string(buf, static_cast<size_t>(n));
    }
    std::string out(static_cast<size_t>(n) + 1, '\0');
    va_start(ap, fmt);
    std::vsnprintf(&out[0], out.size(), fmt, ap);
    va_end(ap);
    out.resize(static_cast<size_t>(n));
    return out;
}

// splitmix64 finaliser: the simulation's only source of "randomness", so that a seed fixes
// every timing and every choice.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t hash_string(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
    for (unsigned char c : s) {
        h = (h ^ c) * 0x100000001b3ULL;
    }
    return h;
}

// unit maps a hash to [0, 1).
double unit(uint64_t h) {
    return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

// jitter spreads ns by +-20%, fixed by h.
int64_t jitter(int64_t ns, uint64_t h) {
    return static_cast<int64_t>(static_cast<double>(ns) * (0.8 + 0.4 * unit(h)));
}

void sleep_ns(int64_t ns) {
    if (ns > 0) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
    }
}

// tactic_time is what "measuring" tactic t of a layer finds: 20..220 us per layer, times a
// factor of 0.5..2 per tactic.
uint64_t tactic_time(uint64_t seed, const std::string& layer, int32_t tactic) {
    const uint64_t lh = hash_string(layer);
    const double base = 20000.0 + 200000.0 * unit(mix(lh ^ mix(seed)));
    const double factor = 0.5 + 1.5 * unit(mix(lh ^ mix(seed ^ (0x7ac71cULL + static_cast<uint64_t>(tactic)))));
    return static_cast<uint64_t>(base * factor) + 1;
}

// tactic_order is the order in which a layer's tactics are tried (a seeded shuffle).
std::vector<int32_t> tactic_order(uint64_t seed, const std::string& layer, int32_t tactics) {
    std::vector<int32_t> order(static_cast<size_t>(tactics));
    for (int32_t i = 0; i < tactics; ++i) {
        order[static_cast<size_t>(i)] = i;
    }
    uint64_t h = mix(hash_string(layer) ^ mix(seed ^ 0x0dde7ULL));
    for (int32_t i = tactics - 1; i > 0; --i) {
        h = mix(h);
        const auto j = static_cast<int32_t>(h % static_cast<uint64_t>(i + 1));
        std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
    }
    return order;
}

// glob reports whether name[n..] matches pattern[p..], where '*' stands for any run of bytes.
bool glob(const std::string& pattern, size_t p, const std::string& name, size_t n) {
    // Classic greedy matching with one backtrack point: linear in practice, never recursive.
    size_t star = std::string::npos;
    size_t resume = 0;
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

// matches reports whether a phase name matches a fail/early/abort pattern, in which '*' stands
// for any run of characters ("Finding fastest tactic*", "Finding fastest tactic for *conv1*":
// a fused layer is named after all the nodes in it). An empty pattern matches nothing.
bool matches(const std::string& pattern, const std::string& name) {
    return !pattern.empty() && glob(pattern, 0, name, 0);
}

std::string escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\t': out += "\\t"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            default: out += c; break;
        }
    }
    return out;
}

bool unescape(const char* p, size_t n, std::string* out) {
    out->clear();
    for (size_t i = 0; i < n; ++i) {
        const char c = p[i];
        if (c == '\0') {
            return false;
        }
        if (c != '\\') {
            out->push_back(c);
            continue;
        }
        if (++i == n) {
            return false;
        }
        switch (p[i]) {
            case '\\': out->push_back('\\'); break;
            case 't': out->push_back('\t'); break;
            case 'n': out->push_back('\n'); break;
            case 'r': out->push_back('\r'); break;
            default: return false;
        }
    }
    return true;
}

bool parse_decimal(const char* p, size_t n, uint64_t max, uint64_t* out) {
    if (n == 0 || n > 20) {
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        if (p[i] < '0' || p[i] > '9') {
            return false;
        }
        const uint64_t d = static_cast<uint64_t>(p[i] - '0');
        if (v > (max - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

// CacheEntry is one entry of a timing cache: a layer signature (unescaped), a tactic and the
// tactic's time.
struct CacheEntry {
    std::string_view sig;
    int32_t tactic = 0;
    uint64_t ns = 0;
};

bool entry_less(const CacheEntry& a, const CacheEntry& b) {
    const int c = a.sig.compare(b.sig);
    return c < 0 || (c == 0 && a.tactic < b.tactic);
}

bool same_key(const CacheEntry& a, const CacheEntry& b) {
    return a.tactic == b.tactic && a.sig == b.sig;
}

// CacheIndex is a timing cache in the format above, parsed in place: its entries sorted by
// signature and tactic, each signature a view into the blob it was parsed from (which must
// outlive the index) or, for the rare signature with escapes, into the index's own copy. 32
// bytes per entry besides the blob: a cache of hundreds of MB is indexed, never copied into a
// map of strings (which took several times the file's size).
class CacheIndex {
public:
    // parse reads blob whole or not at all: on any error the index is left empty and it
    // returns false. When a key appears twice, the later line wins.
    bool parse(std::string_view blob);
    // find returns the time of (sig, tactic), or nullptr.
    const uint64_t* find(std::string_view sig, int32_t tactic) const {
        const CacheEntry key{sig, tactic, 0};
        auto it = std::lower_bound(entries_.begin(), entries_.end(), key, entry_less);
        return it != entries_.end() && same_key(*it, key) ? &it->ns : nullptr;
    }
    const std::vector<CacheEntry>& entries() const { return entries_; }
    size_t size() const { return entries_.size(); }
    void clear() {
        std::vector<CacheEntry>().swap(entries_);
        unescaped_.clear();
    }

private:
    std::vector<CacheEntry> entries_;
    std::deque<std::string> unescaped_;  // signatures that had escapes; a deque never moves them
};

bool CacheIndex::parse(std::string_view blob) {
    clear();
    const size_t magic_len = sizeof(kCacheMagic) - 1;
    if (blob.compare(0, magic_len, kCacheMagic) != 0) {
        return false;
    }
    size_t pos = magic_len;
    if (pos < blob.size() && blob[pos] == '\r') {
        ++pos;
    }
    if (pos < blob.size() && blob[pos] != '\n') {
        return false;
    }
    entries_.reserve(static_cast<size_t>(
        std::count(blob.begin() + static_cast<std::ptrdiff_t>(pos), blob.end(), '\n')));
    auto fail = [this] {
        clear();
        return false;
    };
    std::string layer;
    bool sorted = true;
    while (pos < blob.size()) {
        ++pos;  // past '\n'
        size_t end = blob.find('\n', pos);
        if (end == std::string_view::npos) {
            end = blob.size();
        }
        size_t line_end = end;
        if (line_end > pos && blob[line_end - 1] == '\r') {
            --line_end;
        }
        if (line_end > pos) {
            const char* line = blob.data() + pos;
            const size_t n = line_end - pos;
            const char* tab1 = static_cast<const char*>(std::memchr(line, '\t', n));
            if (tab1 == nullptr) {
                return fail();
            }
            const char* rest = tab1 + 1;
            const size_t rest_n = n - static_cast<size_t>(rest - line);
            const char* tab2 = static_cast<const char*>(std::memchr(rest, '\t', rest_n));
            if (tab2 == nullptr) {
                return fail();
            }
            const size_t sig_n = static_cast<size_t>(tab1 - line);
            std::string_view sig(line, sig_n);
            if (std::memchr(line, '\\', sig_n) != nullptr || std::memchr(line, '\0', sig_n) != nullptr) {
                if (!unescape(line, sig_n, &layer)) {
                    return fail();
                }
                unescaped_.push_back(layer);
                sig = unescaped_.back();
            }
            uint64_t tactic = 0;
            uint64_t ns = 0;
            const size_t ns_n = rest_n - static_cast<size_t>(tab2 + 1 - rest);
            if (sig.empty() || !parse_decimal(rest, static_cast<size_t>(tab2 - rest), INT32_MAX, &tactic) ||
                !parse_decimal(tab2 + 1, ns_n, UINT64_MAX, &ns) || ns == 0) {
                return fail();
            }
            const CacheEntry e{sig, static_cast<int32_t>(tactic), ns};
            if (!entries_.empty() && !entry_less(entries_.back(), e)) {
                sorted = false;
            }
            entries_.push_back(e);
        }
        pos = end;
    }
    if (!sorted) {
        std::stable_sort(entries_.begin(), entries_.end(), entry_less);
        size_t kept = 0;
        for (size_t i = 0; i < entries_.size(); ++i) {
            if (i + 1 < entries_.size() && same_key(entries_[i], entries_[i + 1])) {
                continue;  // a later line has the same key
            }
            entries_[kept++] = entries_[i];
        }
        entries_.resize(kept);
    }
    return true;
}

// merge_entries calls emit with the union of sorted lists without duplicate keys, in key
// order: for a key in several lists, with the entry of the first list that has it, and with
// whether the first list has it (so a caller can tell what the first list lacks). emit returns
// false to stop; merge_entries then returns false.
template <typename Emit>
bool merge_entries(const std::vector<const std::vector<CacheEntry>*>& lists, Emit emit) {
    std::vector<size_t> at(lists.size(), 0);
    for (;;) {
        // The least head; among equal heads the earliest list's (entry_less is strict).
        const CacheEntry* least = nullptr;
        for (size_t l = 0; l < lists.size(); ++l) {
            if (at[l] < lists[l]->size()) {
                const CacheEntry& head = (*lists[l])[at[l]];
                if (least == nullptr || entry_less(head, *least)) {
                    least = &head;
                }
            }
        }
        if (least == nullptr) {
            return true;
        }
        const CacheEntry pick = *least;
        bool in_first = false;
        for (size_t l = 0; l < lists.size(); ++l) {
            if (at[l] < lists[l]->size() && same_key((*lists[l])[at[l]], pick)) {
                in_first = in_first || l == 0;
                ++at[l];
            }
        }
        if (!emit(pick, in_first)) {
            return false;
        }
    }
}

// CacheWriter serializes entries in the format above to a file descriptor, through a buffer
// of 1 MiB.
class CacheWriter {
public:
    explicit CacheWriter(int fd) : fd_(fd) {
        buf_.reserve(kFlushAt + 4096);
        buf_ = kCacheMagic;
        buf_ += '\n';
    }

    bool add(const CacheEntry& e) {
        for (char c : e.sig) {
            switch (c) {
                case '\\': buf_ += "\\\\"; break;
                case '\t': buf_ += "\\t"; break;
                case '\n': buf_ += "\\n"; break;
                case '\r': buf_ += "\\r"; break;
                default: buf_ += c; break;
            }
        }
        char num[48];
        const int n = std::snprintf(num, sizeof(num), "\t%d\t%llu\n", e.tactic,
                                    static_cast<unsigned long long>(e.ns));
        buf_.append(num, static_cast<size_t>(n));
        return buf_.size() < kFlushAt || flush();
    }

    bool flush() {
        if (!write_all(fd_, buf_.data(), buf_.size(), &error_)) {
            return false;
        }
        buf_.clear();
        return true;
    }

    const std::string& error() const { return error_; }

private:
    static constexpr size_t kFlushAt = 1 << 20;
    int fd_;
    std::string buf_;
    std::string error_;
};

// Config is everything a simulated build keeps from trtb_options, with defaults applied.
struct Config {
    // settings are the checked options both backends share (check_options), kept whole.
    BuildSettings settings;

    int32_t threads = kDefaultThreads;
    int32_t tactics = kDefaultTactics;
    int32_t iterations = kDefaultIterations;
    int64_t step_ns = kDefaultStepNs;
    std::vector<std::string> layers;
    std::string fail_phase;
    std::string early_phase;
    std::string abort_phase;
    int64_t silent_ns = 0;
    int64_t long_step_ns = 0;
    bool ignore_cancel = false;
    int32_t hold_after = 0;
    uint64_t seed = 0;
    bool flood = false;
    bool skip_finish_on_stop = false;
    int64_t pre_silent_ns = 0;
    int64_t post_silent_ns = 0;
    std::string fp16_fail_node;
    std::vector<std::string> keep_fp32;
    std::string shape_key;
    int32_t original_layers = 0;  // the model's nodes, before optimize_graph

    // The optimized graph: layers[i] is the name TensorRT would report for layer i, sigs[i]
    // its signature (the timing cache key), members[i] the ONNX nodes fused into it as
    // (name, op) pairs (empty for a reformat layer).
    std::vector<std::string> sigs;
    std::vector<std::vector<std::pair<std::string, std::string>>> members;
};

// Op types TensorRT removes from the graph it times (constant folding, no-ops).
bool removed_op(const std::string& op) {
    static const char* const ops[] = {"Identity", "Constant", "Shape", "Dropout", "ConstantOfShape"};
    for (const char* o : ops) {
        if (op == o) {
            return true;
        }
    }
    return false;
}

// Op types that start a fusion (convolution and matrix multiply layers).
bool fusion_head(const std::string& op) {
    return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

// Op types TensorRT folds into the layer before them: a BatchNormalization (scale fusion),
// an Add (bias or residual, "conv + eltwise" fusion) and one activation.
int fusion_follower(const std::string& op) {
    if (op == "BatchNormalization") {
        return 1;
    }
    if (op == "Add") {
        return 2;
    }
    static const char* const acts[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "Elu",
                                       "Selu", "Softplus", "HardSigmoid", "HardSwish", "Gelu",
                                       "Mish", "PRelu"};
    for (const char* a : acts) {
        if (op == a) {
            return 4;
        }
    }
    return 0;
}

// optimize_graph turns the model's nodes into the layers TensorRT would time (see
// trtb_sim_options.layer_ops), filling c->layers, c->sigs and c->members. Without op types,
// every node is one layer whose signature is its name.
void optimize_graph(const std::vector<std::string>& names, const std::vector<std::string>& ops,
                    Config* c) {
    c->layers.clear();
    c->sigs.clear();
    c->members.clear();
    const std::string tail = "|" + c->shape_key + "|precision=" + std::to_string(c->settings.precision);
    if (ops.empty()) {
        for (const std::string& n : names) {
            c->layers.push_back(n);
            c->sigs.push_back(n);
            c->members.push_back({{n, std::string()}});
        }
        return;
    }
    auto add = [&](std::string name, std::string sig,
                   std::vector<std::pair<std::string, std::string>> members) {
        c->layers.push_back(std::move(name));
        c->sigs.push_back(std::move(sig) + "|" + std::to_string(c->sigs.size()) + tail);
        c->members.push_back(std::move(members));
    };
    for (size_t i = 0; i < names.size(); ++i) {
        if (removed_op(ops[i])) {
            continue;
        }
        std::string name = names[i];
        std::string sig = ops[i];
        std::vector<std::pair<std::string, std::string>> members{{names[i], ops[i]}};
        if (fusion_head(ops[i])) {
            int taken = 0;
            while (i + 1 < names.size()) {
                const int kind = fusion_follower(ops[i + 1]);
                if (kind == 0 || (taken & kind) != 0 || (kind == 1 && taken != 0)) {
                    break;
                }
                taken |= kind;
                ++i;
                name += " + " + names[i];
                sig += "+" + ops[i];
                members.emplace_back(names[i], ops[i]);
            }
        }
        if (c->layers.empty()) {
            // The network input arrives in linear FP32; the first layer wants its own format.
            add("Reformatting CopyNode for Input Tensor 0 to " + name, "Reformat", {});
        }
        add(std::move(name), std::move(sig), std::move(members));
    }
    if (!c->layers.empty() && (c->settings.precision & (TRTB_PRECISION_FP16 | TRTB_PRECISION_BF16)) != 0) {
        add("Reformatting CopyNode for Output Tensor 0 to " + c->layers.back(), "Reformat", {});
    }
    if (c->layers.empty()) {  // nothing left to time: TensorRT still builds one layer
        add("(Unnamed Layer* 0) [Identity]", "Identity", {});
    }
}

// LayerResult is the tactic chosen for one layer.
struct LayerResult {
    int32_t tactic = 0;
    uint64_t time_ns = 0;
    const char* how = "not timed";
};

class SimBuild;
class Phase;

// RunState is what the threads of one run share.
struct RunState {
    RunState(Build& b, const Config& c) : build(b), cfg(c) {}

    Build& build;
    const Config& cfg;

    std::atomic<bool> stop{false};       // some thread failed or honoured a cancel
    std::atomic<bool> cancelled{false};  // a thread honoured a cancel
    std::atomic<bool> long_step_taken{false};
    std::atomic<int32_t> measured{0};  // tactics whose every measuring step ran
    std::atomic<int32_t> next_layer{0};
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};

    // cache_in is the given cache, read-only while threads run; null when the timing cache is
    // off (TRTB_FLAG_DISABLE_TIMING_CACHE).
    const CacheIndex* cache_in = nullptr;

    std::mutex mu;
    int32_t fail_code = TRTB_OK;                                // guarded by mu
    std::string fail_message;                                   // guarded by mu
    std::vector<std::pair<CacheKey, uint64_t>> learned;         // guarded by mu

    std::vector<LayerResult> results;  // slot i written only by the thread timing layer i

    std::mutex nodes_mu;
    Phase* nodes = nullptr;     // "Timing graph nodes", open while builder threads run
    int32_t nodes_done = 0;     // guarded by nodes_mu
    int32_t slow_layer = -1;    // the layer that warns about a slow fallback

    void log(int32_t severity, const std::string& message) {
        if (severity <= cfg.settings.log_severity) {
            build.queue.push_log(severity, message.c_str());
        }
    }

    // fail records the first failure, logs it as an ERROR (unless logged is set: the caller
    // logged what it quotes) and stops every thread.
    void fail(int32_t code, const std::string& message, bool logged = false) {
        {
            std::lock_guard<std::mutex> lock(mu);
            if (fail_code == TRTB_OK) {
                fail_code = code;
                fail_message = message;
            }
        }
        if (!logged) {
            log(TRTB_SEVERITY_ERROR, message);
        }
        stop.store(true, std::memory_order_relaxed);
    }

    // step reports a completed step, as stepComplete; false: this thread must stop.
    bool step(const std::string& phase, int32_t step) {
        bool queued = true;
        if (!build.step_complete(phase.c_str(), step, &queued) && !cfg.ignore_cancel) {
            cancelled.store(true, std::memory_order_relaxed);
            stop.store(true, std::memory_order_relaxed);
            return false;
        }
        if (cfg.flood && !queued) {
            // The queue is full: the drainer has 16 MiB of events to take, far more than it
            // takes in this pause, so the pause cannot slow what the pipeline delivers. It only
            // keeps a flooding thread from taking CPU time from the pipeline it measures, as a
            // TensorRT thread spends its time on the GPU, not on reporting.
            sleep_ns(kFloodFullPauseNs);
        }
        return !stop.load(std::memory_order_relaxed);
    }

    // work stands for n steps of work on the main thread between steps of the outer phases.
    void work(int n, uint64_t salt) {
        if (!cfg.flood) {
            sleep_ns(jitter(cfg.step_ns * n, mix(cfg.seed ^ salt)));
        }
    }

    // pause sleeps ns, unless the build floods.
    void pause(int64_t ns) const {
        if (!cfg.flood) {
            sleep_ns(ns);
        }
    }

    bool node_done();
};

// Phase is one open phase on one thread: its start is queued when it is made, its finish when
// finish() is called or it goes out of scope, so every way out of a scope closes it.
class Phase {
public:
    // layer, if not null, names the layer this phase works on (for the failure message).
    Phase(RunState& rs, std::string name, const Phase* parent, int32_t nb_steps,
          const std::string* layer = nullptr)
        : rs_(rs), name_(std::move(name)), limit_(nb_steps) {
        if (matches(rs.cfg.early_phase, name_)) {
            limit_ = nb_steps / 2;
        }
        rs.build.queue.push_phase_start(name_.c_str(),
                                        parent != nullptr ? parent->name_.c_str() : nullptr,
                                        nb_steps);
        open_ = true;
        if (matches(rs.cfg.abort_phase, name_)) {
            std::abort();  // a crash, as the option asks: only the worker process dies
        }
        if (matches(rs.cfg.fail_phase, name_)) {
            failed_ = true;
            if (layer != nullptr) {
                rs.fail(TRTB_ERR_BUILD_FAILED,
                        "Error Code 10: Internal Error (Could not find any implementation for node " +
                            *layer + ".)");
            } else {
                rs.fail(TRTB_ERR_BUILD_FAILED,
                        "Error Code 2: Internal Error (Assertion failed: " + name_ +
                            " could not complete.)");
            }
        }
    }

    ~Phase() {
        try {
            finish();
        } catch (...) {
        }
    }

    Phase(const Phase&) = delete;
    Phase& operator=(const Phase&) = delete;

    // failed is true when starting this phase failed the build; the caller must return.
    bool failed() const { return failed_; }

    // limit is the number of steps this phase reports: all of them, or about half for the
    // early phase.
    int32_t limit() const { return limit_; }

    const std::string& name() const { return name_; }

    // step reports step i as completed; false: this thread must stop. An early phase
    // finishes at the first step it does not report; the work after that goes unreported.
    bool step(int32_t i) {
        if (open_ && i < limit_) {
            return rs_.step(name_, i);
        }
        finish();
        return !rs_.stop.load(std::memory_order_relaxed);
    }

    void finish() {
        if (open_) {
            open_ = false;
            if (rs_.cfg.skip_finish_on_stop && rs_.stop.load(std::memory_order_relaxed)) {
                return;  // TensorRT does not promise a finish after a cancel or a failure
            }
            rs_.build.queue.push_phase_finish(name_.c_str());
        }
    }

private:
    RunState& rs_;
    std::string name_;
    int32_t limit_;
    bool open_ = false;
    bool failed_ = false;
};

// node_done reports one more timed layer on "Timing graph nodes". The lock keeps the steps of
// that shared phase in increasing order although layers finish in any order.
bool RunState::node_done() {
    std::lock_guard<std::mutex> lock(nodes_mu);
    return nodes->step(nodes_done++);
}

const char* precision_names(uint32_t p, std::string* out) {
    static const struct {
        uint32_t bit;
        const char* name;
    } names[] = {{TRTB_PRECISION_FP16, "fp16"},
                 {TRTB_PRECISION_BF16, "bf16"},
                 {TRTB_PRECISION_INT8, "int8"},
                 {TRTB_PRECISION_FP8, "fp8"}};
    out->clear();
    for (const auto& n : names) {
        if ((p & n.bit) != 0) {
            if (!out->empty()) {
                *out += ',';
            }
            *out += n.name;
        }
    }
    if (out->empty()) {
        *out = "default";
    }
    return out->c_str();
}

const char* flag_names(uint32_t f, std::string* out) {
    static const struct {
        uint32_t bit;
        const char* name;
    } names[] = {{TRTB_FLAG_NO_TF32, "no-tf32"},
                 {TRTB_FLAG_REFIT, "refit"},
                 {TRTB_FLAG_STRIP_WEIGHTS, "strip-weights"},
                 {TRTB_FLAG_VERSION_COMPATIBLE, "version-compatible"},
                 {TRTB_FLAG_EXCLUDE_LEAN_RUNTIME, "exclude-lean-runtime"},
                 {TRTB_FLAG_SPARSE_WEIGHTS, "sparse-weights"},
                 {TRTB_FLAG_DISABLE_TIMING_CACHE, "disable-timing-cache"},
                 {TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS, "error-on-timing-cache-miss"}};
    out->clear();
    for (const auto& n : names) {
        if ((f & n.bit) != 0) {
            if (!out->empty()) {
                *out += ',';
            }
            *out += n.name;
        }
    }
    if (out->empty()) {
        *out = "none";
    }
    return out->c_str();
}

std::string int_or_default(int64_t v) {
    return v < 0 ? std::string("default") : std::to_string(v);
}

class SimBuild final : public Build {
public:
    explicit SimBuild(Config cfg) : cfg_(std::move(cfg)) {}

    int32_t run(trtb_result* result, trtb_status* status) override;
    int32_t write_timing_cache(bool disk_is_given, std::string_view disk, int fd, bool* changed,
                               trtb_status* status) override;

private:
    void build_engine(RunState& rs, uint64_t model_bytes, uint64_t* plan_bytes);
    void worker(RunState& rs, int32_t nb_layers) noexcept;
    bool time_layer(RunState& rs, int32_t index);
    bool measure(RunState& rs, const Phase& find, const std::string& layer, const std::string& sig,
                 int32_t tactic);
    std::string plan_text(const RunState& rs, uint64_t model_bytes) const;

    Config cfg_;
    // The timing cache after run: the given one (given_ok_: it parsed, or none was given) and
    // what this run learned, sorted by key without duplicates (learned_entries_ views
    // learned_).
    bool cache_enabled_ = false;
    CacheIndex given_;
    bool given_ok_ = true;
    std::vector<std::pair<CacheKey, uint64_t>> learned_;
    std::vector<CacheEntry> learned_entries_;
};

int32_t SimBuild::run(trtb_result* result, trtb_status* status) {
    QueueCloser close_queue{queue};

    RunState rs(*this, cfg_);
    const int32_t nb_layers = static_cast<int32_t>(cfg_.layers.size());
    rs.results.resize(cfg_.layers.size());
    rs.slow_layer = static_cast<int32_t>(mix(cfg_.seed ^ 0x5103ULL) % static_cast<uint64_t>(nb_layers));

    rs.log(TRTB_SEVERITY_INFO,
           "Simulated builder: phases and timings are synthetic; no GPU is used and the plan is "
           "not a TensorRT engine.");

    // "Parse" the model: the simulation only checks that it can be read.
    uint64_t model_bytes = 0;
    {
        platform::InputFacts st;
        int err = 0;
        if (!platform::stat_input(cfg_.settings.model_path, &st, &err)) {
            const std::string why = platform::error_text(err);
            rs.log(TRTB_SEVERITY_ERROR, "Failed to open file: " + cfg_.settings.model_path);
            return set_status(status, TRTB_ERR_IO,
                              "cannot read model " + cfg_.settings.model_path + ": " + why);
        }
        if (st.is_dir) {
            return set_status(status, TRTB_ERR_IO,
                              "cannot read model " + cfg_.settings.model_path +
                                  ": it is a directory; give the .onnx file");
        }
        model_bytes = st.size;
    }
    rs.log(TRTB_SEVERITY_INFO, "----------------------------------------------------------------");
    rs.log(TRTB_SEVERITY_INFO, "Input filename:   " + cfg_.settings.model_path);
    rs.log(TRTB_SEVERITY_INFO, format("Input size:       %llu bytes",
                                      static_cast<unsigned long long>(model_bytes)));
    rs.log(TRTB_SEVERITY_INFO, "----------------------------------------------------------------");
    for (const std::string& path : cfg_.settings.plugin_paths) {
        rs.log(TRTB_SEVERITY_WARNING,
               "Plugin library " + path + " was not loaded: the simulated builder runs no plugin code.");
    }

    if ((cfg_.settings.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0) {
        rs.log(TRTB_SEVERITY_INFO,
               "Local timing cache in use. Profiling results in this builder pass will not be stored.");
    } else {
        cache_enabled_ = true;
        rs.cache_in = &given_;
        if (cfg_.settings.has_timing_cache) {
            given_ok_ = given_.parse(cfg_.settings.timing_cache);
            if (given_ok_) {
                result->timing_cache_used = 1;
                rs.log(TRTB_SEVERITY_INFO, format("Loaded %zu timing cache entries.", given_.size()));
            } else if (tcache::load_action(tcache::LoadKind::kForeign,
                                           (cfg_.settings.flags & TRTB_FLAG_STRICT_TIMING_CACHE) != 0) ==
                       tcache::LoadAction::kFail) {
                return set_status(status, TRTB_ERR_CACHE_REJECTED,
                                  "is not a simulated-builder cache (corrupt, or made by TensorRT); "
                                  "--strict-cache refuses it: delete it, or pass another --timing-cache");
            } else {
                rs.log(TRTB_SEVERITY_WARNING,
                       "timing cache is not a simulated-builder cache; starting from an empty cache");
            }
        }
        rs.log(TRTB_SEVERITY_INFO,
               "Global timing cache in use. Profiling results in this builder pass will be stored.");
    }
    const int32_t nb_threads = std::min(cfg_.threads, nb_layers);
    rs.log(TRTB_SEVERITY_INFO, format("Timing %d layers, %d tactics each, on %d builder thread%s.",
                                      nb_layers, cfg_.tactics, nb_threads,
                                      nb_threads == 1 ? "" : "s"));

    uint64_t plan_bytes = 0;
    build_engine(rs, model_bytes, &plan_bytes);

    // Whatever happened, keep what the cache knew and what this run measured.
    if (rs.cache_in != nullptr) {
        // Sorted by key; of two entries with one key the first learned stays.
        learned_ = std::move(rs.learned);
        std::stable_sort(learned_.begin(), learned_.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        learned_.erase(std::unique(learned_.begin(), learned_.end(),
                                   [](const auto& a, const auto& b) { return a.first == b.first; }),
                       learned_.end());
        learned_entries_.reserve(learned_.size());
        for (const auto& entry : learned_) {
            learned_entries_.push_back(CacheEntry{entry.first.first, entry.first.second, entry.second});
        }
    }
    result->timing_cache_hits = rs.hits.load();
    result->timing_cache_misses = rs.misses.load();
    result->cancel_seen_ns = cancel_seen_ns();

    if (rs.fail_code != TRTB_OK) {
        return set_status(status, rs.fail_code, rs.fail_message);
    }
    if (rs.cancelled.load()) {
        return set_status(status, TRTB_ERR_CANCELLED, "build cancelled");
    }
    result->plan_bytes = plan_bytes;
    rs.log(TRTB_SEVERITY_INFO,
           format("Timing cache: %llu hits, %llu misses.",
                  static_cast<unsigned long long>(result->timing_cache_hits),
                  static_cast<unsigned long long>(result->timing_cache_misses)));
    return set_status(status, TRTB_OK, "");
}

// write_timing_cache keeps every entry of the file and adds this build's entries (the given
// cache's, then what the build learned) that the file lacks, as ITimingCache::combine does,
// merging the sorted lists as streams: no copy of either cache is made. A file that is not a
// simulated-builder cache is refused whole.
int32_t SimBuild::write_timing_cache(bool disk_is_given, std::string_view disk, int fd,
                                     bool* changed, trtb_status* status) {
    *changed = false;
    // The rule of both backends (timing_cache_rules.hpp): a build whose cache holds nothing (the
    // cache was off, or nothing was given nor timed, as in a build cancelled before its first
    // tactic) saves nothing, and does not look at the file: it stays as it is, or absent.
    const int64_t build_keys =
        cache_enabled_ ? static_cast<int64_t>(given_.size() + learned_entries_.size()) : 0;
    const uint64_t file_size = disk_is_given ? cfg_.settings.timing_cache.size() : disk.size();
    if (tcache::judge_save(tcache::SaveFacts{file_size, build_keys}) == tcache::SaveAction::kNothing) {
        return set_status(status, TRTB_OK, "");
    }
    CacheIndex on_disk;
    std::vector<const std::vector<CacheEntry>*> lists;
    if (disk_is_given) {
        if (!given_ok_) {
            return set_status(status, TRTB_ERR_CACHE_REJECTED,
                              "not a simulated-builder timing cache (corrupt, or made by TensorRT)");
        }
        lists.push_back(&given_.entries());
        lists.push_back(&learned_entries_);
    } else {
        if (!disk.empty() && !on_disk.parse(disk)) {
            return set_status(status, TRTB_ERR_CACHE_REJECTED,
                              "not a simulated-builder timing cache (corrupt, or made by TensorRT)");
        }
        lists.push_back(&on_disk.entries());
        lists.push_back(&given_.entries());
        lists.push_back(&learned_entries_);
    }
    // First pass: does the build add anything the file lacks? It stops at the first such entry.
    merge_entries(lists, [&](const CacheEntry&, bool in_first) {
        *changed = !in_first;
        return in_first;
    });
    if (!*changed || fd < 0) {
        return set_status(status, TRTB_OK, "");
    }
    CacheWriter out(fd);
    if (!merge_entries(lists, [&](const CacheEntry& e, bool) { return out.add(e); }) || !out.flush()) {
        return set_status(status, TRTB_ERR_IO, "writing the timing cache: " + out.error());
    }
    return set_status(status, TRTB_OK, "");
}

void SimBuild::build_engine(RunState& rs, uint64_t model_bytes, uint64_t* plan_bytes) {
    const int32_t nb_layers = static_cast<int32_t>(cfg_.layers.size());

    rs.pause(cfg_.pre_silent_ns);  // graph optimisation: TensorRT reports no phase yet
    Phase root(rs, kPhaseRoot, nullptr, 4);
    if (root.failed()) {
        return;
    }
    rs.work(2, 1);
    // The lines TensorRT's verbose log gives while it optimizes the graph.
    rs.log(TRTB_SEVERITY_VERBOSE, format("Original: %d layers", cfg_.original_layers));
    rs.log(TRTB_SEVERITY_VERBOSE, format("After vertical fusions: %d layers", nb_layers));
    if (!root.step(0)) {
        return;
    }
    {
        Phase subgraph(rs, kPhaseSubgraph, &root, 1);
        if (subgraph.failed()) {
            return;
        }
        Phase profile(rs, kPhaseProfile, &subgraph, 1);
        if (profile.failed()) {
            return;
        }
        {
            Phase nodes(rs, kPhaseNodes, &profile, nb_layers);
            if (nodes.failed()) {
                return;
            }
            rs.pause(cfg_.silent_ns);  // TensorRT's long quiet stretches
            const int32_t timed = nodes.limit();
            rs.nodes = &nodes;
            std::vector<std::thread> threads;
            struct Join {
                std::vector<std::thread>& threads;
                ~Join() {
                    for (std::thread& t : threads) {
                        if (t.joinable()) {
                            t.join();
                        }
                    }
                }
            } join{threads};
            const int32_t n = std::min(cfg_.threads, timed);
            if (n <= 1) {
                // One builder thread, as TensorRT by default: the thread that called run times
                // every layer, so every callback comes from it, strictly nested.
                worker(rs, timed);
            } else {
                try {
                    threads.reserve(static_cast<size_t>(n));
                    for (int32_t i = 0; i < n; ++i) {
                        threads.emplace_back([this, &rs, timed] { worker(rs, timed); });
                    }
                } catch (const std::exception& e) {
                    rs.fail(TRTB_ERR_INTERNAL, std::string("cannot start a builder thread: ") + e.what());
                }
            }
            for (std::thread& t : threads) {
                t.join();
            }
            rs.nodes = nullptr;
            if (rs.stop.load()) {
                return;
            }
            for (int32_t i = timed; i < nb_layers; ++i) {
                LayerResult& r = rs.results[static_cast<size_t>(i)];
                r.tactic = 0;
                r.time_ns = tactic_time(cfg_.seed, cfg_.sigs[static_cast<size_t>(i)], 0);
                r.how = "not timed";
            }
            nodes.finish();
        }
        if (!profile.step(0)) {
            return;
        }
        profile.finish();
        if (!subgraph.step(0)) {
            return;
        }
    }
    rs.work(1, 2);
    if (!root.step(1)) {
        return;
    }

    rs.work(2, 3);
    rs.pause(cfg_.post_silent_ns);  // engine generation: no phase reports for a while
    rs.log(TRTB_SEVERITY_INFO, format("Total Host Persistent Memory: %llu bytes",
                                      static_cast<unsigned long long>(nb_layers) * 4096ULL));
    rs.log(TRTB_SEVERITY_INFO, "Total Device Persistent Memory: 0 bytes");
    rs.log(TRTB_SEVERITY_INFO, "Total Scratch Memory: 0 bytes");
    if (!root.step(2)) {
        return;
    }

    const std::string plan = plan_text(rs, model_bytes);
    rs.work(1, 4);
    if (!root.step(3)) {
        return;
    }
    std::string error;
    if (!write_all(cfg_.settings.plan_fd, plan.data(), plan.size(), &error)) {
        rs.fail(TRTB_ERR_IO, "cannot write the plan: " + error);
        return;
    }
    *plan_bytes = plan.size();
    rs.log(TRTB_SEVERITY_INFO, format("Engine generation completed: %llu bytes of simulated plan.",
                                      static_cast<unsigned long long>(plan.size())));
}

void SimBuild::worker(RunState& rs, int32_t nb_layers) noexcept {
    try {
        while (!rs.stop.load(std::memory_order_relaxed)) {
            const int32_t i = rs.next_layer.fetch_add(1, std::memory_order_relaxed);
            if (i >= nb_layers || !time_layer(rs, i)) {
                return;
            }
        }
    } catch (const std::exception& e) {
        try {
            rs.fail(TRTB_ERR_INTERNAL, std::string("builder thread failed: ") + e.what());
        } catch (...) {
            rs.stop.store(true);
        }
    } catch (...) {
        rs.stop.store(true);
    }
}

bool SimBuild::time_layer(RunState& rs, int32_t index) {
    const std::string& layer = cfg_.layers[static_cast<size_t>(index)];
    // Timings and cache entries belong to the layer's signature, not to its name.
    const std::string& sig = cfg_.sigs[static_cast<size_t>(index)];
    LayerResult& result = rs.results[static_cast<size_t>(index)];

    Phase find(rs, kPhaseFindPrefix + layer, rs.nodes, cfg_.tactics, &layer);
    if (find.failed()) {
        return false;
    }
    if (!cfg_.fp16_fail_node.empty()) {
        for (const auto& member : cfg_.members[static_cast<size_t>(index)]) {
            if (member.first != cfg_.fp16_fail_node) {
                continue;
            }
            const bool kept = std::find_if(cfg_.keep_fp32.begin(), cfg_.keep_fp32.end(),
                                           [&](const std::string& k) {
                                               return k == member.first ||
                                                      (!member.second.empty() && k == member.second);
                                           }) != cfg_.keep_fp32.end();
            if (!kept) {
                // TensorRT 11.2.1 (NVIDIA/TensorRT#4838): an ERROR line naming the node, then
                // the build fails with Error Code 10 for the same node. The failure quotes both
                // errors joined by "; ", as the TensorRT shim quotes the last errors it saw.
                const std::string low =
                    "No low-precision conv kernel available for this strongly-typed "
                    "Conv/ConvTranspose. Consider keeping Conv/ConvTranspose and Q/DQ ops in FP32 "
                    "(e.g. via modelopt.onnx.autocast.convert_to_f16 with "
                    "op_block_list=['Conv','ConvTranspose','QuantizeLinear','DequantizeLinear']). "
                    "Failing node: " + member.first;
                const std::string none =
                    "IBuilder::buildSerializedNetworkToStream: Error Code 10: Internal Error (Could "
                    "not find any implementation for node " + member.first +
                    ". In computeCosts at optimizer/common/tactic/optimizer.cpp)";
                rs.log(TRTB_SEVERITY_ERROR, low);
                rs.log(TRTB_SEVERITY_ERROR, none);
                rs.fail(TRTB_ERR_BUILD_FAILED, low + "; " + none, true);
                return false;
            }
        }
    }
    const std::vector<int32_t> order = tactic_order(cfg_.seed, sig, cfg_.tactics);
    const int32_t limit = find.limit();

    auto cached = [&](int32_t tactic, uint64_t* ns) {
        if (rs.cache_in == nullptr) {
            return false;
        }
        const uint64_t* found = rs.cache_in->find(sig, tactic);
        if (found == nullptr) {
            return false;
        }
        *ns = *found;
        return true;
    };

    bool all_cached = true;
    for (int32_t k = 0; k < limit; ++k) {
        uint64_t ns = 0;
        if (!cached(order[static_cast<size_t>(k)], &ns)) {
            all_cached = false;
            if ((cfg_.settings.flags & TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS) != 0) {
                rs.fail(TRTB_ERR_BUILD_FAILED,
                        format("Error Code 10: Internal Error (Timing cache miss for node %s, "
                               "tactic 0x%016x, and the build was asked to fail on a miss.)",
                               layer.c_str(), static_cast<unsigned>(order[static_cast<size_t>(k)])));
                return false;
            }
        }
    }

    int32_t best = -1;
    uint64_t best_ns = 0;
    int32_t measured = 0;
    for (int32_t k = 0; k < limit; ++k) {
        const int32_t tactic = order[static_cast<size_t>(k)];
        uint64_t ns = 0;
        if (cached(tactic, &ns)) {
            rs.hits.fetch_add(1, std::memory_order_relaxed);
        } else {
            if (rs.cache_in != nullptr) {
                rs.misses.fetch_add(1, std::memory_order_relaxed);
            }
            ++measured;
            if (!measure(rs, find, layer, sig, tactic)) {
                return false;
            }
            ns = tactic_time(cfg_.seed, sig, tactic);
        }
        if (best < 0 || ns < best_ns || (ns == best_ns && tactic < best)) {
            best = tactic;
            best_ns = ns;
        }
        // A layer whose tactics all come from the cache finishes at once, without steps.
        if (!all_cached && !find.step(k)) {
            return false;
        }
    }
    find.finish();

    if (best < 0) {  // the early phase left no tactic to try: keep the first one
        result.tactic = 0;
        result.time_ns = tactic_time(cfg_.seed, sig, 0);
        result.how = "not timed";
    } else {
        result.tactic = best;
        result.time_ns = best_ns;
        result.how = measured == 0 ? "cached" : "measured";
    }
    rs.log(TRTB_SEVERITY_VERBOSE,
           format("%s: Fastest Tactic: 0x%016x Time: %.6f", layer.c_str(),
                  static_cast<unsigned>(result.tactic),
                  static_cast<double>(result.time_ns) / 1e6));
    if (index == rs.slow_layer && measured > 0) {
        rs.log(TRTB_SEVERITY_WARNING,
               layer + ": no optimized implementation supports the requested format; "
                       "using a slower fallback implementation.");
    }
    return rs.node_done();
}

bool SimBuild::measure(RunState& rs, const Phase& find, const std::string& layer,
                       const std::string& sig, int32_t tactic) {
    if (cfg_.hold_after > 0 && rs.measured.load() >= cfg_.hold_after) {
        while (!rs.build.cancel_requested() && !rs.stop.load()) {
            sleep_ns(kHoldPollNs);
        }
    }
    Phase phase(rs, kPhaseMeasure, &find, cfg_.iterations, &layer);
    if (phase.failed()) {
        return false;
    }
    const int32_t limit = phase.limit();
    const uint64_t h = mix(hash_string(sig) ^ mix(cfg_.seed ^ (static_cast<uint64_t>(tactic) << 20)));
    // A measuring step averages avg_timing kernel runs, as TensorRT's timing does: step_ns is
    // the step's wall time at trtexec's 8 iterations, and another count scales it (0 leaves
    // step_ns as it is, so the knobs of trtb_sim_options keep their meaning alone).
    const int64_t avg = cfg_.settings.extra.avg_timing > 0 ? cfg_.settings.extra.avg_timing : kTrtexecAvgTiming;
    const int64_t step_ns = std::max<int64_t>(1, cfg_.step_ns / kTrtexecAvgTiming * avg +
                                                     cfg_.step_ns % kTrtexecAvgTiming * avg / kTrtexecAvgTiming);
    for (int32_t it = 0; it < limit; ++it) {
        int64_t ns = jitter(step_ns, mix(h + static_cast<uint64_t>(it)));
        if (cfg_.long_step_ns > 0 && !rs.long_step_taken.exchange(true)) {
            ns = cfg_.long_step_ns;
        }
        rs.pause(ns);
        if (!phase.step(it)) {
            if (it == limit - 1 && rs.cache_in != nullptr) {  // every iteration ran: the time is known
                std::lock_guard<std::mutex> lock(rs.mu);
                rs.learned.emplace_back(CacheKey(sig, tactic), tactic_time(cfg_.seed, sig, tactic));
            }
            return false;
        }
    }
    phase.finish();
    rs.measured.fetch_add(1);
    const uint64_t ns = tactic_time(cfg_.seed, sig, tactic);
    if (rs.cache_in != nullptr) {
        std::lock_guard<std::mutex> lock(rs.mu);
        rs.learned.emplace_back(CacheKey(sig, tactic), ns);
    }
    rs.log(TRTB_SEVERITY_VERBOSE, format("%s Tactic: 0x%016x Time: %.6f", layer.c_str(), static_cast<unsigned>(tactic),
                                         static_cast<double>(ns) / 1e6));
    return true;
}

std::string SimBuild::plan_text(const RunState& rs, uint64_t model_bytes) const {
    std::string precision;
    std::string flags;
    static const char* const compat[] = {"none", "ampere+", "same-compute-capability"};
    std::string out = kPlanMagic;
    out += "# Written by trtbuild's simulated builder. This is not a TensorRT engine.\n";
    out += "model " + escape(cfg_.settings.model_path) + "\n";
    out += format("model_bytes %llu\n", static_cast<unsigned long long>(model_bytes));
    out += format("layers %zu\n", cfg_.layers.size());
    out += format("precision %s\n", precision_names(cfg_.settings.precision, &precision));
    out += format("flags %s\n", flag_names(cfg_.settings.flags, &flags));
    out += "opt_level " + int_or_default(cfg_.settings.opt_level) + "\n";
    out += "max_aux_streams " + int_or_default(cfg_.settings.max_aux_streams) + "\n";
    out += format("hardware_compat %s\n", compat[cfg_.settings.hardware_compat]);
    out += "workspace_bytes " +
           (cfg_.settings.workspace_bytes == 0 ? std::string("default") : std::to_string(cfg_.settings.workspace_bytes)) +
           "\n";
    out += cfg_.settings.extra.summary;
    out += format("profiles %zu\n", cfg_.settings.profiles.size());
    out += format("tactics %d\niterations %d\nseed %llu\n", cfg_.tactics, cfg_.iterations,
                  static_cast<unsigned long long>(cfg_.seed));
    for (size_t i = 0; i < rs.results.size(); ++i) {
        const LayerResult& r = rs.results[i];
        out += format("layer %zu\t", i) + escape(cfg_.layers[i]) +
               format("\ttactic %d\t%llu ns\t%s\n", r.tactic,
                      static_cast<unsigned long long>(r.time_ns), r.how);
    }
    return out;
}

std::unique_ptr<Build> invalid(trtb_status* status, const std::string& message) {
    set_status(status, TRTB_ERR_INVALID_ARGUMENT, message);
    return nullptr;
}

std::string str_or_empty(const char* s) {
    return s != nullptr ? std::string(s) : std::string();
}

}  // namespace

std::unique_ptr<Build> make_sim_build(const trtb_options& o, trtb_status* status) {
    BuildSettings checked;
    std::string message;
    if (check_options(o, &checked, &message) != TRTB_OK) {
        return invalid(status, message);
    }
    Config c;
    c.settings = std::move(checked);

    int32_t nb_layers = kDefaultLayers;
    const char* const* layers = nullptr;
    const char* const* ops = nullptr;
    if (o.sim != nullptr) {
        const trtb_sim_options& s = *o.sim;
        if (s.threads < 0 || s.threads > kMaxThreads) {
            return invalid(status, format("sim threads %d is out of range: use 1 to %d", s.threads,
                                          kMaxThreads));
        }
        if (s.threads > 0) {
            c.threads = s.threads;
        }
        if (s.tactics < 0 || s.tactics > kMaxTactics) {
            return invalid(status, format("sim tactics %d is out of range: use 1 to %d", s.tactics,
                                          kMaxTactics));
        }
        if (s.tactics > 0) {
            c.tactics = s.tactics;
        }
        if (s.iterations < 0 || s.iterations > kMaxIterations) {
            return invalid(status, format("sim iterations %d is out of range: use 1 to %d",
                                          s.iterations, kMaxIterations));
        }
        if (s.iterations > 0) {
            c.iterations = s.iterations;
        }
        if (s.step_ns < 0 || s.silent_ns < 0 || s.long_step_ns < 0 || s.pre_silent_ns < 0 ||
            s.post_silent_ns < 0) {
            return invalid(status, "sim durations must not be negative");
        }
        if (s.step_ns > 0) {
            c.step_ns = s.step_ns;
        }
        c.silent_ns = s.silent_ns;
        c.long_step_ns = s.long_step_ns;
        if (s.nb_layers < 0 || s.nb_layers > kMaxLayers) {
            return invalid(status, format("sim layer count %d is out of range: use 1 to %d",
                                          s.nb_layers, kMaxLayers));
        }
        if (s.layers != nullptr) {
            if (s.nb_layers == 0) {
                return invalid(status, "sim layer names are given but their count is 0");
            }
            layers = s.layers;
            nb_layers = s.nb_layers;
        } else if (s.nb_layers > 0) {
            nb_layers = s.nb_layers;
        }
        c.fail_phase = str_or_empty(s.fail_phase);
        c.early_phase = str_or_empty(s.early_phase);
        c.abort_phase = str_or_empty(s.abort_phase);
        c.ignore_cancel = s.ignore_cancel != 0;
        if (s.hold_after < 0) {
            return invalid(status, format("sim hold-after count %d is negative: use 0 (never) or more", s.hold_after));
        }
        c.hold_after = s.hold_after;
        c.seed = s.seed;
        c.flood = s.flood != 0;
        c.skip_finish_on_stop = s.skip_finish_on_stop != 0;
        c.pre_silent_ns = s.pre_silent_ns;
        c.post_silent_ns = s.post_silent_ns;
        c.shape_key = str_or_empty(s.shape_key);
        c.fp16_fail_node = str_or_empty(s.fp16_fail_node);
        if (s.nb_keep_fp32 < 0 || (s.nb_keep_fp32 > 0 && s.keep_fp32 == nullptr)) {
            return invalid(status, format("the keep-fp32 list is malformed (%d entries)", s.nb_keep_fp32));
        }
        for (int32_t i = 0; i < s.nb_keep_fp32; ++i) {
            c.keep_fp32.push_back(str_or_empty(s.keep_fp32[i]));
        }
        if (s.layer_ops != nullptr && layers == nullptr) {
            return invalid(status, "sim layer op types are given without layer names");
        }
        ops = s.layer_ops;
    }
    std::vector<std::string> names;
    std::vector<std::string> op_types;
    names.reserve(static_cast<size_t>(nb_layers));
    for (int32_t i = 0; i < nb_layers; ++i) {
        // Unnamed nodes are common in ONNX files: name them by position.
        if (layers != nullptr && layers[i] != nullptr && layers[i][0] != '\0') {
            names.emplace_back(layers[i]);
        } else {
            names.push_back("layer_" + std::to_string(i));
        }
        if (ops != nullptr) {
            op_types.push_back(str_or_empty(ops[i]));
        }
    }
    c.original_layers = nb_layers;
    optimize_graph(names, op_types, &c);
    return std::unique_ptr<Build>(new SimBuild(std::move(c)));
}

}  // namespace trtb
