// api.cpp: the extern "C" functions of trtb.h. Each one checks its arguments and dispatches to
// the backend's factory or to the Build behind the handle, inside trtb::guarded (see
// trtb_internal.hpp), which turns every exception into a status: no C++ exception reaches Go.

#include "trtb.h"
#include "trtb_internal.hpp"
#include "trtb_platform.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

// trtb_build is the opaque handle of trtb.h.
struct trtb_build {
    std::unique_ptr<trtb::Build> impl;
    std::atomic<bool> finished{false};  // trtb_build_run has returned
    // A simulated build's stand-in: its major (0: a build over a loaded TensorRT) and the
    // settings its builder takes (trtb_sim_options).
    int32_t sim_major = 0;
    std::string sim_settings;
};

namespace {

// kDefaultSimMajor is the TensorRT a simulated build plays when trtb_sim_options names none.
constexpr int32_t kDefaultSimMajor = 11;

}  // namespace

namespace trtb {

int32_t set_status(trtb_status* status, int32_t code, const std::string& message) {
    if (status == nullptr) {
        return code;
    }
    status->code = code;
    size_t n = message.size();
    if (n > TRTB_MESSAGE_MAX - 1) {
        n = TRTB_MESSAGE_MAX - 1;
        // Do not split a UTF-8 sequence: back up to the byte that starts the one cut.
        for (int back = 0;
             n > 0 && back < 4 && (static_cast<unsigned char>(message[n]) & 0xC0) == 0x80;
             ++back) {
            --n;
        }
    }
    std::memcpy(status->message, message.data(), n);
    status->message[n] = '\0';
    return code;
}

int32_t set_status_text(trtb_status* status, int32_t code, const char* prefix,
                        const char* what) noexcept {
    if (status == nullptr) {
        return code;
    }
    status->code = code;
    size_t n = 0;
    for (const char* part : {prefix, what}) {
        for (const char* p = part; p != nullptr && *p != '\0' && n < TRTB_MESSAGE_MAX - 1; ++p) {
            status->message[n++] = *p;
        }
    }
    // Do not leave half a UTF-8 sequence at the end.
    if (n == TRTB_MESSAGE_MAX - 1) {
        size_t start = n;
        while (start > 0 && (static_cast<unsigned char>(status->message[start - 1]) & 0xC0) == 0x80) {
            --start;
        }
        if (start > 0) {
            const auto lead = static_cast<unsigned char>(status->message[start - 1]);
            const size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (want > 1 && n - (start - 1) < want) {
                n = start - 1;
            }
        }
    }
    status->message[n] = '\0';
    return code;
}

bool write_all(int fd, const char* data, size_t n, std::string* error) {
    int err = 0;
    if (!platform::write_all(fd, data, n, &err)) {
        *error = platform::error_text(err);
        return false;
    }
    return true;
}

trtb_build* new_handle(std::unique_ptr<Build> build) {
    auto* handle = new trtb_build;
    handle->impl = std::move(build);
    return handle;
}

}  // namespace trtb

extern "C" {

int32_t trtb_backend_available(int32_t backend) {
    return trtb::guarded(nullptr, [&]() -> int32_t {
               switch (backend) {
                   case TRTB_BACKEND_SIM:
                       return 1;
                   case TRTB_BACKEND_TENSORRT:
                       return trtb::tensorrt_available() != 0 ? 1 : 0;
                   default:
                       return 0;
               }
           }) == 1
               ? 1
               : 0;
}

int32_t trtb_version(int32_t backend, int32_t device, trtb_version_info* info,
                     trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        if (info == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "version info is NULL");
        }
        std::memset(info, 0, sizeof(*info));
        switch (backend) {
            case TRTB_BACKEND_SIM:
                std::strncpy(info->backend, "sim", sizeof(info->backend) - 1);
                return trtb::set_status(status, TRTB_OK, "");
            case TRTB_BACKEND_TENSORRT:
                return trtb::tensorrt_version(device, info, status);
            default:
                return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                                        "unknown backend " + std::to_string(backend));
        }
    });
}

