// build.cpp: one build of the stand-in (buildSerializedNetwork and ...ToStream): the checks
// TensorRT makes before it builds, the progress tree, log lines and timing of trtfake.hpp, the
// timing cache's use, and the plan.
//
// A build runs on the thread that called it; with the threads setting, the timed nodes are
// shared out to that many threads, each of which reports its own phases and, under a lock and
// in order, the steps of "Timing graph nodes" that its nodes complete. Every phase is an
// object whose destructor reports its phaseFinish, so a stop (a cancel seen at a step, or a
// failure) thrown as Stop finishes the open phases innermost first, on every thread.

#include "objects.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trtb {
namespace TRTB_FAKE {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kRoot[] = "Building engine";
constexpr char kClone[] = "Cloning network graph";
constexpr char kPrepare[] = "Preparing graph for optimization";
constexpr char kSubgraph[] = "Building engine from subgraph";
constexpr char kOptimize[] = "Optimizing graph";
constexpr char kCosts[] = "Computing profile costs";
constexpr char kTactics[] = "Timing tactics";
constexpr char kNodes[] = "Timing graph nodes";
constexpr char kEvaluate[] = "Evaluating tactic times";
constexpr char kMeasure[] = "Measuring tactic time";
constexpr char kReformats[] = "Timing tensor reformats";
constexpr char kReformatCosts[] = "Computing reformatting costs";
constexpr char kRefit[] = "Determining refit engines";

// kPasses is how many timing passes "Computing profile costs" makes (5 steps each): two in
// every 10.16.1, 11.0 and 11.1 trace of an ONNX network.
constexpr int32_t kPasses = 2;

// kHoldPoll is how often a held build asks the monitor again whether to stop.
constexpr std::chrono::milliseconds kHoldPoll{50};

// kSleepGrain is the shortest sleep the builder's simulated work takes (Run::work).
constexpr int64_t kSleepGrain = 1'000'000;

// t_owed is the simulated work this thread has not slept yet (Run::work).
thread_local int64_t t_owed = 0;

// Stop unwinds a build that stopped: cancelled, or failed (Run::failure says why).
struct Stop {};

// Failure is the error a failed build reports once its phases have finished.
struct Failure {
    ErrorCode code = ErrorCode::kSUCCESS;
    std::string kind, text;
    std::vector<std::string> before;  // errors logged first (TensorRT 11.2's conv line)
};

class Run;

// Phase is one open phase of the progress tree, on the thread that made it.
class Phase {
public:
    // Phase starts a phase under parent (null: a root); node names the timed node it works on
    // (null: its parent's), for the failure of a phase that fails.
    Phase(Run& run, const char* name, const Phase* parent, int32_t steps, const std::string* node = nullptr);
    Phase(const Phase&) = delete;
    Phase& operator=(const Phase&) = delete;

    // step reports step k done (stepComplete) after work of ns; a cancel it sees throws Stop.
    void step(int32_t k, int64_t ns = 0);
    const char* name() const { return name_; }
    int32_t steps() const { return steps_; }
    int32_t last() const { return last_; }

private:
    // Finisher reports the phase's finish when it goes, also when the constructor throws.
    struct Finisher {
        Run* run = nullptr;
        const char* name = nullptr;
        ~Finisher();
    };

    Run& run_;
    const char* name_;
    int32_t steps_;
    const std::string* node_;
    int32_t last_ = -1;
    int32_t half_ = INT32_MAX;  // early_phase: steps from here on are not reported
    Finisher finisher_;
};

// Run is what the threads of one build share.
class Run {
public:
    // A build starts owing nothing on the calling thread: what an earlier build on it left
    // owed (under kSleepGrain; a cancel or failure ends a build before it settles) is not this
    // build's time.
    Run(Context& ctx, ConfigImpl& config, NetworkImpl& network)
        : ctx(ctx), s(ctx.settings()), config(config), network(network), monitor(config.getProgressMonitor()) {
        t_owed = 0;
    }

    Context& ctx;
    const Settings& s;
    ConfigImpl& config;
    NetworkImpl& network;
    nvinfer1::IProgressMonitor* const monitor;
    Graph graph;
    std::string build_key;  // what every node signature of this build shares
    TimingCacheImpl* cache = nullptr;  // the config's; null with the timing cache disabled
    bool caching = true;
    int64_t step_ns = 0;  // one measuring step at the config's averaging iterations

    std::atomic<bool> stop{false};
    std::atomic<bool> cancelled{false};
    std::atomic<bool> long_step_taken{false};
    std::atomic<int32_t> measured{0};
    std::atomic<uint64_t> hits{0}, misses{0};

    std::mutex mu;
    Failure failure;                        // guarded by mu; the first one
    std::map<CacheKey, CacheEntry> local;   // guarded by mu: the in-build cache
    std::vector<std::string> chosen;        // guarded by mu: a line of the plan per timed node

    // work spends ns, as the builder's GPU work would (not with flood). Spans shorter than
    // kSleepGrain are owed, per thread, and slept together once they add up to it: a step of
    // microseconds is shorter than one sleep's overshoot on a busy machine, and thousands of
    // them would each lengthen the build by that overshoot. No span is shortened: every sleep
    // is the whole debt (a long step or a silence, and what was owed before it).
    void work(int64_t ns) const {
        if (ns <= 0 || s.flood) {
            return;
        }
        t_owed += ns;
        if (t_owed >= kSleepGrain) {
            settle();
        }
    }

