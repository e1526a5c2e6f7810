// graph.hpp: what the stand-in builder makes of a parsed model before it times anything: the
// network's layers, the optimized graph it times (fusions, the Myelin ForeignNode) and the
// shape of the tactic search for each timed node.
#ifndef TRTB_FAKE_GRAPH_HPP
#define TRTB_FAKE_GRAPH_HPP

#include "model.hpp"
#include "settings.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace trtb {
namespace TRTB_FAKE {

// TimedNode is one layer of the optimized graph whose implementation the builder chooses by
// timing: a fused layer named after its nodes ("conv1 + bn1 + relu1"), a single node, or the
// Myelin ForeignNode ("{ForeignNode[first...last]}").
struct TimedNode {
    std::string name;
    std::string ops;                   // its op types, "Conv+BatchNormalization+Relu": part of its signature
    std::vector<std::string> members;  // the model's nodes it holds
    std::vector<std::string> member_ops;
    // member_low tells, for each member, whether it computes in 16 bits: an input of it is a
    // float16 or bfloat16 initializer or network input (a strongly typed network runs a node
    // in the precision of its inputs; a --fp16 conversion leaves a kept node's in float32).
    std::vector<bool> member_low;
    // evaluations are its candidate implementations: one "Evaluating tactic times" phase
    // each, whose steps are the tactics tried (1 for the ForeignNode: Myelin compiles it
    // whole, in one long step).
    std::vector<int32_t> evaluations;
    bool foreign = false;
    int32_t index = 0;  // its place in the optimized graph
};

// Graph is a model as the builder sees it.
struct Graph {
    int32_t layers = 0;   // the network's layers: one per node and per initializer
    bool myelin = false;  // the Myelin regime: the graph (but its convolutions) is one ForeignNode
    int32_t myelin_nodes = 0;  // the nodes the ForeignNode holds
    std::vector<TimedNode> nodes;
    // timing_steps is the nbSteps of "Timing graph nodes" and "Timing tensor reformats".
    int32_t timing_steps = 0;
    // reformats are the nbSteps of each "Computing reformatting costs".
    std::vector<int32_t> reformats;
    int32_t refit_steps = 5;     // "Determining refit engines"
    int32_t optimize_steps = 33; // "Optimizing graph"
    int32_t optimize_last = 28;  // its last step reported (32 would be complete)
    uint64_t weight_bytes = 0;
};

// analyze makes the Graph of model m as the stand-in's builder times it, with the regime,
// seed and tactic count of s. regime_override forces a regime (kAuto: the model decides:
// attention or LayerNorm go to Myelin).
Graph analyze(const Model& m, const Settings& s, Regime regime_override);

// myelin_takes reports whether TensorRT would hand a graph with these nodes to the Myelin
// compiler: it has LayerNormalization (or the ReduceMean/Pow/Sqrt it decomposes into) or
// attention (a Softmax between two MatMuls).
bool myelin_takes(const Model& m);

// node_name is the name TensorRT's ONNX parser gives node i: its own, else "node_of_<first
// output>".
std::string node_name(const Model& m, size_t i);

// mix is splitmix64's finaliser and hash FNV-1a: the stand-in's only sources of "randomness".
uint64_t mix(uint64_t x);
uint64_t hash(const std::string& s);

}  // namespace TRTB_FAKE
}  // namespace trtb

#endif  // TRTB_FAKE_GRAPH_HPP
