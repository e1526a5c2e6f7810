// trtfake.hpp: the stand-in TensorRT. It is a TensorRT for the shim (shim/) to drive, with no
// GPU: the C entry points of libnvinfer, libnvonnxparser and libnvinfer_plugin
// (getInferLibVersion, createInferBuilder_INTERNAL, createNvOnnxParser_INTERNAL,
// getNvOnnxParserVersion, initLibNvInferPlugins; entry.cpp), and behind them the classes of
// TensorRT's API that the shim calls, written against the vendored headers of TensorRT 10.16
// and 11.1 (third_party/tensorrt). It builds what real TensorRT builds in the shape real
// TensorRT reports it (build.cpp): a "plan" that says it is not an engine, written through the
// shim's IStreamWriter, and the progress tree, log lines and errors that TensorRT 10.16, 11.0
// and 11.1 report (research: the progress traces of NVIDIA's TensorRT cookbook; the issue "The
// simulator becomes a TensorRT").
//
// # Two ways in, one stand-in
//
//   - Inside the binary: internal/cgo/trtfake10.cpp and trtfake11.cpp compile every file here
//     once per major, and trtb_fake_install (trtb_fake.h; cgo.InstallStandIn) installs the
//     stand-in of a major, and its CUDA driver (driver.cpp, 8 "TensorRT stand-in GPU"s), as
//     the loaded libraries: the shim then builds over it as over a real TensorRT. Stage 1 of
//     the issue uses it in internal/cgo's tests; stage 2 makes `--backend sim` do exactly that.
//   - As libraries: internal/cgo/standin compiles the same files with library.cpp into
//     libnvinfer.so.<major> (nvinfer_<major>.dll), whose createInferBuilder loads its builder
//     resource by file name as the real one does; libnvonnxparser links against it, and the
//     loader tests' builds go through the real loader and the real shim to a plan file.
//
// # What is real and what is not
//
//   - The model is read from the ONNX file the shim gives parseFromFile (model.cpp: only what
//     a parser needs, never the weights), as TensorRT's parser reads it: a file that is not a
//     model, or a node of an unknown domain, fails the parse with the parser's error codes.
//     The network has the model's inputs and outputs with their ONNX shapes (-1 for a named
//     or unknown dimension), one layer per node, and types as ONNX gives them.
//   - What the builder times is what TensorRT would make of that network (graph.cpp): no-op
//     nodes removed, convolutions and matrix multiplies fused with what follows them, and,
//     for a graph with attention or LayerNorm, the whole graph handed to the Myelin compiler as
//     one ForeignNode (the "Myelin regime": one long step with no callback). Tactic counts,
//     timings and choices follow from the seed and the nodes.
//   - Options are checked as TensorRT checks them: an optimization profile must cover every
//     dynamic input with min <= opt <= max, a dynamic network needs a profile, TensorRT 10
//     refuses precision flags and layer precisions on a strongly typed network, and TensorRT
//     11, which removed weak typing, refuses the builder flags it no longer has (their values
//     are not enumerators of its BuilderFlag: stubsN_gen.hpp lists the ones it has).
//   - The timing cache is a cache (timing_cache.cpp): keys are node signatures (op types, the
//     node's names, the network's input shapes and precision flags; names rather than TensorRT's
//     per-layer shapes, which the stand-in does not infer, so a --keep-fp32 retry whose
//     conversion adds Cast nodes still finds what it timed before, and renamed layers share
//     nothing, unlike TensorRT's), it serializes, combines and says which TensorRT and device made
//     it, and a cache of another device is refused unless the mismatch is ignored; a build
//     served from it skips the evaluations it holds.
//   - Functions the shim does not call are the generated stubs (stubsN_gen.hpp, written by
//     `go run ./internal/trt/apiminors/stubgen`): each records "trtfake: <Class>::<method> is
//     not implemented" as an error of its builder, whose next build then fails, so a shim
//     change that calls something new is caught by every test that builds.
//
// # Progress (build.cpp), as the traces show it
//
// The root "Building engine" has 6 steps and finishes after step 4; then "Cloning network
// graph" (one step per network layer), "Preparing graph for optimization" (4), "Building engine
// from subgraph" (1) -> "Optimizing graph" (33, finishing at 28; in the Myelin regime 30,
// complete), "Computing profile costs" (5 per timing pass, two passes) -> "Timing tactics" (3,
// finishing at 1) -> "Timing graph nodes" (two steps per timed node, plus two) -> "Evaluating
// tactic times" (one per candidate implementation of a node, in groups between pairs of the
// parent's steps; steps = tactics) -> "Measuring tactic time" (4 steps, a 2-step one before
// it for every tactic but the first), and "Timing tensor reformats" -> "Computing reformatting
// costs" (steps may jump: 3 -> 6) -> "Evaluating tactic times" (3) -> "Measuring tactic time";
// and "Determining refit engines" (5; 1 in the Myelin regime), during which the parent's steps
// go on. Up to 8 levels; no phase names a layer; steps count from 0. The second timing pass
// is served by the in-build cache. At optimization level 5 the build runs three whole
// generations (backend strategies 4, 3 and 2, the second handing everything to Myelin), each
// its own root tree and "Engine generation completed" line, and keeps the fastest.
//
// Callbacks come from the thread that called the build, one at a time, as trtexec's builds
// (IBuilder::setMaxThreads stays 1). The threads setting is a stress setting the traces never
// showed: it times that many nodes at once on threads of its own (the calling thread waits
// for them), each reporting its phases and, under a lock and in order, the parent's steps of
// the nodes done, so the monitor is called from several threads with equally named phases
// open on each.
//
// Cancel: stepComplete returning false stops the build at that step: every open phase
// finishes, innermost first (on each thread), and buildSerializedNetwork(ToStream) returns
// null (false). A failure (fail_phase, an unimplemented function) finishes the open phases the
// same way, then reports TensorRT's error ("Error Code 10: Internal Error (Could not find any
// implementation for node ...)") to the error recorder, as the real one reports it after its
// root phase finished.
//
// # Settings, and the --sim-* flags
//
// A stand-in's Settings (settings.hpp) come as text, "key=value;key=value": a simulated build's
// own (trtb_sim_options.settings, which the builders created on its thread take:
// linked.hpp's with_settings), trtb_fake_install's for the process, or the environment variable
// TRTBUILD_TRTFAKE in a stand-in library (read when a builder is created). Durations take ns,
// us, ms or s. `--backend sim` passes the text its --sim-* flags (and the scenarios of
// --sim-scenario, which are sets of them) map to (cgo.SimOptions.Settings), one setting each:
//
//   --sim-speed, --sim-step
//                       step=DURATION     one "Measuring tactic time" step at 8 averaging iterations
//                                         (scaled by setAvgTimingIterations, as the simulator's); a
//                                         warm-up step takes half of it, any other step a quarter
//   --sim-seed          seed=N            tactic counts, timings and choices
//   --sim-threads       threads=N         the stress setting above (1: serial, as every real trace)
//   --sim-tactics       tactics=N         every evaluation of a node times N tactics
//   --sim-iterations    iterations=N      steps of the full "Measuring tactic time" (default 4, as
//                                         the traces)
//   --sim-fail-phase    fail-phase=GLOB   the build fails when such a phase starts: Error Code 10
//                                         (no implementation) for the node being timed, or Error
//                                         Code 2 (an assertion) outside node timing
//   --sim-early-phase   early-phase=GLOB  such phases report only the first half of their steps,
//                                         so they finish early
//   --sim-abort-phase   abort-phase=GLOB  abort() when such a phase starts
//   --sim-scenario fail, crash   fail-at=F, abort-at=F   timing the node F of the way through
//                                         the optimized graph (0.5: the middle) fails with Error
//                                         Code 10 naming it, or abort()s
//   --sim-long-step     long-step=DURATION  the first measuring step takes this long, and
//   --sim-ignore-cancel ignore-cancel=1   stepComplete's false is not honoured (slow cancel)
//   --sim-silent        silent=DURATION   nothing reported at the start of "Timing graph nodes"
//   --sim-pre-silent    pre-silent=DURATION   nothing before the root phase starts
//   --sim-post-silent   post-silent=DURATION  nothing while the engine is generated (silence)
//   --sim-flood         flood=1           no sleeping at all (benchmarks)
//   --sim-skip-finish   skip-finish=1     after a cancel or failure, finish no phase
//   SimOptions.HoldAfter   hold-after=N   after N measured tactics the builder stalls,
//                                         asking the monitor again every 50 ms with the step it
//                                         reported last (real traces repeat a step now and then)
//                                         until it says stop
//   --sim-fp16-fail-node, --keep-fp32  fp16-fail-node=NAME; keep-fp32=A,B   TensorRT 11.2's "No
//                                         low-precision conv kernel" failure of a node that runs
//                                         in 16 bits (a float16/bfloat16 weight or input)
//   SimOptions.Regime             regime=auto|cnn|myelin; myelin=DURATION (the silent Myelin step,
//                                         default 2,500 steps plus 100 per node it takes);
//                                         device=NAME (the device timing caches name);
//                                         version=N, build=N (what getInferLibVersion and
//                                         getInferLibBuildVersion say)
//   SimOptions.Refuse   refuse=GLOB       the API calls it names (IBuilder::createNetworkV2,
//                                         ITimingCache::serialize, createInferBuilder,
//                                         createNvOnnxParser, ...) fail as TensorRT's can: null
//                                         or false, an error logged (tests of the shim's
//                                         failure paths); a void setter it names
//                                         (IBuilderConfig::setFlag, setMaxAuxStreams before 11)
//                                         logs the error and ignores the call, as TensorRT does
//                                         with a value it refuses; initLibNvInferPlugins logs
//                                         that a creator could not be registered and answers
//                                         false; cuStreamCreate (the stand-in CUDA driver)
//                                         fails with CUDA_ERROR_OUT_OF_MEMORY
//
// Names, op types and shapes have no setting: the stand-in reads the model itself, one way for
// the library and the binary alike. --sim-tensorrt picks the major (trtb_sim_options).
//
// # Rules
//
//   - No exception leaves the stand-in: every function TensorRT's API declares noexcept (all
//     the shim calls) catches what it throws and answers as TensorRT does on an internal error
//     (an error recorded, false or null returned).
//   - Threads: a builder and what it made are used by one thread at a time, as TensorRT
//     requires; the builder calls the logger, the error recorder and the monitor from the
//     thread that called buildSerializedNetwork, and with threads > 1 from its own threads too.
//     Those calls copy nothing of ours that another thread changes.
//   - Ownership: what create* returns is the caller's to delete (the builder, the network, the
//     config, the parser, a timing cache, a plan's IHostMemory), except optimization profiles,
//     which the builder owns, and parser errors, which the parser owns. Every object holds the
//     Context of its builder by shared_ptr, so one deleted after the builder (the timing cache,
//     which the shim deletes last) still has its logger. The logger, the error recorder and the
//     monitor are the caller's and must outlive every object that can call them (NvInfer.h).
//   - Global state: none but what the C entry points need. They take no context, so the
//     settings of a stand-in installed in the binary are the process's (linked.cpp), as a
//     loaded library's are, and so is what its CUDA driver keeps (driver.cpp); each builder
//     copies the settings when it is created.
#ifndef TRTB_FAKE_TRTFAKE_HPP
#define TRTB_FAKE_TRTFAKE_HPP