    // settle sleeps what this thread owes now: at the end of each tactic evaluation, so that
    // builder threads timing nodes side by side take turns as TensorRT's do, however short
    // their steps.
    void settle() const {
        if (t_owed > 0 && !s.flood) {
            std::this_thread::sleep_for(std::chrono::nanoseconds(t_owed));
        }
        t_owed = 0;
    }

    void start(const char* name, const Phase* parent, int32_t steps) {
        if (glob(s.abort_phase, name)) {
            std::abort();  // a crash inside TensorRT, as the setting asks
        }
        if (monitor != nullptr) {
            monitor->phaseStart(name, parent != nullptr ? parent->name() : nullptr, steps);
        }
    }

    void finish(const char* name) {
        if (monitor != nullptr && !(stop.load() && s.skip_finish)) {
            monitor->phaseFinish(name);
        }
    }

    // CallbackTimes is the time-callbacks setting's histogram of stepComplete calls: 10 ns
    // buckets up to 20 us, then one for the rest, and the longest.
    struct CallbackTimes {
        static constexpr int kBuckets = 2000;
        std::array<std::atomic<uint64_t>, kBuckets + 1> count{};
        std::atomic<int64_t> longest{0};

        void add(int64_t ns) {
            count[static_cast<size_t>(std::min<int64_t>(std::max<int64_t>(ns, 0) / 10, kBuckets))].fetch_add(1, std::memory_order_relaxed);
            int64_t was = longest.load(std::memory_order_relaxed);
            while (ns > was && !longest.compare_exchange_weak(was, ns, std::memory_order_relaxed)) {
            }
        }

        // text says how many calls there were and their 50th and 99th percentiles.
        std::string text() const {
            uint64_t n = 0;
            for (const auto& c : count) {
                n += c.load(std::memory_order_relaxed);
            }
            const auto at = [&](double q) -> std::string {
                const auto want = static_cast<uint64_t>(q * static_cast<double>(n));
                uint64_t seen = 0;
                for (int b = 0; b <= kBuckets; ++b) {
                    seen += count[static_cast<size_t>(b)].load(std::memory_order_relaxed);
                    if (seen > want) {
                        return b == kBuckets ? ">" + std::to_string(kBuckets * 10) : "<" + std::to_string((b + 1) * 10);
                    }
                }
                return "-";
            };
            return "Monitor callbacks: " + std::to_string(n) + " stepComplete calls, p50 " + at(0.50) + " ns, p99 " +
                   at(0.99) + " ns, max " + std::to_string(longest.load()) + " ns.";
        }
    };
    CallbackTimes callback_times;

    // report passes a step to the monitor and stops the build when it says so.
    void report(const char* name, int32_t k) {
        if (stop.load()) {
            throw Stop{};
        }
        bool go_on = true;
        if (monitor != nullptr) {
            if (s.time_callbacks) {
                const auto t0 = Clock::now();
                go_on = monitor->stepComplete(name, k);
                callback_times.add(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
            } else {
                go_on = monitor->stepComplete(name, k);
            }
        }
        if (!go_on && !s.ignore_cancel) {
            cancelled.store(true);
            stop.store(true);
            throw Stop{};
        }
    }

    // fail records the build's failure and stops it.
    [[noreturn]] void fail(Failure f) {
        {
            std::lock_guard<std::mutex> lock(mu);
            if (failure.code == ErrorCode::kSUCCESS) {
                failure = std::move(f);
            }
        }
        stop.store(true);
        throw Stop{};
    }

    void no_implementation(const std::string& node) {
        fail(Failure{ErrorCode::kUNSUPPORTED_STATE, "Internal Error",
                     "Could not find any implementation for node " + node + ".", {}});
    }
};

Phase::Finisher::~Finisher() {
    if (run != nullptr) {
        run->finish(name);
    }
}

Phase::Phase(Run& run, const char* name, const Phase* parent, int32_t steps, const std::string* node)
    : run_(run), name_(name), steps_(steps), node_(node != nullptr ? node : parent != nullptr ? parent->node_ : nullptr) {
    if (run.stop.load()) {
        throw Stop{};
    }
    run.start(name, parent, steps);
    finisher_.run = &run;  // from here on the phase finishes, also when what follows throws
    finisher_.name = name;
    if (glob(run.s.early_phase, name)) {
        half_ = std::max(1, steps / 2);
    }
    if (glob(run.s.fail_phase, name)) {
        if (node_ != nullptr) {
            run.no_implementation(*node_);
        }
        run.fail(Failure{ErrorCode::kINTERNAL_ERROR, "Internal Error",
                         std::string("Assertion failed: ") + name + " could not complete.", {}});
    }
}

void Phase::step(int32_t k, int64_t ns) {
    run_.work(ns);
    if (k >= half_) {
        return;  // early_phase: finishes after the steps before
    }
    last_ = k;
    run_.report(name_, k);
}

// distribute splits n steps over groups, the larger shares first (front) or last.
std::vector<int32_t> distribute(int32_t n, int32_t groups, bool front) {
    std::vector<int32_t> out(static_cast<size_t>(std::max(groups, 1)), 0);
    if (groups <= 0) {
        return out;
    }
    const int32_t base = n / groups, extra = n % groups;
    for (int32_t g = 0; g < groups; ++g) {
        const bool more = front ? g < extra : g >= groups - extra;
        out[static_cast<size_t>(g)] = base + (more ? 1 : 0);
    }
    return out;
}

std::string hex64(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
    return buf;
}

std::string seconds(Clock::duration d) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.5f", std::chrono::duration<double>(d).count());
    return buf;
}

// Generation is one engine generation: a whole progress tree and its timing.
class Generation {
public:
    Generation(Run& run, bool myelin_strategy) : run_(run), s_(run.s), myelin_strategy_(myelin_strategy) {}

