// model.cpp: the stand-in parser's reading of an ONNX file (model.hpp): protobuf's wire format,
// walked field by field through a buffered file reader. Only the fields the stand-in needs are
// decoded; every other field (weights, doc strings) is skipped by seeking, so reading costs the
// same for a model of 2 KB and one of 2 GB, and a length that claims more than its message
// holds is an error, never an allocation. What protobuf would refuse is refused: a field past
// its message, a wire type it does not know, a group left open, messages nested deeper than its
// recursion limit (so the messages that can hold messages are walked, not skipped), a model over
// its 2 GB limit.

#include "model.hpp"

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX  // windows.h's min and max macros would stand for std::min and std::max
#endif
#include <windows.h>
#endif

namespace trtb {
namespace TRTB_FAKE {

namespace {

// kMaxText bounds a name or op type: longer is not a model the stand-in reads.
constexpr uint64_t kMaxText = 1 << 20;

// kRecursionLimit is protobuf's default recursion limit, which TensorRT's parser reads models
// with (onnx-tensorrt's deserializeOnnxModel sets only the total bytes limit): a message nested
// deeper than this below the model fails the parse. Every message counts, groups too: an If node
// holding an If node costs three levels (GraphProto, NodeProto, AttributeProto), so subgraphs
// fail at 33 deep.
constexpr int kRecursionLimit = 100;

// kMaxMessage is protobuf's limit on one message (INT_MAX bytes): a model file over 2 GB must
// keep its weights as external data.
constexpr uint64_t kMaxMessage = 2147483647;

// Msg names the messages of onnx.proto by what they hold, for the nesting depth that protobuf
// counts: kLeaf is one that holds no message.
enum class Msg : uint8_t {
    kLeaf,
    kModel,
    kGraph,
    kNode,
    kAttribute,
    kValueInfo,
    kType,
    kTypeTensor,  // TypeProto.Tensor and TypeProto.SparseTensor: a shape
    kTypeOf,      // TypeProto.Sequence and TypeProto.Optional: elem_type (1)
    kTypeMap,     // TypeProto.Map: value_type (2)
    kShape,       // TensorShapeProto: dims
    kTensor,      // TensorProto: segment, external_data, metadata_props
    kSparseTensor,
    kAnnotation,  // TensorAnnotation
    kTrainingInfo,
    kFunction,
    kNodeDevice,  // NodeDeviceConfigurationProto
    kShardingSpec,
    kShardedDim,
};

// kChildren is, for each message that holds messages, the fields (length-delimited) that hold
// them and what they hold (onnx.proto).
constexpr struct {
    Msg parent;
    uint32_t field;
    Msg child;
} kChildren[] = {
    {Msg::kModel, 7, Msg::kGraph}, {Msg::kModel, 8, Msg::kLeaf}, {Msg::kModel, 14, Msg::kLeaf},
    {Msg::kModel, 20, Msg::kTrainingInfo}, {Msg::kModel, 25, Msg::kFunction}, {Msg::kModel, 26, Msg::kLeaf},
    {Msg::kGraph, 1, Msg::kNode}, {Msg::kGraph, 5, Msg::kTensor}, {Msg::kGraph, 11, Msg::kValueInfo},
    {Msg::kGraph, 12, Msg::kValueInfo}, {Msg::kGraph, 13, Msg::kValueInfo}, {Msg::kGraph, 14, Msg::kAnnotation},
    {Msg::kGraph, 15, Msg::kSparseTensor}, {Msg::kGraph, 16, Msg::kLeaf},
    {Msg::kNode, 5, Msg::kAttribute}, {Msg::kNode, 9, Msg::kLeaf}, {Msg::kNode, 10, Msg::kNodeDevice},
    {Msg::kAttribute, 5, Msg::kTensor}, {Msg::kAttribute, 6, Msg::kGraph}, {Msg::kAttribute, 10, Msg::kTensor},
    {Msg::kAttribute, 11, Msg::kGraph}, {Msg::kAttribute, 14, Msg::kType}, {Msg::kAttribute, 15, Msg::kType},
    {Msg::kAttribute, 22, Msg::kSparseTensor}, {Msg::kAttribute, 23, Msg::kSparseTensor},
    {Msg::kValueInfo, 2, Msg::kType}, {Msg::kValueInfo, 4, Msg::kLeaf},
    {Msg::kType, 1, Msg::kTypeTensor}, {Msg::kType, 4, Msg::kTypeOf}, {Msg::kType, 5, Msg::kTypeMap},
    {Msg::kType, 7, Msg::kLeaf}, {Msg::kType, 8, Msg::kTypeTensor}, {Msg::kType, 9, Msg::kTypeOf},
    {Msg::kTypeTensor, 2, Msg::kShape},
    {Msg::kTypeOf, 1, Msg::kType},
    {Msg::kTypeMap, 2, Msg::kType},
    {Msg::kShape, 1, Msg::kLeaf},
    {Msg::kTensor, 3, Msg::kLeaf}, {Msg::kTensor, 13, Msg::kLeaf}, {Msg::kTensor, 16, Msg::kLeaf},
    {Msg::kSparseTensor, 1, Msg::kTensor}, {Msg::kSparseTensor, 2, Msg::kTensor},
    {Msg::kAnnotation, 2, Msg::kLeaf},
    {Msg::kTrainingInfo, 1, Msg::kGraph}, {Msg::kTrainingInfo, 2, Msg::kGraph}, {Msg::kTrainingInfo, 3, Msg::kLeaf},
    {Msg::kTrainingInfo, 4, Msg::kLeaf},
    {Msg::kFunction, 7, Msg::kNode}, {Msg::kFunction, 9, Msg::kLeaf}, {Msg::kFunction, 11, Msg::kAttribute},
    {Msg::kFunction, 12, Msg::kValueInfo}, {Msg::kFunction, 14, Msg::kLeaf},
    {Msg::kNodeDevice, 2, Msg::kShardingSpec},
    {Msg::kShardingSpec, 3, Msg::kLeaf}, {Msg::kShardingSpec, 4, Msg::kShardedDim},
    {Msg::kShardedDim, 2, Msg::kLeaf},
};

// child finds the message that field of parent holds; false for a field that holds none.
bool child(Msg parent, uint32_t field, Msg* out) {
    for (const auto& c : kChildren) {
        if (c.parent == parent && c.field == field) {
            *out = c.child;
            return true;
        }
    }
    return false;
}

// The fields read, by message (onnx.proto).
enum : uint32_t {
    kModelIrVersion = 1,
    kModelGraph = 7,
    kModelOpset = 8,
    kOpsetDomain = 1,
    kOpsetVersion = 2,
    kGraphNode = 1,
    kGraphInitializer = 5,
    kGraphInput = 11,
    kGraphOutput = 12,
    kNodeInput = 1,
    kNodeOutput = 2,
    kNodeName = 3,
    kNodeOp = 4,
    kNodeDomain = 7,
    kTensorDims = 1,
    kTensorType = 2,
    kTensorName = 8,
    kValueName = 1,
    kValueType = 2,
    kTypeTensor = 1,
    kTensorTypeElem = 1,
    kTensorTypeShape = 2,
    kShapeDim = 1,
    kDimValue = 1,
    kDimParam = 2,
};

enum : uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

std::FILE* open_file(const std::string& path) {
#ifdef _WIN32
    const int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.c_str(), -1, nullptr, 0);
    if (n <= 0) {
        return nullptr;
    }
    std::wstring wide(static_cast<size_t>(n), L'\0');
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.c_str(), -1, &wide[0], n);
    return _wfopen(wide.c_str(), L"rb");
#else
    return std::fopen(path.c_str(), "rb");
#endif
}

bool seek_to(std::FILE* f, uint64_t at) {
#ifdef _WIN32
    return _fseeki64(f, static_cast<__int64>(at), SEEK_SET) == 0;
#else
    return fseeko(f, static_cast<off_t>(at), SEEK_SET) == 0;
#endif
}

// WireReader reads a file through a buffer, from its start to size.
class WireReader {
public:
    WireReader(std::FILE* f, uint64_t size) : f_(f), size_(size), buf_(64 * 1024) {}

