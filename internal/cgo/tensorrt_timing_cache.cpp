//go:build tensorrt

// tensorrt_timing_cache.cpp: the timing cache of the TensorRT backend: attached to the config
// before the build, serialized after it, and merged into the cache file's contents the way
// trtexec updates its --timingCacheFile (see tensorrt_shim.hpp for how the backend is split and
// its rules).

#include "tensorrt_shim.hpp"

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace trtb {
namespace trt {

int64_t TensorRTBuild::count_cache_keys(const nvinfer1::ITimingCache* cache) {
#if TRTB_HAS_TIMING_CACHE_KEYS
    if (cache == nullptr) {
        return -1;
    }
    return cache->queryKeys(nullptr, 0);
#else
    (void)cache;
    return -1;
#endif
}

namespace {

// rejected_blob tells whether TensorRT refused a serialized cache it was given (size bytes,
// more than 0) while making cache from it, and if so sets *why. TensorRT does not always fail
// createTimingCache on a blob of another version, device or a corrupt one: it may log a
// warning or an error and hand back an empty cache instead. So a blob counts as refused when
// the call returned null, when errors or warnings were logged during it (Logger marks), or,
// from 10.8 on, when the cache it made holds no key although the blob was not empty. Writing
// that empty cache over the file would destroy a cache another TensorRT can still use.
bool rejected_blob(const nvinfer1::ITimingCache* cache, const Logger& log, uint64_t error_mark,
                   uint64_t warning_mark, std::string* why) {
    uint64_t older = 0;
    std::vector<std::string> errors = log.errors_since(error_mark, &older);
    if (cache == nullptr) {
        *why = errors.empty() ? "TensorRT could not read it" : join_listed(errors);
        return true;
    }
    if (!errors.empty()) {
        *why = join_listed(errors);
        return true;
    }
    if (log.warnings() > warning_mark) {
        *why = "TensorRT warned while reading it (see the log)";
        return true;
    }
#if TRTB_HAS_TIMING_CACHE_KEYS
    if (cache->queryKeys(nullptr, 0) <= 0) {
        *why = "TensorRT read it as an empty cache";
        return true;
    }
#endif
    return false;
}

}  // namespace

Outcome TensorRTBuild::attach_timing_cache(Objects& o, trtb_result* result) {
    result->timing_cache_used = 0;
    if ((s_.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0) {
        return ok();
    }
    nvinfer1::IBuilderConfig& config = *o.config;
    if (!s_.timing_cache.empty()) {
        const uint64_t errors = logger_.mark(), warnings = logger_.warnings();
        o.cache.reset(config.createTimingCache(s_.timing_cache.data(), s_.timing_cache.size()));
        std::string why;
        // ignoreMismatch=false: a cache from another device or TensorRT is not used.
        if (!rejected_blob(o.cache.get(), logger_, errors, warnings, &why) && config.setTimingCache(*o.cache, false)) {
            result->timing_cache_used = 1;
            return ok();
        }
        logger_.note(TRTB_SEVERITY_WARNING,
                     "the timing cache was not accepted (" + (why.empty() ? std::string("made by another TensorRT version or GPU") : why) +
                         "); building from an empty cache");
        o.cache.reset();
    }
    const uint64_t mark = logger_.mark();
    o.cache.reset(config.createTimingCache(nullptr, 0));
    if (o.cache == nullptr || !config.setTimingCache(*o.cache, false)) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a timing cache: " + errors_since(mark));
    }
    return ok();
}

void TensorRTBuild::save_timing_cache(Objects& o, bool succeeded, trtb_result* result, int64_t keys_before) {
    // The config's cache, as trtexec serializes it (config.getTimingCache(), saveTimingCache in
    // samples/common/sampleEngines.cpp): that setTimingCache keeps a reference to o.cache
    // rather than a copy is implied by the header, not promised.
    const nvinfer1::ITimingCache* cache = o.config != nullptr ? o.config->getTimingCache() : nullptr;
    if (o.cache == nullptr || cache == nullptr) {
        return;
    }
    const int64_t keys_after = count_cache_keys(cache);
    if (keys_before >= 0 && keys_after >= keys_before) {
        // New entries are what this build timed because the cache lacked them.
        result->timing_cache_misses = static_cast<uint64_t>(keys_after - keys_before);
    }
    std::unique_ptr<nvinfer1::IHostMemory> blob(cache->serialize());
    if (blob == nullptr || blob->data() == nullptr || blob->size() == 0) {
        if (!succeeded) {
            // Serializing after a cancelled build is not documented to work.
            logger_.note(TRTB_SEVERITY_WARNING, "the timing cache could not be saved after the cancelled build");
        } else {
            logger_.note(TRTB_SEVERITY_WARNING, "TensorRT returned an empty timing cache; it is not saved");
        }
        return;
    }
    own_cache_ = std::move(blob);  // kept as TensorRT made it: no copy of a large cache
}

// write_timing_cache combines the cache file's bytes with this build's cache the way trtexec
// updates its --timingCacheFile: both are deserialized with the config of a fresh builder, the
// build's cache is combined into the file's with ignoreMismatch=false (so a cache of another
// TensorRT version or device is refused, never mixed in), and the result is serialized and
// written to fd when it differs from the file. It runs after run(), on the caller's thread,
// which it points at the build's device first. The TensorRT objects it creates are deleted
// before it returns. A file that holds exactly the given cache (disk_is_given) is not read
// again: the given bytes are still at hand (borrowed until destroy, see trtb.h).
int32_t TensorRTBuild::write_timing_cache(bool disk_is_given, std::string_view disk, int fd,
                                          bool* changed, trtb_status* status) {
    return guarded(status, [&]() -> int32_t {
        const Outcome out = write_cache(disk_is_given, disk, fd, changed);
        return set_status(status, out.code, out.code == TRTB_OK ? std::string() : out.message);
    });
}

Outcome TensorRTBuild::write_cache(bool disk_is_given, std::string_view disk, int fd, bool* changed) {
    *changed = false;
    if (own_cache_ == nullptr || own_cache_->data() == nullptr || own_cache_->size() == 0) {
        // Nothing to add (the cache was off, or TensorRT would not serialize it): keep the file.
        return ok();
    }
    if (disk_is_given) {
        disk = s_.timing_cache;
    }
    const std::string_view own_bytes(static_cast<const char*>(own_cache_->data()), own_cache_->size());
    auto write = [&](std::string_view bytes) -> Outcome {
        *changed = true;
        int err = 0;
        if (fd >= 0 && !write_all(fd, bytes.data(), bytes.size(), &err)) {
            return fail(TRTB_ERR_IO, "writing the timing cache: " + std::generic_category().message(err));
        }
        return ok();
    };
    if (disk.empty()) {
        return write(own_bytes);
    }
    if (disk == own_bytes) {
        return ok();  // the build added nothing the file lacks
    }
    // Errors and warnings of the merge reach this build's Logger (for the failure message; the
    // event queue is closed by now, so they are not shown live).
    ProcessLogger::SinkScope sink(logger_);
    if (Outcome out = select_device(); out.code != TRTB_OK) {
        return out;
    }
    // The caches are declared before the builder, so that they outlive it (see Objects).
    std::unique_ptr<nvinfer1::ITimingCache> on_disk;
    std::unique_ptr<nvinfer1::ITimingCache> own;
    uint64_t mark = logger_.mark();
    std::unique_ptr<nvinfer1::IBuilder> builder(create_builder(ProcessLogger::get()));
    if (builder == nullptr) {
        return fail(TRTB_ERR_UNAVAILABLE, "TensorRT could not create a builder to merge the timing cache: " + errors_since(mark));
    }
    builder->setErrorRecorder(&recorder_);
    std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
    if (config == nullptr) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a builder config to merge the timing cache: " + errors_since(mark));
    }
    mark = logger_.mark();
    const uint64_t warnings = logger_.warnings();
    on_disk.reset(config->createTimingCache(disk.data(), disk.size()));
    std::string why;
    if (rejected_blob(on_disk.get(), logger_, mark, warnings, &why)) {
        return fail(TRTB_ERR_CACHE_REJECTED, "TensorRT cannot use the timing cache file: " + why);
    }
    mark = logger_.mark();
    own.reset(config->createTimingCache(own_cache_->data(), own_cache_->size()));
    if (own == nullptr) {
        return fail(TRTB_ERR_INTERNAL, "TensorRT cannot read the timing cache it serialized: " + errors_since(mark));
    }
    // trtexec's direction: the build's cache into the file's (updateTimingCacheFile in
    // samples/common/sampleEngines.cpp).
    mark = logger_.mark();
    if (!on_disk->combine(*own, false)) {
        return fail(TRTB_ERR_CACHE_REJECTED,
                    "TensorRT refused to combine the timing caches (made by another TensorRT version or device): " +
                        errors_since(mark));
    }
    std::unique_ptr<nvinfer1::IHostMemory> blob(on_disk->serialize());
    if (blob == nullptr || blob->data() == nullptr || blob->size() == 0) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not serialize the merged timing cache");
    }
    const std::string_view merged(static_cast<const char*>(blob->data()), blob->size());
    if (merged == disk) {
        return ok();
    }
    return write(merged);
}

}  // namespace trt
}  // namespace trtb