    // build runs the tree; it returns the estimated inference time of the engine (ns).
    uint64_t build() {
        const Graph& g = run_.graph;
        Phase root(run_, kRoot, nullptr, 6);
        {
            Phase clone(run_, kClone, &root, std::max(1, g.layers));
            for (int32_t k = 0; k < clone.steps(); ++k) {
                clone.step(k, small());
            }
        }
        root.step(0, small());
        root.step(1, small());
        {
            Phase prepare(run_, kPrepare, &root, 4);
            for (int32_t k = 0; k < 4; ++k) {
                prepare.step(k, small());
            }
        }
        root.step(2, small());
        root.step(3, small());
        {
            Phase subgraph(run_, kSubgraph, &root, 1);
            {
                Phase optimize(run_, kOptimize, &subgraph, g.optimize_steps);
                for (int32_t k = 0; k <= g.optimize_last; ++k) {
                    optimize.step(k, small());
                }
            }
            {
                Phase costs(run_, kCosts, &subgraph, 5 * kPasses);
                for (int32_t pass = 0; pass < kPasses; ++pass) {
                    {
                        Phase tactics(run_, kTactics, &costs, 3);
                        time_nodes(tactics, pass);
                        tactics.step(0, small());
                        time_reformats(tactics, pass);
                        tactics.step(1, small());
                    }
                    for (int32_t k = 0; k < 3; ++k) {
                        costs.step(5 * pass + k, small());
                    }
                    // The parent's steps go on while this child is open, as in every trace.
                    Phase refit(run_, kRefit, &costs, g.refit_steps);
                    for (int32_t k = 0; k < g.refit_steps; ++k) {
                        refit.step(k, small());
                    }
                    costs.step(5 * pass + 3, small());
                    costs.step(5 * pass + 4, small());
                }
            }
            memory_lines();
            run_.work(s_.post_silent_ns);
            subgraph.step(0, small());
        }
        root.step(4, small());
        return estimate_;
    }

private:
    int64_t small() const { return run_.step_ns / 4; }

    bool foreign_only() const { return myelin_strategy_ && !run_.graph.myelin; }

    // time_nodes is "Timing graph nodes": step 0, then each node's evaluations followed by
    // its share of the steps; with threads, nodes are timed in parallel and the steps of
    // finished nodes reported in order.
    void time_nodes(Phase& parent, int32_t pass) {
        const Graph& g = run_.graph;
        Phase nodes(run_, kNodes, &parent, g.timing_steps);
        if (pass == 0) {
            run_.work(s_.silent_ns);
        }
        nodes.step(0, small());
        const int32_t n = static_cast<int32_t>(g.nodes.size());
        const std::vector<int32_t> shares = distribute(g.timing_steps - 1, n, false);
        int32_t next_step = 1;
        if (s_.threads <= 1 || n <= 1) {
            for (int32_t i = 0; i < n; ++i) {
                time_node(nodes, g.nodes[static_cast<size_t>(i)], pass == 0);
                for (int32_t k = 0; k < shares[static_cast<size_t>(i)]; ++k) {
                    nodes.step(next_step++, small());
                }
            }
            return;
        }
        // The stress setting: nodes on threads; a node's steps once every node before it is done.
        std::mutex mu;
        std::vector<bool> done(static_cast<size_t>(n), false);
        int32_t reported = 0;  // nodes whose steps are reported; guarded by mu
        std::atomic<int32_t> next{0};
        auto worker = [&] {
            try {
                for (int32_t i = next++; i < n; i = next++) {
                    time_node(nodes, g.nodes[static_cast<size_t>(i)], pass == 0);
                    std::lock_guard<std::mutex> lock(mu);
                    done[static_cast<size_t>(i)] = true;
                    while (reported < n && done[static_cast<size_t>(reported)]) {
                        for (int32_t k = 0; k < shares[static_cast<size_t>(reported)]; ++k) {
                            nodes.step(next_step++, 0);
                        }
                        ++reported;
                    }
                }
            } catch (const Stop&) {
            } catch (const std::exception& e) {
                try {
                    run_.fail(Failure{ErrorCode::kINTERNAL_ERROR, "Internal Error", e.what(), {}});
                } catch (const Stop&) {
                }
            }
        };
        // Every node is timed on a thread of the stand-in's own, none on the thread that called
        // the build (which waits): a test can tell the two apart (a crash on one of them kills
        // the process another way than on a thread of its caller's runtime).
        std::vector<std::thread> threads;
        for (int32_t t = 0; t < std::min(s_.threads, n); ++t) {
            threads.emplace_back(worker);
        }
        for (std::thread& t : threads) {
            t.join();
        }
        if (run_.stop.load()) {
            throw Stop{};
        }
    }

