// probe.hpp: test-only questions to the stand-in TensorRT of each major, asked through
// TensorRT's own API as an application would ask them (probe.cpp, compiled only with the Go
// build tag "trtbench": trtfake_probe10.cpp, trtfake_probe11.cpp; trtb_test_fake_probe in
// trtb_bench.h).
#ifndef TRTB_FAKE_PROBE_HPP
#define TRTB_FAKE_PROBE_HPP

#include <string>

#define TRTB_DECLARE_FAKE_PROBE(ns)                                                                \
    namespace trtb {                                                                               \
    namespace ns {                                                                                 \
    /* probe asks the stand-in what (probe.cpp) and returns what it answered, one line each:      \
       "error: <what the error recorder got>", "log: <an error logged>", "result: <...>". */      \
    std::string probe(const std::string& what);                                                    \
    }                                                                                              \
    }

TRTB_DECLARE_FAKE_PROBE(fake10)
TRTB_DECLARE_FAKE_PROBE(fake11)

#undef TRTB_DECLARE_FAKE_PROBE

#endif  // TRTB_FAKE_PROBE_HPP