    uint64_t pos() const { return base_ + at_; }
    const std::string& error() const { return error_; }

    bool fail(std::string why) {
        if (error_.empty()) {
            error_ = std::move(why) + " at byte " + std::to_string(pos());
        }
        return false;
    }

    bool byte(uint8_t* b) {
        if (at_ == len_ && !refill()) {
            return false;
        }
        *b = static_cast<uint8_t>(buf_[at_++]);
        return true;
    }

    bool varint(uint64_t* v) {
        uint64_t out = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            uint8_t b = 0;
            if (!byte(&b)) {
                return fail("a number cut short");
            }
            out |= static_cast<uint64_t>(b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                *v = out;
                return true;
            }
        }
        return fail("a number longer than ten bytes");
    }

    // skip moves n bytes on, seeking past what is not buffered.
    bool skip(uint64_t n) {
        if (n <= len_ - at_) {
            at_ += static_cast<size_t>(n);
            return true;
        }
        const uint64_t to = pos() + n;
        if (to > size_ || !seek_to(f_, to)) {
            return fail("a field runs past the end of the file");
        }
        base_ = to;
        at_ = len_ = 0;
        return true;
    }

    bool text(uint64_t n, std::string* out) {
        if (n > kMaxText) {
            return fail("a name of " + std::to_string(n) + " bytes");
        }
        out->clear();
        out->reserve(static_cast<size_t>(n));
        for (uint64_t i = 0; i < n; ++i) {
            uint8_t b = 0;
            if (!byte(&b)) {
                return fail("a name cut short");
            }
            out->push_back(static_cast<char>(b));
        }
        return true;
    }

