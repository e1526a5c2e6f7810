//go:build trtbench

// trtfake_probe10.cpp: test-only questions to the stand-in TensorRT 10 (trtfake/probe.cpp),
// compiled only with the Go build tag "trtbench".

#define TRTB_SHIM_MAJOR 10

#include "trtfake/probe.cpp"
