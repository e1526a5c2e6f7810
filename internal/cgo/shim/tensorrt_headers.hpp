// tensorrt_headers.hpp: TensorRT's public headers of the major TRTB_SHIM_MAJOR, as vendored in
// third_party/tensorrt (see tensorrt_shim.hpp for the namespaces they are read in). They are
// NVIDIA's, checked against their SHA-256 list and never edited, so they are read as system
// headers: their own warnings (deprecations in 11.x's plugin classes) are not trtbuild's, and
// the shim's are still errors in scripts/check-tensorrt-headers.sh.
#ifndef TRTB_TENSORRT_HEADERS_HPP
#define TRTB_TENSORRT_HEADERS_HPP

#pragma GCC system_header

#if TRTB_SHIM_MAJOR == 10
#include "../../../third_party/tensorrt/v10/include/NvInfer.h"
#include "../../../third_party/tensorrt/v10/include/NvInferPlugin.h"
#include "../../../third_party/tensorrt/v10/include/NvOnnxParser.h"
#elif TRTB_SHIM_MAJOR == 11
#include "../../../third_party/tensorrt/v11/include/NvInfer.h"
#include "../../../third_party/tensorrt/v11/include/NvInferPlugin.h"
#include "../../../third_party/tensorrt/v11/include/NvOnnxParser.h"
#endif

#endif  // TRTB_TENSORRT_HEADERS_HPP