    // picked reports whether node is the one a fail_at or abort_at setting of at picks: the
    // node that fraction of the way through the optimized graph.
    bool picked(double at, const TimedNode& node) const {
        const size_t n = run_.graph.nodes.size();
        if (at < 0 || n == 0) {
            return false;
        }
        const auto target = static_cast<int32_t>(at * static_cast<double>(n - 1) + 0.5);
        return node.index == target;
    }

    // time_node evaluates a node's candidates, those the caches do not hold.
    void time_node(Phase& nodes, const TimedNode& node, bool record) {
        const bool foreign = node.foreign || foreign_only();
        if (foreign_only() && node.index > 0) {
            return;  // the myelin strategy hands the whole graph to Myelin: one ForeignNode
        }
        if (picked(s_.abort_at, node)) {
            std::abort();  // a crash inside TensorRT while it times this node, as the setting asks
        }
        if (picked(s_.fail_at, node)) {
            run_.no_implementation(node.name);
        }
        if (!s_.fp16_fail_node.empty()) {
            for (size_t m = 0; m < node.members.size(); ++m) {
                // Only a node that runs in 16 bits fails: a TensorRT 11 --fp16 build converts
                // the model, and the conversion leaves a node it keeps in float32.
                if (node.members[m] != s_.fp16_fail_node || m >= node.member_low.size() || !node.member_low[m]) {
                    continue;
                }
                const bool kept = std::find_if(s_.keep_fp32.begin(), s_.keep_fp32.end(), [&](const std::string& k) {
                                      return k == node.members[m] || k == node.member_ops[m];
                                  }) != s_.keep_fp32.end();
                if (!kept) {
                    // TensorRT 11.2.1 (NVIDIA/TensorRT#4838): an ERROR naming the node, then Error Code 10.
                    run_.fail(Failure{ErrorCode::kUNSUPPORTED_STATE, "Internal Error",
                                      "Could not find any implementation for node " + node.members[m] +
                                          ". In computeCosts at optimizer/common/tactic/optimizer.cpp",
                                      {"No low-precision conv kernel available for this strongly-typed "
                                       "Conv/ConvTranspose. Consider keeping Conv/ConvTranspose and Q/DQ ops in FP32 "
                                       "(e.g. via modelopt.onnx.autocast.convert_to_f16 with "
                                       "op_block_list=['Conv','ConvTranspose','QuantizeLinear','DequantizeLinear']). "
                                       "Failing node: " +
                                       node.members[m]}});
                }
            }
        }
        const Graph& g = run_.graph;
        const std::string name = foreign_only() ? "{ForeignNode[" + g.nodes.front().members.front() + "..." +
                                                      g.nodes.back().members.back() + "]}"
                                                : node.name;
        uint64_t best_ns = UINT64_MAX, best_tactic = 0;
        const std::vector<int32_t> evaluations = foreign ? std::vector<int32_t>{1} : node.evaluations;
        for (size_t e = 0; e < evaluations.size(); ++e) {
            // The node's ops and names, not its place: a --keep-fp32 retry's conversion adds
            // Cast nodes, and what it left as it was is still found in the cache.
            // And the precision it computes in, as TensorRT's keys hold the tensors' types: a
            // TensorRT 11 --fp16 build, which converts the model, times its nodes anew.
            std::string types;
            for (const bool low : node.member_low) {
                types += low ? 'h' : 'f';
            }
            const std::string sig = (foreign ? std::string("ForeignNode") : node.ops) + "|" + name + "|" + types +
                                    "|" + run_.build_key + "|e" + std::to_string(e);
            const CacheKey key{hash(sig), mix(hash(sig) ^ 0x5eedULL)};
            CacheEntry entry;
            if (foreign) {
                // Myelin compiles the ForeignNode once; a later pass (or build) that finds it
                // in the cache still reports its one step, at once.
                const bool cached = lookup(key, &entry);
                entry = evaluate(nodes, name, true, 1, sig, cached);
                if (!cached) {
                    run_.misses++;
                    store(key, entry);
                }
            } else if (evaluations[e] > 1 && lookup(key, &entry)) {
                run_.hits++;
            } else {
                entry = evaluate(nodes, name, false, evaluations[e], sig, false);
                if (evaluations[e] > 1) {
                    run_.misses++;
                    store(key, entry);
                }
            }
            if (entry.time_ns < best_ns) {
                best_ns = entry.time_ns;
                best_tactic = entry.tactic;
            }
        }
        if (!record) {
            return;  // a later pass: the first chose
        }
        std::lock_guard<std::mutex> lock(run_.mu);
        estimate_ += best_ns;
        run_.chosen.push_back(name + "\ttactic " + hex64(best_tactic) + "\t" + std::to_string(best_ns) + " ns");
    }

    bool lookup(const CacheKey& key, CacheEntry* out) {
        if (!run_.caching) {
            return false;
        }
        if (run_.cache != nullptr && run_.cache->find(key, out)) {
            return true;
        }
        std::lock_guard<std::mutex> lock(run_.mu);
        const auto it = run_.local.find(key);
        if (it == run_.local.end()) {
            return false;
        }
        *out = it->second;
        return true;
    }

    void store(const CacheKey& key, const CacheEntry& e) {
        if (!run_.caching) {
            return;
        }
        {
            std::lock_guard<std::mutex> lock(run_.mu);
            run_.local.emplace(key, e);
        }
        if (run_.cache != nullptr) {
            run_.cache->insert(key, e);
        }
    }

