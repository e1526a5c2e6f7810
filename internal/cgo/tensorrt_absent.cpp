//go:build !tensorrt

// tensorrt_absent.cpp: the TensorRT backend of a binary built without the "tensorrt" build tag.
// It answers every request with TRTB_ERR_UNAVAILABLE and a message that says how to get one.

#include "trtb_internal.hpp"
#include "trtb_loader.h"

namespace trtb {

namespace {

const char kUnavailable[] =
    "this trtbuild was built without TensorRT; rebuild with -tags tensorrt (see README, "
    "Dockerfile.cuda) or use --backend sim";

}  // namespace

std::unique_ptr<Build> make_tensorrt_build(const trtb_options& /*options*/, trtb_status* status) {
    set_status(status, TRTB_ERR_UNAVAILABLE, kUnavailable);
    return nullptr;
}

int32_t tensorrt_available() {
    return 0;
}

int32_t tensorrt_version(int32_t /*device*/, trtb_version_info* /*info*/, trtb_status* status) {
    return set_status(status, TRTB_ERR_UNAVAILABLE, kUnavailable);
}

int32_t tensorrt_check_builder(int32_t /*device*/, trtb_status* status) {
    return set_status(status, TRTB_ERR_UNAVAILABLE, kUnavailable);
}

}  // namespace trtb

extern "C" void trtb_tensorrt_compiled(trtb_compiled_info* info) {
    if (info != nullptr) {
        info->tensorrt_version = 0;
        info->tensorrt_build = 0;
        info->cuda_version = 0;
    }
}
