// trtfake_install.cpp: trtb_fake_install (trtb_fake.h): the stand-in TensorRT of a major and
// its CUDA driver installed as the process's libraries.

#include "trtb_fake.h"
#include "trtb_internal.hpp"
#include "trtb_loader.hpp"
#include "trtfake/linked.hpp"

#include <functional>
#include <mutex>
#include <string>

namespace trtb {
namespace {

std::mutex fake_mu;
int32_t fake_major = 0;  // guarded by fake_mu: the major of the stand-in installed, 0: none

// install_fake installs the stand-in of major with settings; fake_mu held.
int32_t install_fake(int32_t major, const char* settings, trtb_status* status) {
    trtb::LinkedLibraries libs;
    std::string why;
    bool ok = false;
    switch (major) {
        case 10:
            ok = trtb::fake10::linked_entry_points(settings != nullptr ? settings : "", &libs.infer, &libs.parser,
                                                   &libs.plugin, &why);
            break;
        case 11:
            ok = trtb::fake11::linked_entry_points(settings != nullptr ? settings : "", &libs.infer, &libs.parser,
                                                   &libs.plugin, &why);
            break;
        default:
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                                    "the stand-in TensorRT plays TensorRT 10 and 11, not " + std::to_string(major));
    }
    if (!ok) {
        return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, why);
    }
    trtb::fake_driver::entry_points(&libs.driver, major == 10 ? fake10::linked_refuses : fake11::linked_refuses);
    libs.name = "trtfake " + std::to_string(major) + " (linked in)";
    const int32_t code = trtb::install_linked(libs, status);
    if (code == TRTB_OK) {
        fake_major = major;
    } else if (major == 10) {
        fake10::linked_rollback();  // another library is in place: this stand-in is not
    } else {
        fake11::linked_rollback();
    }
    return code;
}

}  // namespace

int32_t standin_for_build(int32_t major, const std::string& settings, trtb_status* status) {
    std::string why;
    const bool good = major == 10   ? fake10::check_settings(settings, &why)
                      : major == 11 ? fake11::check_settings(settings, &why)
                                    : (why = "the stand-in TensorRT plays TensorRT 10 and 11, not " + std::to_string(major), false);
    if (!good) {
        return set_status(status, TRTB_ERR_INVALID_ARGUMENT, why);
    }
    std::lock_guard<std::mutex> lock(fake_mu);
    if (fake_major == major) {
        return set_status(status, TRTB_OK, "");
    }
    if (fake_major != 0) {
        return set_status(status, TRTB_ERR_STATE,
                          "this process plays TensorRT " + std::to_string(fake_major) +
                              "'s stand-in already; a simulated build of TensorRT " + std::to_string(major) +
                              " runs in a process of its own");
    }
    if (installed_infer() != nullptr) {
        return set_status(status, TRTB_ERR_STATE,
                          "this process loaded TensorRT's libraries; a simulated build runs in a process of its own");
    }
    return install_fake(major, "", status);
}

void with_standin_settings(int32_t major, const std::string& settings, const std::function<void()>& f) {
    if (major == 10) {
        fake10::with_settings(settings, f);
    } else {
        fake11::with_settings(settings, f);
    }
}

}  // namespace trtb

extern "C" int32_t trtb_fake_install(int32_t major, const char* settings, trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        std::lock_guard<std::mutex> lock(trtb::fake_mu);
        return trtb::install_fake(major, settings, status);
    });
}

