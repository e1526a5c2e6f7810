// tensorrt11.cpp: the TensorRT shim (shim/) compiled against the vendored headers of TensorRT 11
// (third_party/tensorrt/v11), in namespaces of its own (tensorrt_shim.hpp), so that it lives in
// one binary beside the shim of the other major. tensorrt.cpp calls it when the library the
// worker installed is of major 11.

#define TRTB_SHIM_MAJOR 11

#include "shim/tensorrt_common.cpp"
#include "shim/tensorrt_entry.cpp"
#include "shim/tensorrt_callbacks.cpp"
#include "shim/tensorrt_config.cpp"
#include "shim/tensorrt_timing_cache.cpp"
#include "shim/tensorrt_trtexec.cpp"
#include "shim/tensorrt_build.cpp"