    // evaluate is one "Evaluating tactic times": each tactic measured (a short and a full
    // measurement, the first tactic only the full one), or for the ForeignNode one step in
    // which Myelin compiles the subgraph, reporting nothing.
    CacheEntry evaluate(Phase& nodes, const std::string& node, bool foreign, int32_t tactics, const std::string& sig,
                        bool cached) {
        Phase ev(run_, kEvaluate, &nodes, tactics, &node);
        CacheEntry best{0, UINT64_MAX};
        if (foreign) {
            ev.step(0, cached ? small() : myelin_ns());
            best.tactic = mix(hash(sig));
            best.time_ns = 20000 + mix(hash(sig) ^ s_.seed) % 200000;
            return best;
        }
        for (int32_t t = 0; t < tactics; ++t) {
            if (t > 0) {
                Phase warm(run_, kMeasure, &ev, 2);
                warm.step(0, run_.step_ns / 2);
                warm.step(1, run_.step_ns / 2);
            }
            {
                Phase measure(run_, kMeasure, &ev, s_.iterations);
                for (int32_t k = 0; k < s_.iterations; ++k) {
                    int64_t ns = run_.step_ns;
                    if (s_.long_step_ns > 0 && !run_.long_step_taken.exchange(true)) {
                        ns = s_.long_step_ns;
                    }
                    measure.step(k, ns);
                }
            }
            const uint64_t h = mix(hash(sig) ^ mix(s_.seed ^ static_cast<uint64_t>(t)));
            const uint64_t ns = 20000 + h % 200000;
            if (ns < best.time_ns) {
                best = CacheEntry{h, ns};
            }
            if (s_.hold_after > 0 && ++run_.measured >= s_.hold_after) {
                hold(ev, t);
            }
            ev.step(t, 0);
        }
        run_.settle();
        return best;
    }

    // hold is the hold_after setting: the builder stalls, as in one long kernel compile,
    // asking the monitor again every kHoldPoll (with the step it reported last, as TensorRT's
    // traces repeat one now and then) until it says stop.
    void hold(Phase& ev, int32_t t) {
        if (run_.monitor == nullptr) {
            return;  // nothing could ever cancel the stall
        }
        const int32_t step = std::max(0, std::max(ev.last(), t - 1));
        for (;;) {
            std::this_thread::sleep_for(kHoldPoll);
            if (run_.stop.load()) {
                throw Stop{};
            }
            if (run_.monitor != nullptr && !run_.monitor->stepComplete(ev.name(), step)) {
                run_.cancelled.store(true);  // whatever ignore_cancel says: a hold waits for this
                run_.stop.store(true);
                throw Stop{};
            }
        }
    }

    int64_t myelin_ns() const {
        if (s_.myelin_ns >= 0) {
            return s_.myelin_ns;
        }
        const int64_t nodes = std::max<int64_t>(run_.graph.myelin_nodes, static_cast<int64_t>(run_.graph.nodes.size()));
        return 2500 * run_.step_ns + 100 * run_.step_ns * nodes;
    }

    // time_reformats is "Timing tensor reformats": groups of "Computing reformatting costs",
    // each evaluating reformats between its first steps; a group of 9 steps jumps from 3 to 6.
    void time_reformats(Phase& parent, int32_t pass) {
        const Graph& g = run_.graph;
        Phase reformats(run_, kReformats, &parent, g.timing_steps);
        const int32_t groups = static_cast<int32_t>(g.reformats.size());
        const std::vector<int32_t> shares = distribute(g.timing_steps, groups, true);
        int32_t next_step = 0;
        for (int32_t r = 0; r < groups; ++r) {
            const int32_t n = g.reformats[static_cast<size_t>(r)];
            {
                Phase costs(run_, kReformatCosts, &reformats, n);
                for (int32_t k = 0; k < n; ++k) {
                    if (n >= 9 && k >= 4 && k <= 5) {
                        continue;  // 3 -> 6, in every 10.16 and 11.1 trace
                    }
                    costs.step(k, small());
                    const bool evaluates = k < n - 1 && (n < 9 ? k < 4 : (k < 2 || k == 3 || k == 6));
                    if (evaluates && pass == 0 && !g.myelin) {
                        Phase ev(run_, kEvaluate, &costs, 3);
                        for (int32_t t = 0; t < 3; ++t) {
                            if (t > 0) {
                                Phase warm(run_, kMeasure, &ev, 2);
                                warm.step(0, run_.step_ns / 2);
                                warm.step(1, run_.step_ns / 2);
                            }
                            {
                                Phase measure(run_, kMeasure, &ev, s_.iterations);
                                for (int32_t j = 0; j < s_.iterations; ++j) {
                                    measure.step(j, run_.step_ns);
                                }
                            }
                            ev.step(t, 0);
                        }
                    }
                }
            }
            for (int32_t k = 0; k < shares[static_cast<size_t>(r)]; ++k) {
                reformats.step(next_step++, small());
            }
        }
    }

