// trtfake_install.cpp: trtb_fake_install (trtb_fake.h): the stand-in TensorRT of a major and
// its CUDA driver installed as the process's libraries.

#include "trtb_fake.h"
#include "trtb_internal.hpp"
#include "trtb_loader.hpp"
#include "trtfake/linked.hpp"

#include <string>

extern "C" int32_t trtb_fake_install(int32_t major, const char* settings, trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
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
        trtb::fake_driver::entry_points(&libs.driver);
        libs.name = "trtfake " + std::to_string(major) + " (linked in)";
        return trtb::install_linked(libs, status);
    });
}

extern "C" int32_t trtb_fake_configure(const char* settings, trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        const std::string text = settings != nullptr ? settings : "";
        std::string why;
        const trtb::InferEntryPoints* infer = trtb::installed_infer();
        const int32_t major = infer != nullptr ? infer->get_version() / 10000 : 0;
        bool ok = false;
        switch (major) {
            case 10:
                ok = trtb::fake10::linked_configure(text, &why);
                break;
            case 11:
                ok = trtb::fake11::linked_configure(text, &why);
                break;
            default:
                why = "no stand-in TensorRT is installed in this process";
                break;
        }
        if (!ok) {
            return trtb::set_status(status, major == 10 || major == 11 ? TRTB_ERR_INVALID_ARGUMENT : TRTB_ERR_STATE, why);
        }
        return trtb::set_status(status, TRTB_OK, "");
    });
}
