// library.cpp: the stand-in TensorRT as a library, libnvinfer.so.<major> (nvinfer_<major>.dll):
// every file of the stand-in of the major TRTB_SHIM_MAJOR names, and libnvinfer's C entry
// points over them. internal/cgo/standin compiles it once per major and links it with a small
// source of the release it plays, which defines getInferLibVersion, getInferLibBuildVersion
// and the three trtb_fake_library_* functions below; its ONNX parser library finds
// trtb_fake_create_parser in the libnvinfer already loaded (standin: FakeParser).
//
// As the real libnvinfer, createInferBuilder_INTERNAL loads its builder resource by bare file
// name (dlopen; LoadLibraryA on Windows), so the loader's library path rules are tested as
// before; the builder's settings come from the environment variable TRTBUILD_TRTFAKE, read
// then. TRTBUILD_STANDIN_LOG names a file the library notes what it did in ("builder resource
// <file> loaded", "builder deleted").
//
// Compile it with -fvisibility=hidden (standin does): only the C entry points are exported, so
// nothing of the stand-in in a binary that loads it (trtbuild has one) stands for its own.

#include "build.cpp"
#include "builder.cpp"
#include "config.cpp"
#include "context.cpp"
#include "entry.cpp"
#include "graph.cpp"
#include "model.cpp"
#include "network.cpp"
#include "parser.cpp"
#include "settings.cpp"
#include "timing_cache.cpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#define TRTB_FAKE_EXPORT extern "C" __declspec(dllexport)
#else
#include <dlfcn.h>
#define TRTB_FAKE_EXPORT extern "C" __attribute__((visibility("default")))
#endif

// Defined by the source of the release the library plays (standin.FakeInfer).
extern "C" int32_t trtb_fake_library_version();
extern "C" int32_t trtb_fake_library_build();
extern "C" const char* trtb_fake_library_resource();

namespace {

// note appends a line to the file TRTBUILD_STANDIN_LOG names, for the tests to read.
void note(const std::string& line) {
    const char* path = std::getenv("TRTBUILD_STANDIN_LOG");
    if (path == nullptr || path[0] == '\0') {
        return;
    }
    std::FILE* f = std::fopen(path, "ab");  // binary: one \n a line on Windows too
    if (f == nullptr) {
        return;
    }
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
}

void log_error(void* logger, const std::string& text) {
    if (logger != nullptr) {
        static_cast<nvinfer1::ILogger*>(logger)->log(nvinfer1::ILogger::Severity::kERROR, text.c_str());
    }
}

// load_resource opens the builder resource by bare file name, as libnvinfer does at
// createInferBuilder; false with why as the loader says it.
bool load_resource(const char* name, std::string* why) {
#ifdef _WIN32
    UINT old = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
    HMODULE h = LoadLibraryA(name);
    DWORD err = GetLastError();
    SetErrorMode(old);
    if (h == nullptr) {
        *why = "error " + std::to_string(err);
        return false;
    }
#else
    void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
        const char* e = dlerror();
        *why = e != nullptr ? e : "unknown";
        return false;
    }
#endif
    return true;
}

}  // namespace

TRTB_FAKE_EXPORT void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
    try {
        const char* resource = trtb_fake_library_resource();
        std::string why;
        if (resource[0] != '\0') {  // "": a stand-in with no builder resource
            if (!load_resource(resource, &why)) {
                log_error(logger, std::string("createInferBuilder: Error Code 6: API Usage Error (Unable to load library: ") +
                                      resource + ": " + why + ")");
                return nullptr;
            }
            note(std::string("builder resource ") + resource + " loaded");
        }
        trtb::TRTB_FAKE::Settings settings;
        const char* text = std::getenv("TRTBUILD_TRTFAKE");
        if (!trtb::TRTB_FAKE::parse_settings(text != nullptr ? text : "", &settings, &why)) {
            log_error(logger, "createInferBuilder: TRTBUILD_TRTFAKE: " + why);
            return nullptr;
        }
        settings.version = trtb_fake_library_version();
        settings.build = trtb_fake_library_build();
        settings.on_builder_deleted = [] { note("builder deleted"); };
        return trtb::TRTB_FAKE::create_builder(logger, version, settings);
    } catch (...) {
        log_error(logger, "createInferBuilder: out of memory");
        return nullptr;
    }
}

TRTB_FAKE_EXPORT void* trtb_fake_create_parser(void* network, void* logger, int version) noexcept {
    return trtb::TRTB_FAKE::create_parser(network, logger, version);
}
