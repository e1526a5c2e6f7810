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

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trtb {
namespace TRTB_FAKE {

namespace {

constexpr char kMagic[] = "TRTFAKE-TIMING-CACHE 1";

std::string release(int32_t version) {
    return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100);
}

bool hex(std::string_view s, uint64_t* out) {
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

// put_hex16 writes v as 16 lower-case hex digits at out.
void put_hex16(char* out, uint64_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; --i) {
        out[i] = kDigits[v & 0xf];
        v >>= 4;
    }
}

// decimal_digits is how many digits v takes in decimal.
size_t decimal_digits(uint64_t v) {
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        ++n;
    }
    return n;
}

bool key_less(const TimingCacheImpl::Record& a, const TimingCacheImpl::Record& b) { return a.first < b.first; }

}  // namespace

TimingCacheImpl::TimingCacheImpl(ContextPtr ctx, std::string device)
    : VTimingCacheStubs(*ctx), ctx_(std::move(ctx)), device_(std::move(device)) {}

bool TimingCacheImpl::deserialize(std::string_view blob, bool* foreign, std::string* why) {
    *foreign = false;
    size_t at = 0;
    auto line = [&](std::string_view* out) {
        const size_t nl = blob.find('\n', at);
        if (nl == std::string_view::npos) {
            return false;
        }
        *out = blob.substr(at, nl - at);
        at = nl + 1;
        return true;
    };
    std::string_view magic, version, device;
    if (!line(&magic) || magic != kMagic) {
        *why = "Serialization assertion magicTagRead == kMAGIC_TAG failed.Magic tag does not match";
        return false;
    }
    if (!line(&version) || version.substr(0, 9) != "tensorrt " || !line(&device) ||
        device.substr(0, 7) != "device ") {
        *why = "Serialization assertion: the timing cache's header is cut short";
        return false;
    }
    const std::string mine = release(ctx_->version());
    if (version.substr(9) != mine) {
        *foreign = true;
        *why = "The timing cache was created by TensorRT " + std::string(version.substr(9)) + " and TensorRT " +
               mine + " cannot use it. A new timing cache will be used.";
        return false;
    }
    // One entry is about 57 bytes of text and 32 in memory: read in place, into one vector.
    std::vector<Record> entries;
    entries.reserve((blob.size() - at) / 56);
    std::string_view entry;
    while (at < blob.size()) {
        if (!line(&entry)) {
            *why = "Serialization assertion: a timing cache entry is cut short";
            return false;
        }
        const size_t t1 = entry.find('\t'), t2 = entry.find('\t', t1 + 1);
        Record r;
        if (t1 != 32 || t2 == std::string_view::npos || !hex(entry.substr(0, 16), &r.first.first) ||
            !hex(entry.substr(16, 16), &r.first.second) || !hex(entry.substr(t1 + 1, t2 - t1 - 1), &r.second.tactic)) {
            *why = "Serialization assertion: a timing cache entry is malformed";
            return false;
        }
        const std::string_view ns = entry.substr(t2 + 1);
        std::from_chars(ns.data(), ns.data() + ns.size(), r.second.time_ns);
        entries.push_back(r);
    }
    // The cache writes its entries sorted by key; a file that is not is sorted here, and of a
    // key given twice the last entry counts.
    if (!std::is_sorted(entries.begin(), entries.end(), key_less)) {
        std::stable_sort(entries.begin(), entries.end(), key_less);
    }
    size_t kept = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (kept > 0 && entries[kept - 1].first == entries[i].first) {
            entries[kept - 1] = entries[i];
        } else {
            entries[kept++] = entries[i];
        }
    }
    entries.resize(kept);  // not shrunk to fit: that would hold two copies at once
    std::lock_guard<std::mutex> lock(mu_);
    device_ = std::string(device.substr(7));
    sorted_ = std::move(entries);
    added_.clear();
    return true;
}

