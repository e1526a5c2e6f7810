// tensorrt_timing_cache.cpp: the timing cache of the TensorRT backend: attached to the config
// before the build, serialized after it, and merged into the cache file's contents the way
// trtexec updates its --timingCacheFile (see tensorrt_shim.hpp for how the backend is split and
// its rules).

#include "tensorrt_shim.hpp"

#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace trtb {
namespace TRTB_SHIM {

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

std::vector<std::string> texts_of(const tcache::ThreadCapture& capture) {
    std::vector<std::string> out;
    for (const tcache::ThreadCapture::Line& line : capture.lines()) {
        out.push_back(line.text);
    }
    return out;
}  // coverage: the unwinding of an allocation failure

// same_bytes is a == b, without reading bytes that are one view twice (the given cache, which
// can be hundreds of MB, stands for both the file and the build's cache).
bool same_bytes(std::string_view a, std::string_view b) {
    return a.size() == b.size() && (a.data() == b.data() || a == b);
}

// blob_of views what an IHostMemory holds; empty for none.
std::string_view blob_of(const nvinfer1::IHostMemory* m) {
    if (m == nullptr || m->data() == nullptr) {
        return std::string_view();
    }
    return std::string_view(static_cast<const char*>(m->data()), m->size());
}

}  // namespace

tcache::LoadFacts TensorRTBuild::read_cache(nvinfer1::IBuilderConfig& config, std::string_view blob,
                                            std::unique_ptr<nvinfer1::ITimingCache>* cache,
                                            tcache::ThreadCapture* capture) {
    tcache::LoadFacts facts;
    facts.size = blob.size();
    // TensorRT does not always fail createTimingCache on a blob of another version or a corrupt
    // one: it may log an error or a warning and hand back an empty cache instead. Only what
    // this thread logged during the call counts (a warning of another thread meanwhile is not
    // about this cache).
    cache->reset(config.createTimingCache(blob.data(), blob.size()));
    capture->end();
    facts.created = *cache != nullptr;
    facts.errors = capture->errors();
    facts.warnings = capture->warnings();
    facts.keys = count_cache_keys(cache->get());
    return facts;
}  // coverage: the unwinding of an allocation failure

Outcome TensorRTBuild::attach_timing_cache(Objects& o, trtb_result* result) {
    result->timing_cache_used = 0;
    if ((s_.flags & TRTB_FLAG_DISABLE_TIMING_CACHE) != 0) {
        return ok();
    }
    nvinfer1::IBuilderConfig& config = *o.config;
    const bool strict = (s_.flags & TRTB_FLAG_STRICT_TIMING_CACHE) != 0;
    if (!s_.timing_cache.empty()) {
        tcache::ThreadCapture read(&logger_);
        tcache::LoadFacts facts = read_cache(config, s_.timing_cache, &o.cache, &read);
        tcache::LoadVerdict verdict = tcache::judge_load(facts);
        std::optional<tcache::ThreadCapture> exact;
        if (verdict.kind == tcache::LoadKind::kUsable || verdict.kind == tcache::LoadKind::kEmpty) {
            // As trtexec, but first exactly: a cache TensorRT refuses for this device is used
            // only with a warning (or, strictly, not at all).
            exact.emplace(&logger_);
            facts.exact = config.setTimingCache(*o.cache, false);
            exact->end();
            if (!facts.exact) {
                facts.exact_refusal = texts_of(*exact);
                verdict = tcache::judge_load(facts);
            }
        }
        switch (tcache::load_action(verdict.kind, strict)) {
            case tcache::LoadAction::kAttach:
                // A warning beside the keys read is just a warning: shown as it would have been.
                logger_.release(read);
                if (exact) {
                    logger_.release(*exact);
                }
                given_attached_ = facts.exact;
                result->timing_cache_used = 1;
                return ok();
            case tcache::LoadAction::kAttachIgnoringMismatch: {
                tcache::ThreadCapture loose(&logger_);
                const bool attached = config.setTimingCache(*o.cache, true);
                loose.end();
                if (attached) {
                    logger_.release(read);
                    logger_.release(loose);
                    logger_.note(TRTB_SEVERITY_WARNING, tcache::load_message(verdict, false));
                    result->timing_cache_used = 1;
                    return ok();
                }
                // coverage: the stand-in takes with ignoreMismatch every cache it refuses only for its device
                std::vector<std::string> why = texts_of(loose);
                verdict = {tcache::LoadKind::kForeign,
                           "TensorRT refused it also with ignoreMismatch" +
                               (why.empty() ? std::string() : ": " + join_listed(why))};
                logger_.note(TRTB_SEVERITY_WARNING, tcache::load_message(verdict, false));
                break;
            }
            case tcache::LoadAction::kFail:
                return fail(TRTB_ERR_CACHE_REJECTED, tcache::load_message(verdict, true));
            case tcache::LoadAction::kStartEmpty:
                logger_.note(TRTB_SEVERITY_WARNING, tcache::load_message(verdict, false));
                break;
            // coverage: judge_load answers kNone only for a cache of no bytes, and the one given here has some
            case tcache::LoadAction::kNew:
                break;
        }
        o.cache.reset();  // never attached: the exact attach was not tried, or refused
    }
    const uint64_t mark = logger_.mark();
    o.cache.reset(config.createTimingCache(nullptr, 0));
    if (o.cache == nullptr || !config.setTimingCache(*o.cache, false)) {
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a timing cache: " + errors_since(mark));
    }
    return ok();
}  // coverage: the unwinding of an allocation failure

