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
    timing_cache.assign(static_cast<const char*>(blob->data()), blob->size());
}

// merge_timing_cache combines the cache file's bytes with this build's cache the way trtexec
// updates its --timingCacheFile: both are deserialized with the config of a fresh builder, the
// build's cache is combined into the file's with ignoreMismatch=false (so a cache of another
// TensorRT version or device is refused, never mixed in), and the result is serialized. It
// runs after run(), on the caller's thread, which it points at the build's device first. The
// TensorRT objects it creates are deleted before it returns.
int32_t TensorRTBuild::merge_timing_cache(const std::string& disk, std::string* merged,
                                          trtb_status* status) {
    return guarded(status, [&]() -> int32_t {
        const Outcome out = merge(disk, merged);
        return set_status(status, out.code, out.code == TRTB_OK ? std::string() : out.message);
    });
}

Outcome TensorRTBuild::merge(const std::string& disk, std::string* merged) {
    merged->clear();
    if (timing_cache.empty()) {
        // Nothing to add (the cache was off, or TensorRT would not serialize it): keep the file.
        *merged = disk;
        return ok();
    }
    if (disk.empty()) {
        *merged = timing_cache;
        return ok();
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
    own.reset(config->createTimingCache(timing_cache.data(), timing_cache.size()));
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
    merged->assign(static_cast<const char*>(blob->data()), blob->size());
    return ok();
}

}  // namespace trt
}  // namespace trtb
