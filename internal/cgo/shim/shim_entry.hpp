// shim_entry.hpp: the entry points of the TensorRT shim of each major, which tensorrt.cpp calls
// for the major of the library the worker installed. They name no TensorRT type, so the
// dispatcher needs no TensorRT header; each is defined by the shim compiled for its major
// (shim/tensorrt_build.cpp, through tensorrt10.cpp and tensorrt11.cpp), and throws nothing:
// errors go to status.
#ifndef TRTB_SHIM_ENTRY_HPP
#define TRTB_SHIM_ENTRY_HPP

#include "../trtb_internal.hpp"
#include "../trtb_loader.h"

#include <memory>

#define TRTB_DECLARE_SHIM(ns)                                                                       \
    namespace trtb {                                                                                \
    namespace ns {                                                                                  \
    /* make_build is trtb_build_create for a TensorRT build. */                                     \
    std::unique_ptr<Build> make_build(const trtb_options& options, trtb_status* status);            \
    /* version is trtb_version for the TensorRT backend. */                                         \
    int32_t version(int32_t device, trtb_version_info* info, trtb_status* status);                  \
    /* check_builder is trtb_check_builder. */                                                      \
    int32_t check_builder(int32_t device, trtb_status* status);                                     \
    /* compiled describes the headers the shim was compiled against. */                            \
    void compiled(trtb_compiled_info* info);                                                        \
    }                                                                                               \
    }

TRTB_DECLARE_SHIM(trt10)
TRTB_DECLARE_SHIM(trt11)

#undef TRTB_DECLARE_SHIM

#endif  // TRTB_SHIM_ENTRY_HPP