#include <cuda_runtime_api.h>  // cudadecl/: the CUDA types TensorRT's headers name

// The headers of one major, in the namespaces the shim reads them in (tensorrt_shim.hpp), so
// that the stand-in's classes derive from the very classes the shim of that major calls.
#if TRTB_SHIM_MAJOR == 10
#define nvinfer1 trtb_v10_nvinfer1
#define nvonnxparser trtb_v10_nvonnxparser
#define TRTB_FAKE fake10
#elif TRTB_SHIM_MAJOR == 11
#define nvinfer1 trtb_v11_nvinfer1
#define nvonnxparser trtb_v11_nvonnxparser
#define TRTB_FAKE fake11
#else
#error "compile the stand-in TensorRT with TRTB_SHIM_MAJOR 10 or 11 (trtfake10.cpp, trtfake11.cpp, standin)"
#endif
#include "../shim/tensorrt_headers.hpp"
#if TRTB_SHIM_MAJOR == 10
#include "stubs10_gen.hpp"
#else
#include "stubs11_gen.hpp"
#endif

#include <cstdint>
#include <string>

namespace trtb {
namespace TRTB_FAKE {

// kMajor is the major the stand-in plays; kHeaderVersion the release of its headers
// (NV_TENSORRT_VERSION style) and kHeaderBuild their build.
constexpr int32_t kMajor = NV_TENSORRT_MAJOR;
constexpr int32_t kHeaderVersion = static_cast<int32_t>(NV_TENSORRT_VERSION);
constexpr int32_t kHeaderBuild = static_cast<int32_t>(NV_TENSORRT_BUILD);

// kParserVersion is what getNvOnnxParserVersion answers (NV_ONNX_PARSER_VERSION of the
// headers).
constexpr int32_t kParserVersion = static_cast<int32_t>(NV_ONNX_PARSER_VERSION);

// version_text formats a NV_TENSORRT_VERSION style number as "10.16.0".
std::string version_text(int32_t v);

}  // namespace TRTB_FAKE
}  // namespace trtb

#endif  // TRTB_FAKE_TRTFAKE_HPP
