// timing_cache.cpp: the stand-in's timing cache (objects.hpp). Its serialized form is text:
//
//   TRTFAKE-TIMING-CACHE 1\n
//   tensorrt <major>.<minor>\n          the TensorRT that made it: another one cannot read it
//   device <device>\n                    the device it was timed on (Settings::device)
//   <key, 32 hex digits>\t<tactic, 16 hex digits>\t<nanoseconds>\n   one line per entry, by key
//
// As TensorRT's: a cache of another TensorRT version is not read (createTimingCache warns and
// starts empty), one of another device is attached or combined only with ignoreMismatch, and
// combine adds the entries this cache lacks and keeps its own where both have one.

#include "objects.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

namespace trtb {
namespace TRTB_FAKE {

namespace {

constexpr char kMagic[] = "TRTFAKE-TIMING-CACHE 1";

std::string release(int32_t version) {
    return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100);
}

bool hex(const std::string& s, uint64_t* out) {
    if (s.empty() || s.size() > 16) {
        return false;
    }
    uint64_t v = 0;
    for (char c : s) {
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) {
            return false;
        }
        v = v << 4 | static_cast<uint64_t>(d);
    }
    *out = v;
    return true;
}

std::string hex16(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
    return buf;
}

}  // namespace

TimingCacheImpl::TimingCacheImpl(ContextPtr ctx, std::string device)
    : VTimingCacheStubs(*ctx), ctx_(std::move(ctx)), device_(std::move(device)) {}

bool TimingCacheImpl::deserialize(const std::string& blob, bool* foreign, std::string* why) {
    *foreign = false;
    size_t at = 0;
    auto line = [&](std::string* out) {
        const size_t nl = blob.find('\n', at);
        if (nl == std::string::npos) {
            return false;
        }
        *out = blob.substr(at, nl - at);
        at = nl + 1;
        return true;
    };
    std::string magic, version, device;
    if (!line(&magic) || magic != kMagic) {
        *why = "Serialization assertion magicTagRead == kMAGIC_TAG failed.Magic tag does not match";
        return false;
    }
    if (!line(&version) || version.compare(0, 9, "tensorrt ") != 0 || !line(&device) ||
        device.compare(0, 7, "device ") != 0) {
        *why = "Serialization assertion: the timing cache's header is cut short";
        return false;
    }
    const std::string mine = release(ctx_->version());
    if (version.substr(9) != mine) {
        *foreign = true;
        *why = "The timing cache was created by TensorRT " + version.substr(9) + " and TensorRT " + mine +
               " cannot use it. A new timing cache will be used.";
        return false;
    }
    std::map<CacheKey, CacheEntry> entries;
    std::string entry;
    while (at < blob.size()) {
        if (!line(&entry)) {
            *why = "Serialization assertion: a timing cache entry is cut short";
            return false;
        }
        const size_t t1 = entry.find('\t'), t2 = entry.find('\t', t1 + 1);
        CacheKey key;
        CacheEntry e;
        if (t1 != 32 || t2 == std::string::npos || !hex(entry.substr(0, 16), &key.first) ||
            !hex(entry.substr(16, 16), &key.second) || !hex(entry.substr(t1 + 1, t2 - t1 - 1), &e.tactic)) {
            *why = "Serialization assertion: a timing cache entry is malformed";
            return false;
        }
        e.time_ns = std::strtoull(entry.c_str() + t2 + 1, nullptr, 10);
        entries[key] = e;
    }
    std::lock_guard<std::mutex> lock(mu_);
    device_ = device.substr(7);
    entries_ = std::move(entries);
    return true;
}

nvinfer1::IHostMemory* TimingCacheImpl::serialize() const noexcept {
    return api_guard(*ctx_, "ITimingCache::serialize", static_cast<nvinfer1::IHostMemory*>(nullptr), [&] {
        std::string out = std::string(kMagic) + "\ntensorrt " + release(ctx_->version()) + "\n";
        size_t n = 0;
        {
            std::lock_guard<std::mutex> lock(mu_);
            out += "device " + device_ + "\n";
            for (const auto& kv : entries_) {
                out += hex16(kv.first.first) + hex16(kv.first.second) + "\t" + hex16(kv.second.tactic) + "\t" +
                       std::to_string(kv.second.time_ns) + "\n";
            }
            n = entries_.size();
        }
        ctx_->log(Severity::kVERBOSE, "Serialized " + std::to_string(n) + " timing cache entries");
        return static_cast<nvinfer1::IHostMemory*>(new HostMemory(ctx_, std::move(out)));
    });
}

bool TimingCacheImpl::combine(nvinfer1::ITimingCache const& input, bool ignore_mismatch) noexcept {
    return api_guard(*ctx_, "ITimingCache::combine", false, [&] {
        const TimingCacheImpl& in = static_cast<TimingCache const&>(input).impl();
        if (&in == this) {
            return true;
        }
        std::map<CacheKey, CacheEntry> theirs;
        std::string device;
        {
            std::lock_guard<std::mutex> lock(in.mu_);
            theirs = in.entries_;
            device = in.device_;
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (device != device_ && !ignore_mismatch) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "ITimingCache::combine", "API Usage Error",
                        "the timing caches were created on different devices (" + device + ", " + device_ +
                            "); set ignoreMismatch to combine them anyway");
            return false;
        }
        entries_.insert(theirs.begin(), theirs.end());  // existing keys keep their entries
        return true;
    });
}

int64_t TimingCacheImpl::queryKeys(nvinfer1::TimingCacheKey* keys, int64_t capacity) const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (keys != nullptr) {
        int64_t i = 0;
        for (const auto& kv : entries_) {
            if (i >= capacity) {
                break;
            }
            for (int b = 0; b < 8; ++b) {
                keys[i].data[b] = static_cast<uint8_t>(kv.first.first >> (56 - 8 * b));
                keys[i].data[8 + b] = static_cast<uint8_t>(kv.first.second >> (56 - 8 * b));
            }
            ++i;
        }
    }
    return static_cast<int64_t>(entries_.size());
}

bool TimingCacheImpl::find(const CacheKey& key, CacheEntry* out) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = entries_.find(key);
    if (it == entries_.end()) {
        return false;
    }
    *out = it->second;
    return true;
}

void TimingCacheImpl::insert(const CacheKey& key, const CacheEntry& e) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.emplace(key, e);
}

size_t TimingCacheImpl::count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
}

}  // namespace TRTB_FAKE
}  // namespace trtb