int32_t trtb_build_create(int32_t backend, const trtb_options* options, trtb_build** out,
                          trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        if (out == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "build output is NULL");
        }
        *out = nullptr;
        if (options == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "build options are NULL");
        }
        trtb::set_status(status, TRTB_OK, "");
        int32_t sim_major = 0;
        std::string sim_settings;
        switch (backend) {
            case TRTB_BACKEND_SIM: {
                // The shim over the stand-in TensorRT of the major asked for.
                sim_major = options->sim != nullptr && options->sim->tensorrt_major != 0 ? options->sim->tensorrt_major
                                                                                      : kDefaultSimMajor;
                if (options->sim != nullptr && options->sim->settings != nullptr) {
                    sim_settings = options->sim->settings;
                }
                if (const int32_t code = trtb::standin_for_build(sim_major, sim_settings, status); code != TRTB_OK) {
                    return code;
                }
                break;
            }
            case TRTB_BACKEND_TENSORRT:
                break;
            default:
                return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                                        "unknown backend " + std::to_string(backend));
        }
        std::unique_ptr<trtb::Build> build = trtb::make_tensorrt_build(*options, status);
        if (build == nullptr) {
            if (status != nullptr && status->code == TRTB_OK) {
                return trtb::set_status(status, TRTB_ERR_INTERNAL,
                                        "internal error in the engine builder: the backend made "
                                        "no build and gave no reason");
            }
            return status != nullptr ? status->code : TRTB_ERR_INTERNAL;
        }
        *out = trtb::new_handle(std::move(build));
        (*out)->sim_major = sim_major;
        (*out)->sim_settings = std::move(sim_settings);
        return trtb::set_status(status, TRTB_OK, "");
    });
}

int32_t trtb_build_run(trtb_build* build, trtb_result* result, trtb_status* status) {
    trtb_result local{};
    if (result == nullptr) {
        result = &local;
    }
    std::memset(result, 0, sizeof(*result));
    if (build == nullptr || build->impl == nullptr) {
        result->code = trtb::set_status_text(status, TRTB_ERR_INVALID_ARGUMENT,
                                             "build handle is NULL", nullptr);
        return result->code;
    }
    if (build->impl->ran.exchange(true)) {
        result->code = trtb::set_status_text(status, TRTB_ERR_STATE,
                                             "trtb_build_run was already called for this build",
                                             nullptr);
        return result->code;
    }
    trtb::set_status_text(status, TRTB_OK, nullptr, nullptr);
    const int32_t code = trtb::guarded(status, [&] {
        if (build->sim_major == 0) {
            return build->impl->run(result, status);
        }
        int32_t ran = TRTB_ERR_INTERNAL;
        trtb::with_standin_settings(build->sim_major, build->sim_settings,
                                    [&] { ran = build->impl->run(result, status); });
        return ran;
    });
    // The backend should have closed the queue; drainers must always see done.
    trtb::guarded_void([&] { build->impl->queue.close(); });
    if (status != nullptr) {
        status->code = code;
    }
    result->code = code;
    build->finished.store(true, std::memory_order_release);
    return code;
}

void trtb_build_cancel(trtb_build* build) {
    trtb::guarded_void([&] {
        if (build != nullptr && build->impl != nullptr) {
            build->impl->request_cancel();
        }
    });
}

int32_t trtb_build_drain(trtb_build* build, trtb_batch* batch, int32_t timeout_ms,
                         trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        if (build == nullptr || build->impl == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "build handle is NULL");
        }
        return build->impl->queue.drain(batch, timeout_ms, status);
    });
}

int32_t trtb_build_write_timing_cache(trtb_build* build, int32_t disk_is_given, const void* disk,
                                      uint64_t disk_size, int32_t fd, int32_t* changed,
                                      trtb_status* status) {
    return trtb::guarded(status, [&]() -> int32_t {
        if (changed == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "timing cache output is NULL");
        }
        *changed = 0;
        if (build == nullptr || build->impl == nullptr) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT, "build handle is NULL");
        }
        if (disk == nullptr && disk_size > 0) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                                    "timing cache size is set but the data is NULL");
        }
        if (disk_is_given != 0 && disk_size > 0) {
            return trtb::set_status(status, TRTB_ERR_INVALID_ARGUMENT,
                                    "the file is said to hold the given cache, but its bytes were passed too");
        }
        if (!build->finished.load(std::memory_order_acquire)) {
            return trtb::set_status(status, TRTB_ERR_STATE,
                                    "the timing cache can be written only after the build has run");
        }
        const std::string_view in =
            disk_size > 0 ? std::string_view(static_cast<const char*>(disk), static_cast<size_t>(disk_size))
                          : std::string_view();
        bool differs = false;
        const int32_t code = build->impl->write_timing_cache(disk_is_given != 0, in, fd, &differs, status);
        *changed = differs ? 1 : 0;
        return code;
    });
}

void trtb_build_destroy(trtb_build* build) {
    trtb::guarded_void([&] { delete build; });
}

}  // extern "C"
