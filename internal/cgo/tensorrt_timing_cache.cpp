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
    // A count is a nicety: an error it provokes must not end up in a failure message.
    const size_t mark = recorder_.size();
    const int64_t n = cache->queryKeys(nullptr, 0);
    recorder_.drop_since(mark);
    return n;
#else
    (void)cache;
    return -1;
#endif
}

Outcome TensorRTBuild::attach_timing_cache(Objects& o, trtb_result* result) {
    result->timing_cache_used = 0;
    if ((s_.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0) {
        return ok();
    }
    nvinfer1::IBuilderConfig& config = *o.config;
    if (!s_.timing_cache.empty()) {
        const size_t mark = recorder_.size();
        o.cache.reset(config.createTimingCache(s_.timing_cache.data(), s_.timing_cache.size()));
        // ignoreMismatch=false: a cache from another device or TensorRT is not used.
        if (o.cache != nullptr && config.setTimingCache(*o.cache, false)) {
            result->timing_cache_used = 1;
            return ok();
        }
        const std::vector<std::string> why = recorder_.texts_since(mark);
        recorder_.drop_since(mark);  // handled here; not a reason for a later failure
        logger_.note(TRTB_SEVERITY_WARNING,
                     "the timing cache was not accepted (" +
                         (why.empty() ? std::string("made by another TensorRT version or GPU") : join_listed(why)) +
                         "); building from an empty cache");
        o.cache.reset();
    }
    const size_t mark = recorder_.size();
    o.cache.reset(config.createTimingCache(nullptr, 0));
    if (o.cache == nullptr || !config.setTimingCache(*o.cache, false)) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a timing cache: " + errors_since(mark));
    }
    return ok();
}

void TensorRTBuild::save_timing_cache(Objects& o, bool succeeded, trtb_result* result, int64_t keys_before) {
    if (o.cache == nullptr) {
        return;
    }
    const int64_t keys_after = count_cache_keys(o.cache.get());
    if (keys_before >= 0 && keys_after >= keys_before) {
        // New entries are what this build timed because the cache lacked them.
        result->timing_cache_misses = static_cast<uint64_t>(keys_after - keys_before);
    }
    const size_t mark = recorder_.size();
    std::unique_ptr<nvinfer1::IHostMemory> blob(o.cache->serialize());
    recorder_.drop_since(mark);
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
    try {
        const Outcome out = merge(disk, merged);
        return set_status(status, out.code, out.code == TRTB_OK ? std::string() : out.message);
    } catch (const std::bad_alloc&) {
        return set_status(status, TRTB_ERR_OUT_OF_MEMORY, "host memory ran out while merging the timing cache");
    } catch (const std::exception& e) {
        return set_status(status, TRTB_ERR_INTERNAL, std::string("internal error in the TensorRT backend: ") + e.what());
    } catch (...) {
        return set_status(status, TRTB_ERR_INTERNAL, "internal error in the TensorRT backend: unknown exception");
    }
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
    if (Outcome out = select_device(); out.code != TRTB_OK) {
        return out;
    }
    std::unique_ptr<nvinfer1::IBuilder> builder(nvinfer1::createInferBuilder(logger_));
    if (builder == nullptr) {
        return fail(TRTB_ERR_UNAVAILABLE, "TensorRT could not create a builder to merge the timing cache");
    }
    builder->setErrorRecorder(&recorder_);
    std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
    if (config == nullptr) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a builder config to merge the timing cache");
    }
    size_t mark = recorder_.size();
    std::unique_ptr<nvinfer1::ITimingCache> on_disk(config->createTimingCache(disk.data(), disk.size()));
    std::vector<std::string> why = recorder_.texts_since(mark);
    if (on_disk == nullptr || !why.empty()) {
        return fail(TRTB_ERR_CACHE_REJECTED,
                    "TensorRT cannot read the timing cache file" + (why.empty() ? std::string() : ": " + join_listed(why)));
    }
    std::unique_ptr<nvinfer1::ITimingCache> own(config->createTimingCache(timing_cache.data(), timing_cache.size()));
    if (own == nullptr) {
        return fail(TRTB_ERR_INTERNAL, "TensorRT cannot read the timing cache it serialized: " +
                                           join_listed(recorder_.texts_since(mark)));
    }
    mark = recorder_.size();
    if (!on_disk->combine(*own, false)) {
        why = recorder_.texts_since(mark);
        return fail(TRTB_ERR_CACHE_REJECTED,
                    "TensorRT refused to combine the timing caches (made by another TensorRT version or device)" +
                        (why.empty() ? std::string() : ": " + join_listed(why)));
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
