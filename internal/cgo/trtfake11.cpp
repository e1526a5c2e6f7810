// trtfake11.cpp: the stand-in TensorRT (trtfake/) of TensorRT 11, compiled against the vendored
// headers of that major in the shim's namespaces for it, so that trtb_fake_install
// (trtfake_install.cpp) can install it as the loaded TensorRT 11 and the shim builds over it.

#define TRTB_SHIM_MAJOR 11

#include "trtfake/settings.cpp"
#include "trtfake/model.cpp"
#include "trtfake/graph.cpp"
#include "trtfake/context.cpp"
#include "trtfake/network.cpp"
#include "trtfake/config.cpp"
#include "trtfake/timing_cache.cpp"
#include "trtfake/builder.cpp"
#include "trtfake/parser.cpp"
#include "trtfake/build.cpp"
#include "trtfake/entry.cpp"
#include "trtfake/linked.cpp"
