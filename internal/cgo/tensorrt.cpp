// tensorrt.cpp: the TensorRT backend behind trtb.h: the shim of the major of the library the
// worker installed (trtb_loader.h), TensorRT 10 or 11, both compiled into every binary
// (tensorrt10.cpp, tensorrt11.cpp).

#include "shim/shim_entry.hpp"
#include "trtb_internal.hpp"
#include "trtb_loader.hpp"

#include <string>

namespace trtb {

namespace {

// loaded_major is the major of the installed libnvinfer (getInferLibVersion,
// major*10000+minor*100+patch since TensorRT 10), or 0 when none is installed.
int32_t loaded_major() {
    const InferEntryPoints* infer = installed_infer();
    return infer != nullptr ? infer->get_version() / 10000 : 0;
}

const char kNotLoaded[] =
    "the TensorRT libraries are not loaded in this process (the worker loads them before a build; "
    "see trtbuild version)";

// shim_error says why no shim serves major (0: nothing is installed).
int32_t shim_error(int32_t major, trtb_status* status) {
    if (major == 0) {
        return set_status(status, TRTB_ERR_UNAVAILABLE, kNotLoaded);
    }
    return set_status(status, TRTB_ERR_VERSION_MISMATCH,
                      "the TensorRT library loaded is of major " + std::to_string(major) +
                          ", and this trtbuild drives TensorRT 10 and 11; install TensorRT 10 or 11");
}

}  // namespace

std::unique_ptr<Build> make_tensorrt_build(const trtb_options& options, trtb_status* status) {
    switch (const int32_t major = loaded_major()) {
    case 10:
        return trt10::make_build(options, status);
    case 11:
        return trt11::make_build(options, status);
    default:
        shim_error(major, status);
        return nullptr;
    }
}

int32_t tensorrt_available() {
    return 1;
}

int32_t tensorrt_version(int32_t device, trtb_version_info* info, trtb_status* status) {
    switch (const int32_t major = loaded_major()) {
    case 10:
        return trt10::version(device, info, status);
    case 11:
        return trt11::version(device, info, status);
    default:
        return shim_error(major, status);
    }
}

int32_t tensorrt_check_builder(int32_t device, trtb_status* status) {
    switch (const int32_t major = loaded_major()) {
    case 10:
        return trt10::check_builder(device, status);
    case 11:
        return trt11::check_builder(device, status);
    default:
        return shim_error(major, status);
    }
}

}  // namespace trtb

extern "C" int32_t trtb_tensorrt_compiled(trtb_compiled_info* info, int32_t n) {
    trtb_compiled_info all[2];
    trtb::trt11::compiled(&all[0]);
    trtb::trt10::compiled(&all[1]);
    for (int32_t i = 0; info != nullptr && i < n && i < 2; i++) {
        info[i] = all[i];
    }
    return 2;
}
