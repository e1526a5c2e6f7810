// parser.cpp: the stand-in's ONNX parser (objects.hpp). It reads the model (model.cpp) and
// fills the network with it; what TensorRT's parser would refuse it refuses with the parser's
// error codes: a file that is not a model (kMODEL_DESERIALIZE_FAILED), an input without a shape
// (kINVALID_GRAPH), a node of a domain no importer serves and no plugin registered
// (kUNSUPPORTED_NODE), a model of an opset older than TensorRT's parser reads (kINVALID_GRAPH).

#include "objects.hpp"

#include <string>

namespace trtb {
namespace TRTB_FAKE {

namespace {

// kMinOpset is the oldest opset TensorRT's ONNX parser imports (docs: "opset 9 to 24").
constexpr int64_t kMinOpset = 9;

bool standard_domain(const std::string& d) {
    return d.empty() || d == "ai.onnx";
}

}  // namespace

Parser::Parser(Network& network, nvinfer1::ILogger* logger)
    : IParserStubs(network.impl().context()), network_(network), logger_(logger) {}

void Parser::add_error(nvonnxparser::ErrorCode code, std::string desc, int node, std::string name, std::string op) {
    errors_.push_back(std::make_unique<ParserError>(network_.impl().context(), code, std::move(desc), node, std::move(name),
                                                    std::move(op)));
}

nvonnxparser::IParserError const* Parser::getError(int index) const noexcept {
    return index >= 0 && static_cast<size_t>(index) < errors_.size() ? errors_[static_cast<size_t>(index)].get() : nullptr;
}

char const* const* Parser::getUsedVCPluginLibraries(int64_t& nb) const noexcept {
    nb = 0;  // the stand-in imports no plugin layer
    return nullptr;
}

bool Parser::parseFromFile(char const* path, int verbosity) noexcept {
    try {
        return parse(path != nullptr ? path : "", verbosity);
    } catch (const std::exception& e) {
        errors_.clear();
        add_error(nvonnxparser::ErrorCode::kINTERNAL_ERROR, std::string("internal error: ") + e.what());
    } catch (...) {
        errors_.clear();
        add_error(nvonnxparser::ErrorCode::kINTERNAL_ERROR, "internal error");
    }
    return false;
}

bool Parser::parse(const std::string& path, int verbosity) {
    auto log = [&](Severity s, const std::string& text) {
        if (logger_ != nullptr && static_cast<int>(s) <= verbosity) {
            logger_->log(s, text.c_str());
        }
    };
    log(Severity::kINFO, "----------------------------------------------------------------");
    log(Severity::kINFO, "Input filename:   " + path);
    Model m;
    std::string why;
    if (!read_model(path, &m, &why)) {
        add_error(nvonnxparser::ErrorCode::kMODEL_DESERIALIZE_FAILED,
                  "Failed to parse ONNX model from file: " + path + ": " + why);
        return false;
    }
    log(Severity::kINFO, "ONNX IR version:  " + std::to_string(m.ir_version));
    log(Severity::kINFO, "Opset version:    " + std::to_string(m.opset));
    log(Severity::kINFO, "----------------------------------------------------------------");
    if (m.opset != 0 && m.opset < kMinOpset) {
        add_error(nvonnxparser::ErrorCode::kINVALID_GRAPH,
                  "TensorRT's ONNX parser reads opset " + std::to_string(kMinOpset) + " and newer; the model is of opset " +
                      std::to_string(m.opset));
        return false;
    }
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const Node& n = m.nodes[i];
        if (!standard_domain(n.domain)) {
            const std::string name = node_name(m, i);
            log(Severity::kWARNING, "No importer registered for op: " + n.op + ". Attempting to import as plugin.");
            add_error(nvonnxparser::ErrorCode::kUNSUPPORTED_NODE,
                      "Plugin not found, are the plugin name, version, and namespace correct? (op " + n.op + " of domain " +
                          n.domain + ")",
                      static_cast<int>(i), name, n.op);
            return false;
        }
    }
    const size_t nodes = m.nodes.size();
    if (!network_.impl().fill(std::move(m), &why)) {
        add_error(nvonnxparser::ErrorCode::kINVALID_GRAPH, why);
        return false;
    }
    log(Severity::kVERBOSE, "Parsed " + std::to_string(nodes) + " nodes of " + path);
    return true;
}

}  // namespace TRTB_FAKE
}  // namespace trtb
