// graph.cpp: the optimized graph the stand-in times (graph.hpp). The fusions are TensorRT's
// common ones (a convolution or matrix multiply with the BatchNormalization, bias or residual
// Add and one activation after it); no-op nodes go; shuffles are kept but not timed. The
// numbers of candidate implementations and tactics are drawn, per node and seed, from what
// TensorRT 10.16 tried for the MNIST network of NVIDIA's cookbook (research:
// trt-10.16.1-mnist-progress-events.tsv): a convolution 2 to 4 evaluations of 18 to 153
// tactics, a matrix multiply 1 or 2 of 5 to 33, a pooling 1 or 2 of 2 to 18, any other
// computing node 1 of 1 to 5.

#include "graph.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace trtb {
namespace TRTB_FAKE {

namespace {

bool one_of(const std::string& op, std::initializer_list<const char*> ops) {
    for (const char* o : ops) {
        if (op == o) {
            return true;
        }
    }
    return false;
}

// removed: nodes TensorRT's optimizer folds away.
bool removed(const std::string& op) {
    return one_of(op, {"Identity", "Constant", "Shape", "Dropout", "ConstantOfShape"});
}

bool conv_head(const std::string& op) { return one_of(op, {"Conv", "ConvTranspose"}); }
bool gemm_head(const std::string& op) { return one_of(op, {"Gemm", "MatMul"}); }

// follower: what TensorRT folds into the layer before it: 1 a BatchNormalization (scale
// fusion), 2 an Add (bias or residual), 4 one activation; 0 nothing.
int follower(const std::string& op) {
    if (op == "BatchNormalization") {
        return 1;
    }
    if (op == "Add" || op == "Sum") {
        return 2;
    }
    if (one_of(op, {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "Elu", "Selu", "Softplus", "HardSigmoid",
                    "HardSwish", "Gelu", "Mish", "PRelu"})) {
        return 4;
    }
    return 0;
}

// shuffle: layers TensorRT runs without a tactic to choose.
bool shuffle(const std::string& op) {
    return one_of(op, {"Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Slice", "Gather",
                       "Cast", "Expand", "Split", "Pad", "Tile", "If", "Loop", "ArgMax", "ArgMin"});
}

bool pooling(const std::string& op) {
    return one_of(op, {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LRN", "LpPool"});
}

// pick draws one of values for node, evaluation k and seed.
int32_t pick(const std::vector<int32_t>& values, uint64_t seed, const std::string& node, uint64_t k) {
    const uint64_t h = mix(hash(node) ^ mix(seed ^ (0x7ac71cULL + k)));
    return values[static_cast<size_t>(h % values.size())];
}

std::vector<int32_t> evaluations(const TimedNode& n, const Settings& s) {
    static const std::vector<int32_t> conv = {28, 33, 32, 153, 34, 29, 18};
    static const std::vector<int32_t> gemm = {18, 5, 15, 33};
    static const std::vector<int32_t> pool = {18, 5, 4, 2};
    static const std::vector<int32_t> other = {1, 2, 4, 5};
    const std::string& head = n.member_ops.empty() ? n.ops : n.member_ops.front();
    const std::vector<int32_t>* table = &other;
    int32_t count = 1;
    const uint64_t h = mix(hash(n.name) ^ mix(s.seed));
    if (conv_head(head)) {
        table = &conv;
        count = 2 + static_cast<int32_t>(h % 3);
    } else if (gemm_head(head)) {
        table = &gemm;
        count = 1 + static_cast<int32_t>(h % 2);
    } else if (pooling(head)) {
        table = &pool;
        count = 1 + static_cast<int32_t>(h % 2);
    }
    std::vector<int32_t> out;
    for (int32_t k = 0; k < count; ++k) {
        out.push_back(s.tactics > 0 ? s.tactics : pick(*table, s.seed, n.name, static_cast<uint64_t>(k)));
    }
    return out;
}

}  // namespace

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t hash(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) {
        h = (h ^ c) * 0x100000001b3ULL;
    }
    return h;
}

std::string node_name(const Model& m, size_t i) {
    const Node& n = m.nodes[i];
    if (!n.name.empty()) {
        return n.name;
    }
    return "node_of_" + (n.outputs.empty() ? std::to_string(i) : n.outputs.front());
}

bool myelin_takes(const Model& m) {
    std::map<std::string, const Node*> producer;
    std::map<std::string, std::vector<const Node*>> consumers;
    int reduce_mean = 0, norm_math = 0;
    for (const Node& n : m.nodes) {
        if (one_of(n.op, {"LayerNormalization", "Attention", "MultiHeadAttention", "RMSNormalization",
                          "SkipLayerNormalization", "EmbedLayerNormalization", "GroupQueryAttention"})) {
            return true;
        }
        reduce_mean += n.op == "ReduceMean";
        norm_math += n.op == "Pow" || n.op == "Sqrt";
        for (const std::string& o : n.outputs) {
            producer[o] = &n;
        }
        for (const std::string& in : n.inputs) {
            consumers[in].push_back(&n);
        }
    }
    if (reduce_mean >= 2 && norm_math >= 1) {
        return true;  // LayerNorm decomposed: mean, variance, square root
    }
    // Attention: Softmax(scale/mask(MatMul(q, k))) feeding MatMul(., v).
    for (const Node& n : m.nodes) {
        if (n.op != "Softmax" || n.inputs.empty() || n.outputs.empty()) {
            continue;
        }
        const Node* in = producer.count(n.inputs[0]) ? producer[n.inputs[0]] : nullptr;
        for (int hops = 0; in != nullptr && hops < 3 && one_of(in->op, {"Div", "Mul", "Add", "Where", "Cast"}); ++hops) {
            in = !in->inputs.empty() && producer.count(in->inputs[0]) ? producer[in->inputs[0]] : nullptr;
        }
        if (in == nullptr || in->op != "MatMul") {
            continue;
        }
        for (const Node* c : consumers[n.outputs[0]]) {
            if (c->op == "MatMul") {
                return true;
            }
        }
    }
    return false;
}

Graph analyze(const Model& m, const Settings& s, Regime regime) {
    Graph g;
    g.layers = static_cast<int32_t>(m.nodes.size() + m.initializers.size());
    for (const Initializer& i : m.initializers) {
        int64_t n = 1;
        for (int64_t d : i.dims) {
            n *= d > 0 ? d : 1;
        }
        g.weight_bytes += static_cast<uint64_t>(n * type_bytes(i.type));
    }
    g.myelin = regime == Regime::kMyelin || (regime == Regime::kAuto && myelin_takes(m));
    const bool whole = regime == Regime::kMyelin;  // forced: Myelin takes the convolutions too

    // The optimized graph: fusions, with the nodes Myelin takes gathered into one ForeignNode
    // at the place of the first.
    std::map<std::string, int32_t> types;  // the initializers' and the network inputs' element types
    for (const Initializer& i : m.initializers) {
        types[i.name] = i.type;
    }
    for (const Value& v : m.inputs) {
        types.emplace(v.name, v.type);
    }
    const auto low = [&types](const Node& node) {
        for (const std::string& in : node.inputs) {
            const auto t = types.find(in);
            if (t != types.end() && (t->second == kOnnxFloat16 || t->second == kOnnxBfloat16)) {
                return true;
            }
        }
        return false;
    };
    std::vector<TimedNode> opt;
    int foreign = -1;
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const Node& node = m.nodes[i];
        if (removed(node.op)) {
            continue;
        }
        const std::string name = node_name(m, i);
        if (g.myelin && (whole || !(conv_head(node.op) || pooling(node.op)))) {
            if (foreign < 0) {
                foreign = static_cast<int>(opt.size());
                opt.emplace_back();
                opt.back().foreign = true;
            }
            TimedNode& f = opt[static_cast<size_t>(foreign)];
            f.members.push_back(name);
            f.member_ops.push_back(node.op);
            f.member_low.push_back(low(node));
            continue;
        }
        TimedNode t;
        t.name = name;
        t.ops = node.op;
        t.members.push_back(name);
        t.member_ops.push_back(node.op);
        t.member_low.push_back(low(node));
        if (conv_head(node.op) || gemm_head(node.op)) {
            int taken = 0;
            while (i + 1 < m.nodes.size()) {
                const int kind = follower(m.nodes[i + 1].op);
                if (kind == 0 || (taken & kind) != 0 || (kind == 1 && taken != 0)) {
                    break;
                }
                taken |= kind;
                ++i;
                t.name += " + " + node_name(m, i);
                t.ops += "+" + m.nodes[i].op;
                t.members.push_back(node_name(m, i));
                t.member_ops.push_back(m.nodes[i].op);
                t.member_low.push_back(low(m.nodes[i]));
            }
        }
        if (shuffle(node.op)) {
            continue;  // run as it is: nothing to time
        }
        opt.push_back(std::move(t));
    }
    if (foreign >= 0) {
        TimedNode& f = opt[static_cast<size_t>(foreign)];
        f.name = "{ForeignNode[" + f.members.front() + "..." + f.members.back() + "]}";
        f.ops = "ForeignNode";
        for (const std::string& op : f.member_ops) {
            f.ops += "+" + op;
        }
        g.myelin_nodes = static_cast<int32_t>(f.members.size());
    }
    if (opt.empty()) {
        // Nothing left to time: TensorRT still builds one layer.
        TimedNode t;
        t.name = "(Unnamed Layer* 0) [Identity]";
        t.ops = "Identity";
        opt.push_back(std::move(t));
    }
    for (size_t i = 0; i < opt.size(); ++i) {
        opt[i].index = static_cast<int32_t>(i);
        opt[i].evaluations = opt[i].foreign ? std::vector<int32_t>{1} : evaluations(opt[i], s);
    }
    g.nodes = std::move(opt);

    const int32_t timed = static_cast<int32_t>(g.nodes.size());
    g.timing_steps = 2 * timed + 2;
    if (g.myelin) {
        // As TensorRT 11.0 on a B200 reported MNIST once Myelin had it: a short tree.
        g.reformats.assign(static_cast<size_t>(std::max(3, timed + 2)), 1);
        g.refit_steps = 1;
        g.optimize_steps = 30;
        g.optimize_last = 29;
    } else {
        // 10.16.1's MNIST: 3, 6, 9, 6, 2, then 1 and 1.
        static const std::vector<int32_t> sizes = {3, 6, 9, 6, 2};
        for (int32_t r = 0; r < timed; ++r) {
            g.reformats.push_back(sizes[static_cast<size_t>(r) % sizes.size()]);
        }
        g.reformats.push_back(1);
        g.reformats.push_back(1);
    }
    return g;
}

}  // namespace TRTB_FAKE
}  // namespace trtb