    // tag reads a field's tag inside a message that ends at end.
    bool tag(uint64_t end, uint32_t* field, uint32_t* wire) {
        uint64_t t = 0;
        if (!varint(&t) || pos() > end) {
            return fail("a field tag past its message");
        }
        if (t > 0xffffffffULL) {
            return fail("a field tag over 32 bits");
        }
        *field = static_cast<uint32_t>(t >> 3);
        *wire = static_cast<uint32_t>(t & 7);
        if (*field == 0) {
            return fail("field number 0");
        }
        return true;
    }

    // length reads a length-delimited field's length and checks it against end.
    bool length(uint64_t end, uint64_t* n) {
        if (!varint(n)) {
            return false;
        }
        if (pos() > end || *n > end - pos()) {
            return fail("a field of " + std::to_string(*n) + " bytes in a message with " +
                        std::to_string(pos() <= end ? end - pos() : 0) + " left");
        }
        return true;
    }

    bool skip_field(uint32_t wire, uint64_t end) {
        uint64_t n = 0;
        switch (wire) {
            case kVarint:
                return varint(&n) && (pos() <= end || fail("a number past its message"));
            case kFixed64:
                n = 8;
                break;
            case kFixed32:
                n = 4;
                break;
            case kBytes:
                if (!length(end, &n)) {
                    return false;
                }
                break;
            default:
                return fail("wire type " + std::to_string(wire) + ", which protobuf does not know");
        }
        if (n > end - pos()) {
            return fail("a field past its message");
        }
        return skip(n);
    }

private:
    bool refill() {
        base_ += len_;
        at_ = 0;
        len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
        return len_ > 0;
    }

    std::FILE* f_;
    uint64_t size_;
    std::vector<char> buf_;
    uint64_t base_ = 0;  // the file offset of buf_[0]
    size_t at_ = 0, len_ = 0;
    std::string error_;
};

// WireParser decodes the fields of model.hpp, each message bounded by where it ends and at the
// depth protobuf counts for it (the model 0, its graph 1, ...). A field it does not decode is
// skipped, or walked when it holds messages (walk).
class WireParser {
public:
    WireParser(WireReader& r, Model& m) : r_(r), m_(m) {}

    bool model(uint64_t end) {
        bool graph = false;
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            if (field == kModelIrVersion && wire == kVarint) {
                if (!r_.varint(&n)) {
                    return false;
                }
                m_.ir_version = static_cast<int64_t>(n);
            } else if (field == kModelGraph && wire == kBytes) {
                if (!r_.length(end, &n) || !this->graph(r_.pos() + n, 1)) {
                    return false;
                }
                graph = true;
            } else if (field == kModelOpset && wire == kBytes) {
                if (!r_.length(end, &n) || !opset(r_.pos() + n)) {
                    return false;
                }
            } else if (!other(Msg::kModel, field, wire, end, 0)) {
                return false;
            }
        }
        if (m_.ir_version <= 0) {
            return r_.fail("no IR version: not an ONNX model");
        }
        if (!graph) {
            return r_.fail("no graph");
        }
        return true;
    }

