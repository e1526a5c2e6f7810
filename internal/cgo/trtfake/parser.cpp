// parser.cpp: the stand-in's ONNX parser (objects.hpp). It reads the model (model.cpp) and
// fills the network with it. What TensorRT's parser refuses it refuses with that parser's error
// (onnx-tensorrt of the TensorRT 10.1x releases: ModelImporter.cpp, onnxProtoUtils.hpp,
// onnxOpCheckers.cpp): one IParserError a failure, its desc as the parser's assertion macros
// spell it ("Assertion failed: CONDITION: MESSAGE", or the bare condition for a static check),
// its code, and for a node the node's index, name and operator:
//   - a file that is not there, or cannot be read: kINVALID_VALUE;
//   - a file protobuf cannot parse as a ModelProto: kMODEL_DESERIALIZE_FAILED;
//   - a node that no importer serves and no registered plugin implements (the stand-in
//     registers none): the static check of the plugin fallback, kINVALID_NODE, one error a node;
//   - an input without a shape (the stand-in's own limit): kINVALID_GRAPH.

#include "objects.hpp"

#include <string>

namespace trtb {
namespace TRTB_FAKE {

namespace {

// kOldestOpset: TensorRT warns of a model of an older ai.onnx opset, and parses on.
constexpr int64_t kOldestOpset = 7;

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
    Model m;
    std::string why;
    switch (read_model(path, &m, &why)) {
        case ReadOutcome::kRead:
            break;
        case ReadOutcome::kMissing:
            add_error(nvonnxparser::ErrorCode::kINVALID_VALUE,
                      "Assertion failed: stat(onnxModelFile, &sb) == 0 && S_ISREG(sb.st_mode): Input file cannot be "
                      "found, or is not a regular file: " +
                          path);
            return false;
        case ReadOutcome::kUnreadable:
            add_error(nvonnxparser::ErrorCode::kINVALID_VALUE,
                      "Assertion failed: ParseFromFileAsBinary(&mOnnxModel, onnxModelFile): Cannot read from input "
                      "file: " +
                          path);
            return false;
        case ReadOutcome::kMalformed:
            // protobuf says no more than that it failed: why, the stand-in's own reason, stays unsaid.
            add_error(nvonnxparser::ErrorCode::kMODEL_DESERIALIZE_FAILED,
                      "Assertion failed: model->ParseFromCodedStream(&codedInput): Failed to parse the ONNX model.");
            return false;
    }
    log(Severity::kINFO, "----------------------------------------------------------------");
    log(Severity::kINFO, "Input filename:   " + path);
    log(Severity::kINFO, "ONNX IR version:  " + std::to_string(m.ir_version));
    log(Severity::kINFO, "Opset version:    " + std::to_string(m.opset));
    log(Severity::kINFO, "----------------------------------------------------------------");
    if (m.opset != 0 && m.opset < kOldestOpset) {
        log(Severity::kWARNING,
            "TensorRT supports ONNX graphs generated with at least opset 7. Models using older opsets are not "
            "guaranteed to work.");
    }
    // The static checks, node by node: a node of a domain of its own is taken for a plugin's,
    // and the stand-in has none.
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const Node& n = m.nodes[i];
        if (!standard_domain(n.domain)) {
            log(Severity::kVERBOSE, "No checker registered for op: " + n.op + ". Attempting to check as plugin.");
            add_error(nvonnxparser::ErrorCode::kINVALID_NODE,
                      "creator && \"Plugin not found, are the plugin name, version, and namespace correct?\"",
                      static_cast<int>(i), n.name, n.op);
        }
    }
    if (!errors_.empty()) {
        return false;
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