    void memory_lines() {
        const Graph& g = run_.graph;
        const NetworkImpl& net = run_.network;
        const uint64_t activation = 4096 * (static_cast<uint64_t>(g.nodes.size()) + 4) * 30;
        auto info = [&](const std::string& text) { run_.ctx.log(Severity::kINFO, text); };
        info("Detected " + std::to_string(net.inputs().size()) + " inputs and " + std::to_string(net.outputs().size()) +
             " output network tensors.");
        info("Total Host Persistent Memory: " + std::to_string(1024 + 736 * g.nodes.size()) + " bytes");
        info("Total Device Persistent Memory: 0 bytes");
        info("Max Scratch Memory: " + std::to_string(4608 * std::max<size_t>(1, g.nodes.size() / 4)) + " bytes");
        info("[BlockAssignment] Started assigning block shifts. This will take " + std::to_string(g.nodes.size()) +
             " steps to complete.");
        info("[BlockAssignment] Algorithm ShiftNTopDown took 0.01442ms to assign " +
             std::to_string(std::max<size_t>(2, g.nodes.size() / 3)) + " blocks to " + std::to_string(g.nodes.size()) +
             " nodes requiring " + std::to_string(activation) + " bytes.");
        info("Total Activation Memory: " + std::to_string(activation) + " bytes");
        info("Total Weights Memory: " + std::to_string(g.weight_bytes) + " bytes");
        if (g.myelin || myelin_strategy_) {
            info("Compiler backend is used during engine execution.");
        }
    }