private:
    bool string_field(uint64_t end, std::string* out) {
        uint64_t n = 0;
        return r_.length(end, &n) && r_.text(n, out);
    }

    // other skips a field of a message of kind in that ends at end, at depth: a field that
    // holds a message is walked, a group is skipped to its end, both one level deeper.
    bool other(Msg kind, uint32_t field, uint32_t wire, uint64_t end, int depth) {
        Msg c = Msg::kLeaf;
        if (wire == kBytes && child(kind, field, &c)) {
            uint64_t n = 0;
            return r_.length(end, &n) && walk(c, r_.pos() + n, depth + 1);
        }
        if (wire == kStartGroup) {
            return group(field, end, depth + 1);
        }
        if (wire == kEndGroup) {
            return r_.fail("a group ends that was not started");
        }
        return r_.skip_field(wire, end);
    }

    // walk reads through a message of kind at depth, for the messages nested in it.
    bool walk(Msg kind, uint64_t end, int depth) {
        if (depth > kRecursionLimit) {
            return r_.fail("messages nested deeper than protobuf's recursion limit of " +
                           std::to_string(kRecursionLimit));
        }
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire) || !other(kind, field, wire, end, depth)) {
                return false;
            }
        }
        return true;
    }

    // group skips an unknown group (field) at depth, up to its end tag.
    bool group(uint32_t field, uint64_t end, int depth) {
        if (depth > kRecursionLimit) {
            return r_.fail("groups nested deeper than protobuf's recursion limit of " +
                           std::to_string(kRecursionLimit));
        }
        for (;;) {
            if (r_.pos() >= end) {
                return r_.fail("a group left open");
            }
            uint32_t f = 0, wire = 0;
            if (!r_.tag(end, &f, &wire)) {
                return false;
            }
            if (wire == kEndGroup) {
                return f == field || r_.fail("a group ended by another's end tag");
            }
            if (!other(Msg::kLeaf, f, wire, end, depth)) {
                return false;
            }
        }
    }

    bool opset(uint64_t end) {
        std::string domain;
        uint64_t version = 0;
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            bool ok = true;
            if (field == kOpsetDomain && wire == kBytes) {
                ok = string_field(end, &domain);
            } else if (field == kOpsetVersion && wire == kVarint) {
                ok = r_.varint(&version);
            } else {
                ok = other(Msg::kLeaf, field, wire, end, 1);
            }
            if (!ok) {
                return false;
            }
        }
        if (domain.empty() || domain == "ai.onnx") {
            m_.opset = static_cast<int64_t>(version);
        }
        return true;
    }

    bool graph(uint64_t end, int depth) {
        std::vector<Value> inputs;
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (wire == kBytes && field == kGraphNode) {
                m_.nodes.emplace_back();
                ok = r_.length(end, &n) && node(r_.pos() + n, &m_.nodes.back(), depth + 1);
            } else if (wire == kBytes && field == kGraphInitializer) {
                m_.initializers.emplace_back();
                ok = r_.length(end, &n) && tensor(r_.pos() + n, &m_.initializers.back(), depth + 1);
            } else if (wire == kBytes && (field == kGraphInput || field == kGraphOutput)) {
                std::vector<Value>& to = field == kGraphInput ? inputs : m_.outputs;
                to.emplace_back();
                ok = r_.length(end, &n) && value(r_.pos() + n, &to.back(), depth + 1);
            } else {
                ok = other(Msg::kGraph, field, wire, end, depth);
            }
            if (!ok) {
                return false;
            }
        }
        // Before IR version 4 the initializers were listed among the inputs too.
        for (Value& in : inputs) {
            bool initializer = false;
            for (const Initializer& i : m_.initializers) {
                initializer = initializer || i.name == in.name;
            }
            if (!initializer) {
                m_.inputs.push_back(std::move(in));
            }
        }
        return true;
    }

    // node reads a node of the main graph; its attributes (and the subgraphs in them, which
    // the stand-in does not time) are walked.
    bool node(uint64_t end, Node* out, int depth) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            bool ok = true;
            if (wire == kBytes && (field == kNodeInput || field == kNodeOutput)) {
                std::vector<std::string>& to = field == kNodeInput ? out->inputs : out->outputs;
                to.emplace_back();
                ok = string_field(end, &to.back());
            } else if (wire == kBytes && field == kNodeName) {
                ok = string_field(end, &out->name);
            } else if (wire == kBytes && field == kNodeOp) {
                ok = string_field(end, &out->op);
            } else if (wire == kBytes && field == kNodeDomain) {
                ok = string_field(end, &out->domain);
            } else {
                ok = other(Msg::kNode, field, wire, end, depth);  // attributes, doc strings
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool tensor(uint64_t end, Initializer* out, int depth) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t v = 0;
            bool ok = true;
            if (field == kTensorDims && wire == kVarint) {
                ok = r_.varint(&v);
                out->dims.push_back(static_cast<int64_t>(v));
            } else if (field == kTensorDims && wire == kBytes) {
                uint64_t n = 0;
                ok = r_.length(end, &n);
                const uint64_t stop = r_.pos() + n;
                while (ok && r_.pos() < stop) {
                    ok = r_.varint(&v);
                    out->dims.push_back(static_cast<int64_t>(v));
                }
                ok = ok && (r_.pos() == stop || r_.fail("packed dimensions past their field"));
            } else if (field == kTensorType && wire == kVarint) {
                ok = r_.varint(&v);
                out->type = static_cast<int32_t>(v);
            } else if (field == kTensorName && wire == kBytes) {
                ok = string_field(end, &out->name);
            } else {
                ok = other(Msg::kTensor, field, wire, end, depth);  // the data: raw, typed or external
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool value(uint64_t end, Value* out, int depth) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (field == kValueName && wire == kBytes) {
                ok = string_field(end, &out->name);
            } else if (field == kValueType && wire == kBytes) {
                ok = r_.length(end, &n) && type(r_.pos() + n, out, depth + 1);
            } else {
                ok = other(Msg::kValueInfo, field, wire, end, depth);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool type(uint64_t end, Value* out, int depth) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (field == kTypeTensor && wire == kBytes) {
                ok = r_.length(end, &n) && tensor_type(r_.pos() + n, out, depth + 1);
            } else {
                ok = other(Msg::kType, field, wire, end, depth);  // sequences, maps, optionals: not tensors
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool tensor_type(uint64_t end, Value* out, int depth) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (field == kTensorTypeElem && wire == kVarint) {
                ok = r_.varint(&n);
                out->type = static_cast<int32_t>(n);
            } else if (field == kTensorTypeShape && wire == kBytes) {
                out->has_shape = true;
                ok = r_.length(end, &n) && shape(r_.pos() + n, out, depth + 1);
            } else {
                ok = other(Msg::kTypeTensor, field, wire, end, depth);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool shape(uint64_t end, Value* out, int depth) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (field == kShapeDim && wire == kBytes) {
                ok = r_.length(end, &n) && dim(r_.pos() + n, out, depth + 1);
            } else {
                ok = other(Msg::kShape, field, wire, end, depth);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool dim(uint64_t end, Value* out, int depth) {
        int64_t d = -1;  // a named dimension, or none given
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t v = 0;
            bool ok = true;
            if (field == kDimValue && wire == kVarint) {
                ok = r_.varint(&v);
                d = static_cast<int64_t>(v);
            } else if (field == kDimParam && wire == kBytes) {
                ok = r_.skip_field(wire, end);
                d = -1;
            } else {
                ok = other(Msg::kLeaf, field, wire, end, depth);
            }
            if (!ok) {
                return false;
            }
        }
        out->dims.push_back(d < 0 ? -1 : d);
        return true;
    }

    WireReader& r_;
    Model& m_;
};

}  // namespace

int64_t type_bytes(int32_t type) {
    switch (type) {
        case kOnnxUint8:
        case kOnnxInt8:
        case kOnnxBool:
        case kOnnxFloat8E4M3FN:
        case kOnnxInt4:
            return 1;
        case kOnnxFloat16:
        case kOnnxBfloat16:
            return 2;
        case kOnnxInt64:
            return 8;
        default:
            return 4;
    }
}

ReadOutcome read_model(const std::string& path, Model* out, std::string* why) {
    errno = 0;
    std::FILE* f = open_file(path);
    if (f == nullptr) {
        *why = "cannot open " + path;
        return errno == ENOENT ? ReadOutcome::kMissing : ReadOutcome::kUnreadable;
    }
    bool ok = false;
#ifdef _WIN32
    ok = _fseeki64(f, 0, SEEK_END) == 0;
    const __int64 end = ok ? _ftelli64(f) : -1;
#else
    ok = fseeko(f, 0, SEEK_END) == 0;
    const off_t end = ok ? ftello(f) : -1;
#endif
    if (!ok || end < 0 || !seek_to(f, 0)) {
        std::fclose(f);
        *why = "cannot read " + path;
        return ReadOutcome::kUnreadable;
    }
    const uint64_t size = static_cast<uint64_t>(end);
    if (size > kMaxMessage) {
        std::fclose(f);
        *why = "a model of " + std::to_string(size) + " bytes, over protobuf's limit of " +
               std::to_string(kMaxMessage);
        return ReadOutcome::kMalformed;
    }
    Model m;
    m.file_bytes = size;
    m.path = path;
    WireReader r(f, size);
    WireParser p(r, m);
    ok = p.model(size);
    std::fclose(f);
    if (!ok) {
        *why = r.error();
        return ReadOutcome::kMalformed;
    }
    *out = std::move(m);
    return ReadOutcome::kRead;
}

}  // namespace TRTB_FAKE
}  // namespace trtb
