//go:build trtbench

// trtfake_probe11.cpp: test-only questions to the stand-in TensorRT 11 (trtfake/probe.cpp),
// compiled only with the Go build tag "trtbench".

#define TRTB_SHIM_MAJOR 11

#include "trtfake/probe.cpp"
