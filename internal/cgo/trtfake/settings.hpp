// settings.hpp: how a stand-in TensorRT behaves beyond what the model and the builder config
// decide (trtfake.hpp lists each setting and the simulated builder's knob it stands for).
#ifndef TRTB_FAKE_SETTINGS_HPP
#define TRTB_FAKE_SETTINGS_HPP

#include "trtfake.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trtb {
namespace TRTB_FAKE {

// Regime is how the builder times the graph: as TensorRT times a CNN on Hopper (thousands of
// short phases), or as when the Myelin compiler takes the whole graph (one long silent step).
enum class Regime { kAuto, kCNN, kMyelin };

// Settings are a stand-in's settings. Zero values are the defaults.
struct Settings {
    int64_t step_ns = 20'000;       // one measuring step at 8 averaging iterations
    uint64_t seed = 0;
    int32_t threads = 1;            // > 1: the stress setting (trtfake.hpp)
    int32_t tactics = 0;            // > 0: tactics of every evaluation
    int32_t iterations = 4;         // steps of the second "Measuring tactic time" of a tactic
    std::string fail_phase;         // glob: fail when such a phase starts
    std::string early_phase;        // glob: such phases finish after half their steps
    std::string abort_phase;        // glob: abort() when such a phase starts
    // fail_at and abort_at pick a timed node by its place in the optimized graph, as a
    // fraction of the way through it (0: the first, 0.5: the middle, 1: the last; < 0: none):
    // timing it fails the build with Error Code 10 naming it (fail_at) or abort()s (abort_at).
    double fail_at = -1;
    double abort_at = -1;
    int64_t long_step_ns = 0;       // the first measuring step takes this long
    bool ignore_cancel = false;     // stepComplete's false is not honoured
    int64_t silent_ns = 0;          // nothing at the start of "Timing graph nodes"
    int64_t pre_silent_ns = 0;      // nothing before the root phase starts
    int64_t post_silent_ns = 0;     // nothing while the engine is generated
    bool flood = false;             // never sleep
    bool time_callbacks = false;    // time each stepComplete call and log the percentiles
    int32_t hold_after = 0;         // after this many measured tactics, wait for a cancel
    bool skip_finish = false;       // after a cancel or failure, finish no phase
    std::string fp16_fail_node;     // TensorRT 11.2's low-precision conv failure of this node
    std::string refuse;             // glob: these API calls fail as TensorRT's do (refused in objects.hpp)
    std::vector<std::string> keep_fp32;  // node names or op types kept in fp32
    Regime regime = Regime::kAuto;
    int64_t myelin_ns = -1;         // the silent Myelin step; -1: from the graph's size
    std::string device = "sm_90";   // the device the timing cache names
    int32_t version = 0;            // what getInferLibVersion says; 0: the headers' release
    int32_t build = -1;             // getInferLibBuildVersion; -1: the headers'
    // on_builder_deleted, when set, is called as a builder is deleted: the stand-in library
    // notes it for the loader's tests (library.cpp). No setting of the text sets it.
    std::function<void()> on_builder_deleted;
};

// parse_settings reads "key=value;key=value" (spaces around keys and values ignored; an empty
// text is the defaults) into *out. An unknown key or a bad value is an error naming it.
bool parse_settings(const std::string& text, Settings* out, std::string* error);

// glob reports whether name matches pattern, whose '*' stands for any run of characters; an
// empty pattern matches nothing.
bool glob(const std::string& pattern, const std::string& name);

}  // namespace TRTB_FAKE
}  // namespace trtb

#endif  // TRTB_FAKE_SETTINGS_HPP