    Run& run_;
    const Settings& s_;
    const bool myelin_strategy_;
    uint64_t estimate_ = 0;  // the chosen tactics' times; guarded by run_.mu while threads run
};

// precision_flags names the precision builder flags set (TensorRT 10), which a strongly typed
// network refuses.
std::string precision_flags(const ConfigImpl& config) {
    std::string out;
#if TRTB_SHIM_MAJOR == 10
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    using F = nvinfer1::BuilderFlag;
    const std::pair<F, const char*> flags[] = {{F::kFP16, "kFP16"}, {F::kBF16, "kBF16"}, {F::kINT8, "kINT8"},
                                               {F::kFP8, "kFP8"},   {F::kINT4, "kINT4"}, {F::kFP4, "kFP4"},
                                               {F::kOBEY_PRECISION_CONSTRAINTS, "kOBEY_PRECISION_CONSTRAINTS"},
                                               {F::kPREFER_PRECISION_CONSTRAINTS, "kPREFER_PRECISION_CONSTRAINTS"}};
#pragma GCC diagnostic pop
    for (const auto& f : flags) {
        if (config.flag(static_cast<int32_t>(f.first))) {
            out += (out.empty() ? "BuilderFlag::" : ", BuilderFlag::") + std::string(f.second);
        }
    }
#else
    (void)config;
#endif
    return out;
}

// check is what TensorRT refuses before it builds: "" when nothing.
std::string check(const Context& ctx, const ConfigImpl& config, const NetworkImpl& network, ErrorCode* code) {
    *code = ErrorCode::kINVALID_CONFIG;
    const std::vector<std::string> missing = ctx.unimplemented();
    if (!missing.empty()) {
        *code = ErrorCode::kINTERNAL_ERROR;
        std::string names;
        for (const std::string& m : missing) {
            names += (names.empty() ? "" : ", ") + m;
        }
        return "trtfake: the builder was asked for what the stand-in does not implement (" + names + ")";
    }
    if (!network.filled() || network.outputs().empty()) {
        return "Network must have at least one output";
    }
    if (network.strongly_typed()) {
        const std::string flags = precision_flags(config);
        if (!flags.empty()) {
            *code = ErrorCode::kINVALID_ARGUMENT;
            return flags + " cannot be set for a strongly typed network: it takes its types from the network";
        }
    }
    if (config.dla()) {
        return "DLA was requested but this device has no DLA core";
    }
    bool dynamic = false;
    for (const Tensor* t : network.inputs()) {
        dynamic = dynamic || t->impl().dynamic();
    }
    if (dynamic && config.profiles().empty()) {
        return "Network has dynamic or shape inputs, but no optimization profile has been defined.";
    }
    for (size_t p = 0; p < config.profiles().size(); ++p) {
        const auto& shapes = config.profiles()[p]->shapes();
        for (const Tensor* t : network.inputs()) {
            const TensorImpl& in = t->impl();
            if (!in.dynamic()) {
                continue;
            }
            const auto it = shapes.find(in.name());
            const bool given = it != shapes.end() && (in.isShapeTensor() ? it->second.values_set[0] : it->second.set[0]);
            if (!given) {
                return in.name() + ": dynamic input is missing dimensions in profile " + std::to_string(p) + ".";
            }
            if (in.isShapeTensor()) {
                continue;
            }
            const nvinfer1::Dims d = in.getDimensions();
            for (int sel = 0; sel < 3; ++sel) {
                const nvinfer1::Dims& got = it->second.dims[sel];
                bool ok = got.nbDims == d.nbDims;
                for (int32_t i = 0; ok && i < d.nbDims; ++i) {
                    ok = d.d[i] < 0 || got.d[i] == d.d[i];
                }
                if (!ok) {
                    return in.name() + ": the dimensions of profile " + std::to_string(p) +
                           " do not match the input's static dimensions.";
                }
            }
        }
    }
    return "";
}

// build_key is what the signatures of a build's nodes share: the shapes it is built for and
// the precision flags.
std::string build_key(const ConfigImpl& config, const NetworkImpl& network) {
    std::string key;
    for (const Tensor* t : network.inputs()) {
        const nvinfer1::Dims d = t->impl().getDimensions();
        key += t->impl().name() + "=";
        for (int32_t i = 0; i < d.nbDims; ++i) {
            int64_t v = d.d[i];
            if (v < 0 && !config.profiles().empty()) {
                const auto& shapes = config.profiles().front()->shapes();
                const auto it = shapes.find(t->impl().name());
                if (it != shapes.end() && it->second.set[1] && i < it->second.dims[1].nbDims) {
                    v = it->second.dims[1].d[i];
                }
            }
            key += std::to_string(v) + "x";
        }
        key += ";";
    }
    key += "flags=" + std::to_string(precision_flags(config).size());
    return key;
}

// plan_escape keeps a plan line one line: '\\', newlines and tabs escaped as C does.
std::string plan_escape(const std::string& s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// plan_precision names the reduced precisions the engine computes in, "+" between them: the
// precision builder flags set (TensorRT 10), else the 16-bit float types of the network's
// weights and inputs (a strongly typed network, as TensorRT 11's --fp16 conversion makes);
// "default" when none.
std::string plan_precision(const ConfigImpl& config, const NetworkImpl& network) {
    std::string out;
    const auto add = [&out](const char* name) {
        if (out.find(name) == std::string::npos) {
            out += (out.empty() ? "" : "+") + std::string(name);
        }
    };
#if TRTB_SHIM_MAJOR == 10
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    using F = nvinfer1::BuilderFlag;
    const std::pair<F, const char*> flags[] = {{F::kFP16, "fp16"}, {F::kBF16, "bf16"}, {F::kINT8, "int8"}, {F::kFP8, "fp8"}};
#pragma GCC diagnostic pop
    for (const auto& f : flags) {
        if (config.flag(static_cast<int32_t>(f.first))) {
            add(f.second);
        }
    }
#else
    (void)config;
#endif
    if (out.empty()) {
        const Model& m = network.model();
        for (const Initializer& i : m.initializers) {
            if (i.type == kOnnxFloat16) {
                add("fp16");
            } else if (i.type == kOnnxBfloat16) {
                add("bf16");
            }
        }
        for (const Value& v : m.inputs) {
            if (v.type == kOnnxFloat16) {
                add("fp16");
            } else if (v.type == kOnnxBfloat16) {
                add("bf16");
            }
        }
    }
    return out.empty() ? "default" : out;
}

// plan_text is the stand-in's plan: the simulated-plan format internal/plan reads, which no
// TensorRT mistakes for an engine.
std::string plan_text(const Run& run, const std::vector<std::string>& chosen, int32_t strategy, int32_t generations) {
    const Context& ctx = run.ctx;
    std::string out = "TRTBUILD-SIMULATED-PLAN 1\n";
    out += "# Written by trtbuild's stand-in TensorRT (trtfake). This is not a TensorRT engine.\n";
    out += "builder trtfake\n";
    out += "tensorrt " + version_text(ctx.version()) + "." + std::to_string(ctx.build()) + "\n";
    out += "device " + ctx.settings().device + "\n";
    out += "regime " + std::string(run.graph.myelin ? "myelin" : "cnn") + "\n";
    out += "network_layers " + std::to_string(run.graph.layers) + "\n";
    out += "timed_nodes " + std::to_string(run.graph.nodes.size()) + "\n";
    out += "opt_level " + std::to_string(run.config.opt_level()) + "\n";
    out += "avg_timing " + std::to_string(run.config.avg_timing()) + "\n";
    out += "profiles " + std::to_string(run.config.profiles().size()) + "\n";
    out += "generations " + std::to_string(generations) + "\n";
    out += "backend_strategy " + std::to_string(strategy) + "\n";
    out += "weights_bytes " + std::to_string(run.graph.weight_bytes) + "\n";
    // The file's name, not its folder: the same model builds the same plan wherever it lies.
    const std::string& path = run.network.model().path;
    out += "model " + plan_escape(path.substr(path.find_last_of("/\\") == std::string::npos ? 0 : path.find_last_of("/\\") + 1)) + "\n";
    out += "model_bytes " + std::to_string(run.network.model().file_bytes) + "\n";
    out += "precision " + plan_precision(run.config, run.network) + "\n";
    out += "workspace_bytes " + std::to_string(run.config.workspace()) + "\n";
    out += "strongly_typed " + std::string(run.network.strongly_typed() ? "yes" : "no") + "\n";
    out += run.config.settings_text();
    for (const Tensor* t : run.network.inputs()) {
        out += "input " + plan_escape(t->impl().name()) + " type " + std::to_string(static_cast<int32_t>(t->impl().getType())) +
               " formats " + std::to_string(t->impl().getAllowedFormats()) + "\n";
    }
    for (const Tensor* t : run.network.outputs()) {
        out += "output " + plan_escape(t->impl().name()) + " type " + std::to_string(static_cast<int32_t>(t->impl().getType())) +
               " formats " + std::to_string(t->impl().getAllowedFormats()) + "\n";
    }
    for (size_t i = 0; i < chosen.size(); ++i) {
        out += "layer " + std::to_string(i) + "\t" + chosen[i] + "\n";
    }
    return out;
}

}  // namespace

template <typename Sink>
bool BuilderImpl::build(const char* api, nvinfer1::INetworkDefinition& network_in, nvinfer1::IBuilderConfig& config_in,
                        Sink sink) {
    Context& ctx = *ctx_;
    if (refused(ctx, api)) {
        return false;
    }
    try {
        // The network and config come from this builder: nothing else makes them.
        NetworkImpl& network = static_cast<Network&>(network_in).impl();
        ConfigImpl& config = static_cast<Config&>(config_in).impl();
        ErrorCode code = ErrorCode::kSUCCESS;
        const std::string refused = check(ctx, config, network, &code);
        if (!refused.empty()) {
            ctx.error(code, api, code == ErrorCode::kINVALID_ARGUMENT ? "API Usage Error" : "Internal Error", refused);
            return false;
        }
        Run run(ctx, config, network);
        const Settings& s = ctx.settings();
        Regime regime = s.regime;
        run.graph = analyze(network.model(), s, regime);
        run.build_key = build_key(config, network);
        run.caching = !config.flag(static_cast<int32_t>(nvinfer1::BuilderFlag::kDISABLE_TIMING_CACHE));
        run.cache = run.caching && config.cache() != nullptr ? &config.cache()->impl() : nullptr;
        run.step_ns = s.step_ns * std::max(1, config.avg_timing()) / 8;

        ctx.log(Severity::kINFO, run.cache != nullptr
                                     ? "Global timing cache in use. Profiling results in this builder pass will be stored."
                                     : "Local timing cache in use. Profiling results in this builder pass will not be stored.");
        ctx.log(Severity::kINFO, "Compiler backend is used during engine build.");
        run.work(s.pre_silent_ns);

        // Optimization level 5 builds a generation per backend strategy (4, 3: everything to
        // Myelin, 2) and keeps the fastest, as TensorRT 10.16.1 did; other levels one.
        const int32_t generations = config.opt_level() >= 5 ? 3 : 1;
        int32_t chosen_strategy = 0;
        uint64_t chosen_ns = 0;
        std::vector<std::string> chosen;
        for (int32_t gen = 0; gen < generations; ++gen) {
            const int32_t strategy = generations > 1 ? 4 - gen : 0;
            if (generations > 1) {
                ctx.log(Severity::kVERBOSE, "Building graph using backend strategy " + std::to_string(strategy));
            }
            const Clock::time_point start = Clock::now();
            {
                std::lock_guard<std::mutex> lock(run.mu);
                run.chosen.clear();
            }
            uint64_t estimate = 0;
            try {
                estimate = Generation(run, strategy == 3).build();
            } catch (const Stop&) {
            }
            if (run.stop.load()) {
                break;
            }
            ctx.log(Severity::kINFO, "Engine generation completed in " + seconds(Clock::now() - start) + " seconds.");
            std::lock_guard<std::mutex> lock(run.mu);
            if (gen == 0) {
                chosen_strategy = strategy, chosen_ns = estimate, chosen = run.chosen;
                if (generations > 1) {
                    ctx.log(Severity::kVERBOSE, "Use backend strategy " + std::to_string(strategy) +
                                                    " with estimated inference time (" + std::to_string(estimate) +
                                                    " ns) as the initial choice.");
                }
            } else if (estimate < chosen_ns) {
                ctx.log(Severity::kVERBOSE, "Chose this engine with backend strategy " + std::to_string(strategy) +
                                                " since its estimated inference time (" + std::to_string(estimate) +
                                                " ns) is faster than the previous engine with estimated inference time (" +
                                                std::to_string(chosen_ns) + " ns).");
                chosen_strategy = strategy, chosen_ns = estimate, chosen = run.chosen;
            } else {
                ctx.log(Severity::kVERBOSE, "Skip backend strategy " + std::to_string(strategy) +
                                                " since its estimated inference time (" + std::to_string(estimate) +
                                                " ns) is not faster than the previous engine with estimated inference time (" +
                                                std::to_string(chosen_ns) + " ns).");
            }
        }
        if (s.time_callbacks) {
            // A warning, which a queue that flood filled still keeps (it drops INFO lines).
            ctx.log(Severity::kWARNING, run.callback_times.text());
        }
        if (run.stop.load()) {
            // The phases have finished; a failure is reported now, after the root phase, as
            // TensorRT reports it. A cancel reports nothing: the null plan says it.
            std::lock_guard<std::mutex> lock(run.mu);
            if (!run.cancelled.load() && run.failure.code != ErrorCode::kSUCCESS) {
                for (const std::string& e : run.failure.before) {
                    ctx.log(Severity::kERROR, e);
                }
                ctx.error(run.failure.code, api, run.failure.kind.c_str(), run.failure.text);
            }
            return false;
        }
        ctx.log(Severity::kINFO, "[MemUsageStats] Peak memory usage of TRT CPU/GPU memory allocators: CPU 0 MiB, GPU " +
                                     std::to_string(1 + run.graph.weight_bytes / (1 << 20)) + " MiB");
        return sink(plan_text(run, chosen, chosen_strategy, generations));
    } catch (const std::exception& e) {
        ctx.error(ErrorCode::kINTERNAL_ERROR, api, "Internal Error", e.what());
    } catch (...) {
        ctx.error(ErrorCode::kINTERNAL_ERROR, api, "Internal Error", "unknown exception");
    }
    return false;
}

}  // namespace TRTB_FAKE
}  // namespace trtb
