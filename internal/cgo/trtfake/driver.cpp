// driver.cpp: the stand-in CUDA driver of the stand-in TensorRT installed in the binary
// (linked.hpp): the driver API functions the shim calls (trtb_loader.hpp), for kDevices
// "TensorRT stand-in GPU"s of compute capability 9.0 with 132 SMs (several, so that a
// simulated matrix can spread over GPUs as a real one does). As the real driver it refuses device
// calls before cuInit and a stream without a current context; a stream the stand-in's refuse
// setting names (cuStreamCreate) fails as on a device out of memory. Compiled once, for both majors
// (internal/cgo/trtfake_driver.cpp); the stand-in libraries have a libcuda of their own
// (internal/cgo/standin).
//
// Global state: what the driver API keeps per process (cuInit's, the primary context's
// retains) and per thread (the current context), because its functions take no handle to keep
// it in, as the real driver's do not.

#include "linked.hpp"

#include <atomic>
#include <cstdio>

namespace trtb {
namespace fake_driver {

namespace {

constexpr int kNotInitialized = 3;      // CUDA_ERROR_NOT_INITIALIZED
constexpr int kInvalidDevice = 101;     // CUDA_ERROR_INVALID_DEVICE
constexpr int kInvalidContext = 201;    // CUDA_ERROR_INVALID_CONTEXT
constexpr int kInvalidValue = 1;        // CUDA_ERROR_INVALID_VALUE
constexpr int kOutOfMemory = 2;         // CUDA_ERROR_OUT_OF_MEMORY

constexpr int kDevices = 8;

std::atomic<bool> inited{false};
std::atomic<int> retained{0};
thread_local CUctx_st* current = nullptr;
// refuses tells which calls fail as the real driver's can (the installed stand-in's refuse
// setting); null: none. Set when the stand-in is installed, before any call.
std::atomic<bool (*)(const char*)> refuses{nullptr};

bool refused(const char* api) {
    bool (*r)(const char*) = refuses.load();
    return r != nullptr && r(api);
}

// Each device's primary context and the one stream's storage: opaque handles, never
// dereferenced.
char context_storage[kDevices];
char stream_storage;

CUctx_st* primary(int d) { return reinterpret_cast<CUctx_st*>(&context_storage[d]); }

bool valid(int d) { return d >= 0 && d < kDevices; }

int init(unsigned int) {
    inited.store(true);
    return kCudaSuccess;
}
int driver_get_version(int* v) {
    *v = 13000;
    return kCudaSuccess;
}
int device_get_count(int* n) {
    if (!inited.load()) {
        return kNotInitialized;
    }
    *n = kDevices;
    return kCudaSuccess;
}
int device_get(int* d, int ordinal) {
    if (!inited.load()) {
        return kNotInitialized;
    }
    if (!valid(ordinal)) {
        return kInvalidDevice;
    }
    *d = ordinal;
    return kCudaSuccess;
}
int device_get_name(char* out, int len, int d) {
    if (!inited.load()) {
        return kNotInitialized;
    }
    if (!valid(d)) {
        return kInvalidDevice;
    }
    std::snprintf(out, static_cast<size_t>(len > 0 ? len : 0), "%s", "TensorRT stand-in GPU");
    return kCudaSuccess;
}
int device_get_attribute(int* v, int attr, int d) {
    if (!inited.load()) {
        return kNotInitialized;
    }
    if (!valid(d)) {
        return kInvalidDevice;
    }
    switch (attr) {
        case kAttrComputeCapabilityMajor:
            *v = 9;
            return kCudaSuccess;
        case kAttrComputeCapabilityMinor:
            *v = 0;
            return kCudaSuccess;
        case kAttrMultiprocessorCount:
            *v = 132;
            return kCudaSuccess;
    }
    return kInvalidValue;
}
int primary_ctx_retain(CUctx_st** ctx, int d) {
    if (!inited.load()) {
        return kNotInitialized;
    }
    if (!valid(d)) {
        return kInvalidDevice;
    }
    retained++;
    *ctx = primary(d);
    return kCudaSuccess;
}
int primary_ctx_release(int d) {
    if (!valid(d) || retained.load() == 0) {
        return kInvalidDevice;
    }
    retained--;
    return kCudaSuccess;
}
int ctx_set_current(CUctx_st* ctx) {
    current = ctx;
    return kCudaSuccess;
}
int get_error_string(int err, const char** text) {
    switch (err) {
        case kNotInitialized:
            *text = "initialization error";
            return kCudaSuccess;
        case kInvalidDevice:
            *text = "invalid device ordinal";
            return kCudaSuccess;
        case kInvalidContext:
            *text = "invalid device context";
            return kCudaSuccess;
        case kOutOfMemory:
            *text = "out of memory";
            return kCudaSuccess;
    }
    *text = "stand-in CUDA error";
    return kCudaSuccess;
}
int stream_create(CUstream_st** stream, unsigned int) {
    if (current == nullptr) {
        return kInvalidContext;
    }
    // Refused, it fails as the real one does when the device has no memory left for a stream.
    if (refused("cuStreamCreate")) {
        return kOutOfMemory;
    }
    *stream = reinterpret_cast<CUstream_st*>(&stream_storage);
    return kCudaSuccess;
}
int stream_destroy(CUstream_st*) {
    return kCudaSuccess;
}

}  // namespace

void entry_points(DriverEntryPoints* d, bool (*refuses_call)(const char*)) {
    refuses.store(refuses_call);
    d->init = init;
    d->driver_get_version = driver_get_version;
    d->device_get_count = device_get_count;
    d->device_get = device_get;
    d->device_get_name = device_get_name;
    d->device_get_attribute = device_get_attribute;
    d->primary_ctx_retain = primary_ctx_retain;
    d->primary_ctx_release = primary_ctx_release;
    d->ctx_set_current = ctx_set_current;
    d->get_error_string = get_error_string;
    d->stream_create = stream_create;
    d->stream_destroy = stream_destroy;
}

}  // namespace fake_driver
}  // namespace trtb
