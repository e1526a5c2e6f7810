// model.hpp: what the stand-in's ONNX parser reads of a model: the nodes (names, op types,
// domains, the tensors they take and make), the initializers' names, types and dimensions,
// and the graph's inputs and outputs with their types and shapes. Nothing else is read, and
// no weight byte is: a model of gigabytes is skipped through, not loaded.
#ifndef TRTB_FAKE_MODEL_HPP
#define TRTB_FAKE_MODEL_HPP

#include "trtfake.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace trtb {
namespace TRTB_FAKE {

// onnx_type is an ONNX TensorProto.DataType value.
enum OnnxType : int32_t {
    kOnnxUndefined = 0,
    kOnnxFloat = 1,
    kOnnxUint8 = 2,
    kOnnxInt8 = 3,
    kOnnxInt32 = 6,
    kOnnxInt64 = 7,
    kOnnxBool = 9,
    kOnnxFloat16 = 10,
    kOnnxBfloat16 = 16,
    kOnnxFloat8E4M3FN = 17,
    kOnnxInt4 = 22,
};

// Value is a graph input or output: its type and, when the model gives one, its shape (-1 for
// a dimension that is named or unknown).
struct Value {
    std::string name;
    int32_t type = kOnnxUndefined;
    bool has_shape = false;
    std::vector<int64_t> dims;
};

// Node is one node of the main graph.
struct Node {
    std::string name;  // may be empty
    std::string op;
    std::string domain;
    std::vector<std::string> inputs, outputs;
};

// Initializer is one initializer (weights), without its data.
struct Initializer {
    std::string name;
    int32_t type = kOnnxUndefined;
    std::vector<int64_t> dims;
};

// Model is what read_model read.
struct Model {
    int64_t ir_version = 0;
    int64_t opset = 0;  // of the default domain
    std::vector<Node> nodes;
    std::vector<Initializer> initializers;
    std::vector<Value> inputs, outputs;  // inputs without the initializers listed as inputs
    uint64_t file_bytes = 0;
    std::string path;  // the file it was read from
};

// ReadOutcome is what read_model made of a file.
enum class ReadOutcome {
    kRead,
    kMissing,     // there is no such file
    kUnreadable,  // it could not be opened or read
    kMalformed,   // it is not an ONNX model: bad wire format, a field running past its message, no graph
};

// read_model reads the model at path (UTF-8); when it is not read, *why says why.
ReadOutcome read_model(const std::string& path, Model* out, std::string* why);

// type_bytes is the size of one element of an ONNX type (half a byte for 4-bit types rounds
// up to 1); 4 for what is not known.
int64_t type_bytes(int32_t type);

}  // namespace TRTB_FAKE
}  // namespace trtb

#endif  // TRTB_FAKE_MODEL_HPP