void TensorRTBuild::save_timing_cache(Objects& o, bool succeeded, trtb_result* result, int64_t keys_before) {
    // The config's cache, as trtexec serializes it (config.getTimingCache(), saveTimingCache in
    // samples/common/sampleEngines.cpp): that setTimingCache keeps a reference to o.cache
    // rather than a copy is implied by the header, not promised.
    const nvinfer1::ITimingCache* cache = o.config != nullptr ? o.config->getTimingCache() : nullptr;
    if (o.cache == nullptr || cache == nullptr) {
        return;
    }
    int64_t keys_after = count_cache_keys(cache);
    if (keys_before >= 0 && keys_after >= keys_before) {
        // New entries are what this build timed because the cache lacked them.
        result->timing_cache_misses = static_cast<uint64_t>(keys_after - keys_before);
    }
    if (keys_after == 0) {
        return;  // nothing timed (a build cancelled before its first timed layer): nothing to save
    }
    if (given_attached_ && keys_before >= 0 && keys_after == keys_before) {
        // The cache is the given one as it was read: its bytes stand for it (borrowed until
        // destroy), and a large cache is not serialized again to say what they say.
        own_is_given_ = true;
        own_keys_ = keys_after;
        return;
    }
    std::unique_ptr<nvinfer1::IHostMemory> blob(cache->serialize());
    if (blob_of(blob.get()).empty()) {
        if (!succeeded) {
            // Serializing after a cancelled or failed build is not documented to work.
            logger_.note(TRTB_SEVERITY_WARNING, "the timing cache could not be saved after the build that did not finish");
        } else {
            logger_.note(TRTB_SEVERITY_WARNING, "TensorRT returned an empty timing cache; it is not saved");
        }
        return;
    }
    if (keys_after < 0) {  // coverage: queryKeys counts the keys of every TensorRT the shim drives (10.8 and newer)
        // Keys cannot be counted (before 10.8): a cache that serializes as a new one does holds
        // none.
        std::unique_ptr<nvinfer1::ITimingCache> fresh(o.config->createTimingCache(nullptr, 0));
        std::unique_ptr<nvinfer1::IHostMemory> empty(fresh != nullptr ? fresh->serialize() : nullptr);
        if (!blob_of(empty.get()).empty() && blob_of(empty.get()) == blob_of(blob.get())) {
            keys_after = 0;
        }
    }
    if (keys_after == 0) {
        return;  // coverage: keys_after is 0 here only when counted above, before 10.8
    }
    own_cache_ = std::move(blob);  // kept as TensorRT made it: no copy of a large cache
    own_keys_ = keys_after;
}

// write_timing_cache combines the cache file's bytes with this build's cache the way trtexec
// updates its --timingCacheFile (updateTimingCacheFile, shared/utils/cacheUtils.cpp): the
// file's cache is deserialized with a new config of the build's own builder (kept after run:
// a second IBuilder would initialise the builder resource again), the build's cache object is
// combined into it with ignoreMismatch=false (so the timings of this device never enter a
// cache of another TensorRT version or device), and the result is serialized and written to
// fd when it differs from the file. It runs after run(), on the caller's thread, which it
// points at the build's device first, never while run() runs. The file's cache and the new
// config are deleted before it returns; they are attached to no builder (so NvInfer.h's
// lifetime rule, a timing cache outlives the builders that use it, holds: the build's cache
// outlives its builder in objects_). A file that holds exactly the given cache (disk_is_given)
// is not read again: the given bytes are still at hand (borrowed until destroy, see trtb.h);
// when the build's cache was made from them and attached exactly, it already holds every entry
// of the file, so it is written as it is, with no second cache in memory (judge_save).
int32_t TensorRTBuild::write_timing_cache(bool disk_is_given, std::string_view disk, int fd,
                                          bool* changed, trtb_status* status) {
    return guarded(status, [&]() -> int32_t {
        const Outcome out = write_cache(disk_is_given, disk, fd, changed);
        return set_status(status, out.code, out.code == TRTB_OK ? std::string() : out.message);
    });
}

