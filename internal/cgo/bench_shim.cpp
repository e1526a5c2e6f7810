//go:build trtbench

// bench_shim.cpp: the test surface of trtb_bench.h over the TensorRT shim's own helpers, through
// the shim compiled against TensorRT 10's headers (tensorrt10.cpp). Test use only: the Go build
// tag "trtbench" compiles it, a trtbuild binary does not hold it.

#define TRTB_SHIM_MAJOR 10

#include "shim/tensorrt_shim.hpp"
#include "trtb_bench.h"

#include <string>
#include <vector>

namespace {

int32_t put(const std::string& text, char* out, uint32_t size) {
    trtb::trt10::copy_text(out, size, text.data(), text.size());
    return TRTB_OK;
}

}  // namespace

extern "C" int32_t trtb_test_shim_text(int32_t what, int32_t n, const char* const* texts, int32_t nb_texts,
                                       const int64_t* dims, char* out, uint32_t size) {
    if (out == nullptr || size == 0 || nb_texts < 0 || (nb_texts > 0 && texts == nullptr)) {
        return TRTB_ERR_INVALID_ARGUMENT;
    }
    try {
        std::vector<std::string> list;
        for (int32_t i = 0; i < nb_texts; ++i) {
            list.emplace_back(texts[i] != nullptr ? texts[i] : "");
        }
        switch (what) {
            case 0:
                return put(trtb::trt10::parser_code_name(static_cast<trtb_v10_nvonnxparser::ErrorCode>(n)), out, size);
            case 1: {
                std::string message;
                return put(trtb::trt10::check_versions(n, &message) ? std::string() : message, out, size);
            }
            case 2:
                return put(trtb::trt10::join_listed(list), out, size);
            case 3:
                if (nb_texts < 1) {
                    return TRTB_ERR_INVALID_ARGUMENT;
                }
                return put(trtb::trt10::one_line(texts[0]), out, size);
            case 4:
                if (n < 0 || (n > 0 && dims == nullptr)) {
                    return TRTB_ERR_INVALID_ARGUMENT;
                }
                return put(trtb::trt10::dims_text(dims, n), out, size);
            case 5:
                return put(std::to_string(trtb::trt10::to_trtb_severity(static_cast<trtb::trt10::Severity>(n))), out, size);
            default:
                return TRTB_ERR_INVALID_ARGUMENT;
        }
    } catch (...) {
        return TRTB_ERR_INTERNAL;
    }
}

extern "C" int32_t trtb_test_error_recorder(int32_t n, const int32_t* codes, int32_t nb_codes, trtb_test_recorder* out) {
    if (out == nullptr || n < 0 || nb_codes < 1 || codes == nullptr) {
        return TRTB_ERR_INVALID_ARGUMENT;
    }
    try {
        using trtb_v10_nvinfer1::ErrorCode;
        *out = trtb_test_recorder{};
        trtb::EventQueue queue;
        trtb::trt10::Logger log(queue, TRTB_SEVERITY_WARNING);
        trtb::trt10::ErrorRecorder recorder(log);
        out->fatal = 1;
        for (int32_t i = 0; i < n; ++i) {
            const std::string desc = "error " + std::to_string(i);
            if (!recorder.reportError(static_cast<ErrorCode>(codes[i % nb_codes]), desc.c_str())) {
                out->fatal = 0;
            }
        }
        out->nb_errors = recorder.getNbErrors();
        out->overflowed = recorder.hasOverflowed() ? 1 : 0;
        out->first_code = static_cast<int32_t>(recorder.getErrorCode(0));
        const char* first = recorder.getErrorDesc(0);
        trtb::trt10::copy_text(out->first_desc, sizeof(out->first_desc), first, std::string(first).size());
        const int32_t last_index = out->nb_errors - 1;
        out->last_code = static_cast<int32_t>(recorder.getErrorCode(last_index));
        const char* last = recorder.getErrorDesc(last_index);
        trtb::trt10::copy_text(out->last_desc, sizeof(out->last_desc), last, std::string(last).size());
        out->beyond_code = static_cast<int32_t>(recorder.getErrorCode(out->nb_errors));
        out->beyond_desc_empty = std::string(recorder.getErrorDesc(out->nb_errors)).empty() ? 1 : 0;
        out->negative_code = static_cast<int32_t>(recorder.getErrorCode(-1));
        uint64_t older = 0;
        out->logged = static_cast<int32_t>(log.errors_since(0, &older).size());
        out->logged_older = older;
        recorder.clear();
        out->cleared_nb_errors = recorder.getNbErrors();
        out->cleared_overflowed = recorder.hasOverflowed() ? 1 : 0;
        queue.close();
        return TRTB_OK;
    } catch (...) {
        return TRTB_ERR_INTERNAL;
    }
}
