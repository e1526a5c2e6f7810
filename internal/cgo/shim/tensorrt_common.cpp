// tensorrt_common.cpp: text helpers, the version check and enum mappings of the TensorRT
// backend (see tensorrt_shim.hpp for how the backend is split and its rules).

#include "tensorrt_shim.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace trtb {
namespace TRTB_SHIM {

// ---------------------------------------------------------------------------------------------
// Text helpers.

Version decode_version(int32_t v) {
    Version out;
    if (v >= 10000) {
        out.major = v / 10000;
        out.minor = v / 100 % 100;
    } else {
        out.major = v / 1000;
        out.minor = v / 100 % 10;
    }
    out.patch = v % 100;
    return out;
}

std::string version_text(int32_t v) {
    const Version d = decode_version(v);
    return std::to_string(d.major) + "." + std::to_string(d.minor) + "." + std::to_string(d.patch);
}

// check_versions refuses a library of another major than the headers, with
// internal/trt.CheckVersions' message: the interfaces the backend implements change layout
// between majors and enum values were renumbered in 11.0. The minor is Go's to judge: Go
// installs no library CheckVersions refuses, and refuses the options an older minor lacks
// (trt.CheckFlags) before a build reaches the backend.
bool check_versions(int32_t loaded, std::string* message) {
    if (loaded <= 0) {
        *message = "loaded TensorRT library version: libnvinfer reported version " +
                   std::to_string(loaded) + ", not a version number";
        return false;
    }
    const Version c = decode_version(kCompiledVersion);
    const Version l = decode_version(loaded);
    if (c.major == l.major) {
        return true;
    }
    // The message names the library and the fix as internal/trt's does on this OS.
#ifdef _WIN32
    *message = "TensorRT version mismatch: trtbuild was compiled against TensorRT " + version_text(kCompiledVersion) +
               " but loaded nvinfer " + version_text(loaded) + "; point --tensorrt-lib at the folder of the TensorRT " +
               std::to_string(c.major) + " DLLs or rebuild trtbuild with the TensorRT " + std::to_string(l.major) +
               " headers";
#else
    *message = "TensorRT version mismatch: trtbuild was compiled against TensorRT " + version_text(kCompiledVersion) +
               " but loaded libnvinfer " + version_text(loaded) + "; put the TensorRT " + std::to_string(c.major) +
               " libraries first on LD_LIBRARY_PATH or rebuild trtbuild with the TensorRT " + std::to_string(l.major) +
               " headers";
#endif
    return false;
}

// one_line turns a message from TensorRT into one line: line breaks and tabs become spaces,
// and spaces at either end go.
std::string one_line(const char* text) {
    std::string s = text != nullptr ? text : "";
    for (char& ch : s) {
        if (ch == '\n' || ch == '\r' || ch == '\t') {
            ch = ' ';
        }
    }
    const size_t first = s.find_first_not_of(' ');
    if (first == std::string::npos) {
        return "";
    }
    const size_t last = s.find_last_not_of(' ');
    return s.substr(first, last - first + 1);
}

// join_listed joins texts with "; ", quoting at most kMaxListed of them.
std::string join_listed(const std::vector<std::string>& texts) {
    std::string out;
    for (size_t i = 0; i < texts.size() && i < kMaxListed; ++i) {
        if (!out.empty()) {
            out += "; ";
        }
        out += texts[i];
    }
    if (texts.size() > kMaxListed) {
        out += "; and " + std::to_string(texts.size() - kMaxListed) + " more";
    }
    return out;
}  // coverage: the unwinding of an allocation failure

// dims_text formats dimensions the way the shape flags take them: 1x3x224x224, or "scalar".
std::string dims_text(const int64_t* d, int32_t n) {
    if (n == 0) {
        return "scalar";
    }
    std::string out;
    for (int32_t i = 0; i < n; ++i) {
        if (i > 0) {
            out += 'x';
        }
        out += d[i] < 0 ? std::string("?") : std::to_string(d[i]);
    }
    return out;
}

// copy_text copies the NUL-terminated or full src (of src_size bytes) into dst (of dst_size
// bytes), cut to fit and always NUL-terminated.
void copy_text(char* dst, size_t dst_size, const char* src, size_t src_size) {
    size_t n = 0;
    while (n < src_size && n + 1 < dst_size && src[n] != '\0') {
        ++n;
    }
    std::memcpy(dst, src, n);
    dst[n] = '\0';
}

// ---------------------------------------------------------------------------------------------
// Enum mappings. TensorRT's values stay on this side of trtb.h.

int32_t to_trtb_severity(Severity s) {
    switch (s) {
        case Severity::kINTERNAL_ERROR:
            return TRTB_SEVERITY_INTERNAL_ERROR;
        case Severity::kERROR:
            return TRTB_SEVERITY_ERROR;
        case Severity::kWARNING:
            return TRTB_SEVERITY_WARNING;
        case Severity::kINFO:
            return TRTB_SEVERITY_INFO;
        case Severity::kVERBOSE:
            return TRTB_SEVERITY_VERBOSE;
    }
    return TRTB_SEVERITY_VERBOSE;
}

Severity to_trt_severity(int32_t s) {
    switch (s) {
        case TRTB_SEVERITY_INTERNAL_ERROR:
            return Severity::kINTERNAL_ERROR;
        case TRTB_SEVERITY_ERROR:
            return Severity::kERROR;
        case TRTB_SEVERITY_WARNING:
            return Severity::kWARNING;
        case TRTB_SEVERITY_INFO:
            return Severity::kINFO;
        default:
            return Severity::kVERBOSE;
    }
}

// parser_code_name names an ONNX parser error code as the parser's enum does, without the k.
std::string parser_code_name(nvonnxparser::ErrorCode code) {
    using nvonnxparser::ErrorCode;
    switch (code) {
        case ErrorCode::kSUCCESS:
            return "SUCCESS";
        case ErrorCode::kINTERNAL_ERROR:
            return "INTERNAL_ERROR";
        case ErrorCode::kMEM_ALLOC_FAILED:
            return "MEM_ALLOC_FAILED";
        case ErrorCode::kMODEL_DESERIALIZE_FAILED:
            return "MODEL_DESERIALIZE_FAILED";
        case ErrorCode::kINVALID_VALUE:
            return "INVALID_VALUE";
        case ErrorCode::kINVALID_GRAPH:
            return "INVALID_GRAPH";
        case ErrorCode::kINVALID_NODE:
            return "INVALID_NODE";
        case ErrorCode::kUNSUPPORTED_GRAPH:
            return "UNSUPPORTED_GRAPH";
        case ErrorCode::kUNSUPPORTED_NODE:
            return "UNSUPPORTED_NODE";
        case ErrorCode::kUNSUPPORTED_NODE_ATTR:
            return "UNSUPPORTED_NODE_ATTR";
        case ErrorCode::kUNSUPPORTED_NODE_INPUT:
            return "UNSUPPORTED_NODE_INPUT";
        case ErrorCode::kUNSUPPORTED_NODE_DATATYPE:
            return "UNSUPPORTED_NODE_DATATYPE";
        case ErrorCode::kUNSUPPORTED_NODE_DYNAMIC:
            return "UNSUPPORTED_NODE_DYNAMIC";
        case ErrorCode::kUNSUPPORTED_NODE_SHAPE:
            return "UNSUPPORTED_NODE_SHAPE";
        case ErrorCode::kREFIT_FAILED:
            return "REFIT_FAILED";
    }
    return "error code " + std::to_string(static_cast<int32_t>(code));
}

}  // namespace TRTB_SHIM
}  // namespace trtb
