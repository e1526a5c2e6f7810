// linked.cpp: the C entry points of the stand-in installed in the binary (trtb_fake_install,
// trtb_fake.h): libnvinfer's, libnvonnxparser's and libnvinfer_plugin's, as function pointers
// for the loader's tables (trtb_loader.hpp), which the shim calls as it calls a loaded
// TensorRT's.
//
// Global state: the settings of the installed stand-in. TensorRT's entry points take no
// context (createInferBuilder_INTERNAL(logger, version)), so, as a loaded library's state is,
// they are the process's: set when the stand-in is installed and read by every builder created
// after (each copies them), but for a thread inside with_settings, whose builders take that
// build's settings (thread_settings).

#include "linked.hpp"
#include "objects.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace trtb {
namespace TRTB_FAKE {

namespace {

std::mutex settings_mu;
bool installed = false;                              // guarded by settings_mu
std::shared_ptr<const Settings> installed_settings;  // guarded by settings_mu; null: the defaults

// thread_settings, when set (with_settings), are the settings of the builders the calling
// thread creates: one build's, set around its run.
thread_local const Settings* thread_settings = nullptr;

// settings are the installed stand-in's: a reader keeps its copy while a configure replaces
// them.
std::shared_ptr<const Settings> settings() {
    std::lock_guard<std::mutex> lock(settings_mu);
    if (installed_settings == nullptr) {
        installed_settings = std::make_shared<const Settings>();
    }
    return installed_settings;
}

int32_t get_version() {
    const auto s = settings();
    return s->version != 0 ? s->version : kHeaderVersion;
}

int32_t get_build() {
    const auto s = settings();
    return s->build >= 0 ? s->build : kHeaderBuild;
}

void* create_builder_entry(void* logger, int32_t version) {
    if (thread_settings != nullptr) {
        return create_builder(logger, version, *thread_settings);
    }
    return create_builder(logger, version, *settings());
}

void* create_parser_entry(void* network, void* logger, int version) {
    return create_parser(network, logger, version);
}

int get_parser_version() {
    return kParserVersion;
}

// current_settings are the settings of a builder the calling thread would create now.
std::shared_ptr<const Settings> current_settings() {
    if (thread_settings != nullptr) {
        return std::make_shared<const Settings>(*thread_settings);
    }
    return settings();
}

// init_plugins is initLibNvInferPlugins: the stand-in has no plugin to register. Refused (the
// refuse setting names initLibNvInferPlugins), it logs the error libnvinfer_plugin logs when a
// creator cannot be registered and answers false, as the real one does.
bool init_plugins(void* logger, char const*) {
    try {
        if (!glob(current_settings()->refuse, "initLibNvInferPlugins")) {
            return true;
        }
        if (logger != nullptr) {
            static_cast<nvinfer1::ILogger*>(logger)->log(
                Severity::kERROR,
                "initLibNvInferPlugins: Could not register plugin creator: the stand-in refuses it (its refuse setting)");
        }
    } catch (...) {
        // A refusal that cannot be logged is still a refusal.
    }
    return false;
}

}  // namespace

bool linked_entry_points(const std::string& settings_text, InferEntryPoints* infer, ParserEntryPoints* parser,
                         PluginEntryPoints* plugin, std::string* why) {
    Settings s;
    if (!parse_settings(settings_text, &s, why)) {
        return false;
    }
    {
        std::lock_guard<std::mutex> lock(settings_mu);
        if (installed) {
            *why = "the stand-in TensorRT " + std::to_string(kMajor) + " is already installed";
            return false;
        }
        installed = true;
        installed_settings = std::make_shared<const Settings>(std::move(s));
    }
    infer->get_version = get_version;
    infer->get_build = get_build;
    infer->create_builder = create_builder_entry;
    parser->create_parser = create_parser_entry;
    parser->get_version = get_parser_version;
    plugin->init_plugins = init_plugins;
    return true;
}

bool linked_refuses(const char* api) {
    try {
        return glob(current_settings()->refuse, api);
    } catch (...) {
        return false;
    }
}

void linked_rollback() {
    std::lock_guard<std::mutex> lock(settings_mu);
    installed = false;
    installed_settings.reset();
}

bool check_settings(const std::string& settings_text, std::string* why) {
    Settings s;
    return parse_settings(settings_text, &s, why);
}

void with_settings(const std::string& settings_text, const std::function<void()>& f) {
    Settings s;
    std::string why;
    if (!parse_settings(settings_text, &s, &why)) {
        throw std::invalid_argument(why);
    }
    // The version, build and device stay the installed library's, as a loaded library's do.
    const auto installed = settings();
    s.version = installed->version;
    s.build = installed->build;
    s.device = installed->device;
    struct Restore {
        const Settings* before;
        ~Restore() { thread_settings = before; }
    } restore{thread_settings};
    thread_settings = &s;
    f();
}

}  // namespace TRTB_FAKE
}  // namespace trtb
