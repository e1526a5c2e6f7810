// model.cpp: the stand-in parser's reading of an ONNX file (model.hpp): protobuf's wire format,
// walked field by field through a buffered file reader. Only the fields the stand-in needs are
// decoded; every other field (weights, attributes and the subgraphs in them, doc strings) is
// skipped by seeking, so reading costs the same for a model of 2 KB and one of 2 GB, and a
// length that claims more than its message holds is an error, never an allocation.

#include "model.hpp"

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

enum : uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

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
                return fail("wire type " + std::to_string(wire) + ", which ONNX does not use");
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

// WireParser decodes the fields of model.hpp, each message bounded by where it ends.
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
                if (!r_.length(end, &n) || !this->graph(r_.pos() + n)) {
                    return false;
                }
                graph = true;
            } else if (field == kModelOpset && wire == kBytes) {
                if (!r_.length(end, &n) || !opset(r_.pos() + n)) {
                    return false;
                }
            } else if (!r_.skip_field(wire, end)) {
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
                ok = r_.skip_field(wire, end);
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

    bool graph(uint64_t end) {
        std::vector<Value> inputs;
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (wire != kBytes) {
                ok = r_.skip_field(wire, end);
            } else if (field == kGraphNode) {
                m_.nodes.emplace_back();
                ok = r_.length(end, &n) && node(r_.pos() + n, &m_.nodes.back());
            } else if (field == kGraphInitializer) {
                m_.initializers.emplace_back();
                ok = r_.length(end, &n) && tensor(r_.pos() + n, &m_.initializers.back());
            } else if (field == kGraphInput || field == kGraphOutput) {
                std::vector<Value>& to = field == kGraphInput ? inputs : m_.outputs;
                to.emplace_back();
                ok = r_.length(end, &n) && value(r_.pos() + n, &to.back());
            } else {
                ok = r_.skip_field(wire, end);
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

    bool node(uint64_t end, Node* out) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            bool ok = true;
            if (wire != kBytes) {
                ok = r_.skip_field(wire, end);
            } else if (field == kNodeInput || field == kNodeOutput) {
                std::vector<std::string>& to = field == kNodeInput ? out->inputs : out->outputs;
                to.emplace_back();
                ok = string_field(end, &to.back());
            } else if (field == kNodeName) {
                ok = string_field(end, &out->name);
            } else if (field == kNodeOp) {
                ok = string_field(end, &out->op);
            } else if (field == kNodeDomain) {
                ok = string_field(end, &out->domain);
            } else {
                ok = r_.skip_field(wire, end);  // attributes (and the subgraphs in them), doc strings
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool tensor(uint64_t end, Initializer* out) {
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
                ok = r_.skip_field(wire, end);  // the data: raw, typed or external
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool value(uint64_t end, Value* out) {
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
                ok = r_.length(end, &n) && type(r_.pos() + n, out);
            } else {
                ok = r_.skip_field(wire, end);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool type(uint64_t end, Value* out) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (field == kTypeTensor && wire == kBytes) {
                ok = r_.length(end, &n) && tensor_type(r_.pos() + n, out);
            } else {
                ok = r_.skip_field(wire, end);  // sequences, maps, optionals: not tensors
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool tensor_type(uint64_t end, Value* out) {
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
                ok = r_.length(end, &n) && shape(r_.pos() + n, out);
            } else {
                ok = r_.skip_field(wire, end);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool shape(uint64_t end, Value* out) {
        while (r_.pos() < end) {
            uint32_t field = 0, wire = 0;
            if (!r_.tag(end, &field, &wire)) {
                return false;
            }
            uint64_t n = 0;
            bool ok = true;
            if (field == kShapeDim && wire == kBytes) {
                ok = r_.length(end, &n) && dim(r_.pos() + n, out);
            } else {
                ok = r_.skip_field(wire, end);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    bool dim(uint64_t end, Value* out) {
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
                ok = r_.skip_field(wire, end);
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

bool read_model(const std::string& path, Model* out, std::string* why) {
    std::FILE* f = open_file(path);
    if (f == nullptr) {
        *why = "cannot open " + path;
        return false;
    }
    uint64_t size = 0;
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
        return false;
    }
    size = static_cast<uint64_t>(end);
    Model m;
    m.file_bytes = size;
    WireReader r(f, size);
    WireParser p(r, m);
    ok = p.model(size);
    std::fclose(f);
    if (!ok) {
        *why = r.error();
        return false;
    }
    *out = std::move(m);
    return true;
}

}  // namespace TRTB_FAKE
}  // namespace trtb
