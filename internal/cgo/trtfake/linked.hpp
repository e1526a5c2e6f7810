// linked.hpp: the entry points of the stand-in TensorRT of each major compiled into the binary
// (linked.cpp, through internal/cgo/trtfake10.cpp and trtfake11.cpp), for trtb_fake_install.
// They name no TensorRT type, so the installer needs no TensorRT header.
#ifndef TRTB_FAKE_LINKED_HPP
#define TRTB_FAKE_LINKED_HPP

#include "../trtb_loader.hpp"

#include <functional>
#include <string>

#define TRTB_DECLARE_FAKE(ns)                                                                            \
    namespace trtb {                                                                                     \
    namespace ns {                                                                                       \
    /* linked_entry_points fills the tables of libnvinfer's, libnvonnxparser's and                      \
       libnvinfer_plugin's entry points of the stand-in, whose builders take settings_text             \
       (settings.hpp). Once per process: false with *why when the text is bad or it was done. */       \
    bool linked_entry_points(const std::string& settings_text, InferEntryPoints* infer,                  \
                             ParserEntryPoints* parser, PluginEntryPoints* plugin, std::string* why);    \
    /* linked_refuses reports whether the refuse setting of the builders the calling thread     \
       would create now names api (a CUDA driver call, for the stand-in driver). */               \
    bool linked_refuses(const char* api);                                                                \
    /* linked_rollback undoes linked_entry_points when the loader refused the tables. */             \
    void linked_rollback();                                                                              \
    /* check_settings reports whether settings_text is good, with *why when it is not. */            \
    bool check_settings(const std::string& settings_text, std::string* why);                             \
    /* with_settings runs f with settings_text (checked) as the settings of the builders created     \
       on the calling thread meanwhile: one build's own, in a process that builds several. */        \
    void with_settings(const std::string& settings_text, const std::function<void()>& f);                \
    }                                                                                                    \
    }

TRTB_DECLARE_FAKE(fake10)
TRTB_DECLARE_FAKE(fake11)

#undef TRTB_DECLARE_FAKE

namespace trtb {
namespace fake_driver {
// entry_points fills the table of the stand-in CUDA driver (driver.cpp): 8 "TensorRT stand-in
// GPU"s of compute capability 9.0 with 132 SMs, driver 13.0. refuses, when set, tells which of
// its calls fail as the real driver's can (the installed stand-in's refuse setting: "cuStreamCreate").
void entry_points(DriverEntryPoints* driver, bool (*refuses)(const char* api) = nullptr);
}  // namespace fake_driver
}  // namespace trtb

#endif  // TRTB_FAKE_LINKED_HPP