nvinfer1::IHostMemory* TimingCacheImpl::serialize() const noexcept {
    return api_guard(*ctx_, "ITimingCache::serialize", static_cast<nvinfer1::IHostMemory*>(nullptr), [&] {
        std::string out = std::string(kMagic) + "\ntensorrt " + release(ctx_->version()) + "\n";
        size_t n = 0;
        {
            std::lock_guard<std::mutex> lock(mu_);
            out += "device " + device_ + "\n";
            // The exact size first: a large cache's text is made once, in place.
            size_t bytes = out.size();
            each_locked([&](const CacheKey&, const CacheEntry& e) { bytes += 32 + 1 + 16 + 1 + decimal_digits(e.time_ns) + 1; });
            size_t pos = out.size();
            out.resize(bytes);
            each_locked([&](const CacheKey& k, const CacheEntry& e) {
                char* p = &out[pos];
                put_hex16(p, k.first);
                put_hex16(p + 16, k.second);
                p[32] = '\t';
                put_hex16(p + 33, e.tactic);
                p[49] = '\t';
                p = std::to_chars(p + 50, out.data() + out.size(), e.time_ns).ptr;
                *p++ = '\n';
                pos = static_cast<size_t>(p - out.data());
            });
            n = count_locked();
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
        std::scoped_lock lock(mu_, in.mu_);
        if (in.device_ != device_ && !ignore_mismatch) {
            ctx_->error(ErrorCode::kINVALID_ARGUMENT, "ITimingCache::combine", "API Usage Error",
                        "the timing caches were created on different devices (" + in.device_ + ", " + device_ +
                            "); set ignoreMismatch to combine them anyway");
            return false;
        }
        // The entries this cache lacks, in key order; existing keys keep their entries.
        std::vector<Record> theirs;
        in.each_locked([&](const CacheKey& k, const CacheEntry& e) {
            if (lookup_locked(k) == nullptr) {
                theirs.emplace_back(k, e);
            }
        });
        const auto middle = static_cast<std::ptrdiff_t>(sorted_.size());
        sorted_.insert(sorted_.end(), theirs.begin(), theirs.end());
        std::inplace_merge(sorted_.begin(), sorted_.begin() + middle, sorted_.end(), key_less);
        return true;
    });
}

int64_t TimingCacheImpl::queryKeys(nvinfer1::TimingCacheKey* keys, int64_t capacity) const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (keys != nullptr) {
        int64_t i = 0;
        each_locked([&](const CacheKey& k, const CacheEntry&) {
            if (i >= capacity) {
                return;
            }
            for (int b = 0; b < 8; ++b) {
                keys[i].data[b] = static_cast<uint8_t>(k.first >> (56 - 8 * b));
                keys[i].data[8 + b] = static_cast<uint8_t>(k.second >> (56 - 8 * b));
            }
            ++i;
        });
    }
    return static_cast<int64_t>(count_locked());
}

bool TimingCacheImpl::find(const CacheKey& key, CacheEntry* out) const {
    std::lock_guard<std::mutex> lock(mu_);
    const CacheEntry* e = lookup_locked(key);
    if (e == nullptr) {
        return false;
    }
    *out = *e;
    return true;
}

void TimingCacheImpl::insert(const CacheKey& key, const CacheEntry& e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (lookup_locked(key) == nullptr) {
        added_.emplace(key, e);
    }
}

size_t TimingCacheImpl::count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return count_locked();
}

const CacheEntry* TimingCacheImpl::lookup_locked(const CacheKey& key) const {
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), Record{key, CacheEntry{}}, key_less);
    if (it != sorted_.end() && it->first == key) {
        return &it->second;
    }
    const auto a = added_.find(key);
    return a != added_.end() ? &a->second : nullptr;
}

size_t TimingCacheImpl::count_locked() const { return sorted_.size() + added_.size(); }

}  // namespace TRTB_FAKE
}  // namespace trtb