Outcome TensorRTBuild::write_cache(bool disk_is_given, std::string_view disk, int fd, bool* changed) {
    *changed = false;
    if (disk_is_given) {
        disk = s_.timing_cache;
    }
    const std::string_view own_bytes =
        own_is_given_ ? std::string_view(s_.timing_cache) : blob_of(own_cache_.get());
    // Nothing to add (the cache was off, nothing was timed, or TensorRT would not serialize
    // it): the file stays as it is, or absent.
    const tcache::SaveAction action =
        own_bytes.empty()
            ? tcache::SaveAction::kNothing
            : tcache::judge_save(tcache::SaveFacts{static_cast<uint64_t>(disk.size()), own_keys_, disk_is_given && given_attached_});
    auto write = [&](std::string_view bytes) -> Outcome {
        *changed = true;
        int err = 0;
        if (fd >= 0 && !platform::write_all(fd, bytes.data(), bytes.size(), &err)) {
            return fail(TRTB_ERR_IO, "writing the timing cache: " + platform::error_text(err));
        }
        return ok();
    };
    switch (action) {
        case tcache::SaveAction::kNothing:
            return ok();
        case tcache::SaveAction::kWriteOwn:
            if (same_bytes(own_bytes, disk)) {
                return ok();  // the build's cache holds the file's and timed nothing new
            }
            return write(own_bytes);
        case tcache::SaveAction::kMerge:
            break;
    }
    if (same_bytes(disk, own_bytes)) {
        return ok();  // the build added nothing the file lacks
    }
    const nvinfer1::ITimingCache* own = objects_.config != nullptr ? objects_.config->getTimingCache() : nullptr;
    if (objects_.builder == nullptr || own == nullptr) {
        return fail(TRTB_ERR_STATE, "the build's timing cache is gone (write_timing_cache before run?)");  // coverage: Go writes the cache only after Run
    }
    // Errors and warnings of the merge reach this build's Logger (for the failure message; the
    // event queue is closed by now, so they are not shown live).
    ProcessLogger::SinkScope sink(logger_);
    if (Outcome out = select_device(); out.code != TRTB_OK) {
        return out;  // coverage: the stand-in CUDA driver never refuses the device it made current for the build
    }
    // The file's cache is declared before the config, so that it outlives it.
    std::unique_ptr<nvinfer1::ITimingCache> on_disk;
    uint64_t mark = logger_.mark();
    std::unique_ptr<nvinfer1::IBuilderConfig> config(objects_.builder->createBuilderConfig());
    if (config == nullptr) {
        // coverage: refusing createBuilderConfig refuses the build's own config first
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not create a builder config to merge the timing cache: " + errors_since(mark));
    }
    tcache::ThreadCapture read(&logger_);
    const tcache::LoadVerdict verdict = tcache::judge_load(read_cache(*config, disk, &on_disk, &read));
    if (verdict.kind == tcache::LoadKind::kForeign) {
        return fail(TRTB_ERR_CACHE_REJECTED, "TensorRT cannot use the timing cache file: " + verdict.why);
    }
    logger_.release(read);
    // trtexec's direction: the build's cache into the file's (updateTimingCacheFile). A file of
    // another device (the build used it ignoring the mismatch) is refused here, and left alone.
    mark = logger_.mark();
    if (!on_disk->combine(*own, false)) {
        return fail(TRTB_ERR_CACHE_REJECTED,
                    "TensorRT refused to combine the timing caches (made by another TensorRT version or device): " +
                        errors_since(mark));
    }
    std::unique_ptr<nvinfer1::IHostMemory> blob(on_disk->serialize());
    const std::string_view merged = blob_of(blob.get());
    if (merged.empty()) {
        // coverage: refusing serialize leaves the build no cache of its own to merge
        return fail(TRTB_ERR_BUILD_FAILED, "TensorRT could not serialize the merged timing cache");
    }
    if (same_bytes(merged, disk)) {
        return ok();
    }
    return write(merged);
}

}  // namespace TRTB_SHIM
}  // namespace trtb
