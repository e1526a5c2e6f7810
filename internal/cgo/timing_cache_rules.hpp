// timing_cache_rules.hpp: the timing cache's decisions, apart from TensorRT: whether a cache
// TensorRT was given can be used (and how), and whether a build's cache is worth saving. The
// TensorRT shim gathers the facts (what createTimingCache returned, what the calling thread
// logged meanwhile, the key count, whether setTimingCache refused a mismatch) and acts on the
// verdicts; the simulated builder applies the same saving rule. It includes no TensorRT or CUDA
// header, so it is compiled into every binary and its rules are tested without TensorRT
// (trtb_test_timing_cache_load and _save in trtb_bench.h).
//
// The rules, in short:
//   - 0 bytes is no cache; a valid cache with no key is a cache, just empty;
//   - a cache is refused (foreign) only for what the thread that read it saw: no object, an
//     error, or a warning together with no key read (or no way to count them). What other
//     threads log meanwhile says nothing about it;
//   - a key count of -1 means "cannot count" (before TensorRT 10.8, or queryKeys failed), never
//     "foreign";
//   - a cache TensorRT reads but refuses to attach exactly (setTimingCache(cache, false) is
//     false: made on another GPU or CUDA) is attached with ignoreMismatch, as trtexec does, with
//     a warning; --strict-cache refuses it, and any other cache the builder cannot use, before
//     the build starts;
//   - nothing timed is nothing to save: a build whose cache holds no key writes nothing, so a
//     build cancelled before its first timed layer never creates a cache file.
#ifndef TRTB_TIMING_CACHE_RULES_HPP
#define TRTB_TIMING_CACHE_RULES_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace trtb {
namespace tcache {

// ThreadCapture collects the errors and warnings that one log (owner: the shim's Logger, say)
// is given on the thread that made the capture, while the capture lives: what TensorRT said
// about the call that thread is making. Lines other threads log meanwhile (TensorRT's own
// threads, or another part of the build) are not captured. While a capture holds, the log keeps
// the captured lines back from its live stream (the log's note asks record, and queues only
// what record did not take); the caller quotes them in its verdict or hands them on with
// release_to afterwards.
//
// Threading: made, used and destroyed on one thread; captures nest (the innermost records).
// record may be called from any thread, and takes only lines of its own thread's capture.
class ThreadCapture {
public:
    struct Line {
        int32_t severity;  // trtb_severity
        std::string text;
    };

    explicit ThreadCapture(const void* owner);
    ~ThreadCapture();
    ThreadCapture(const ThreadCapture&) = delete;
    ThreadCapture& operator=(const ThreadCapture&) = delete;

    // record keeps text when the calling thread has a capture of owner and severity is an
    // error or a warning, and returns whether it did. It copies text; it never throws (a line
    // it cannot copy is not taken).
    static bool record(const void* owner, int32_t severity, const char* text) noexcept;

    // errors and warnings return the texts captured so far, oldest first.
    std::vector<std::string> errors() const;
    std::vector<std::string> warnings() const;
    const std::vector<Line>& lines() const { return lines_; }

    // end stops capturing (the destructor does it too): lines logged afterwards go live.
    void end() noexcept;

private:
    const void* owner_;
    ThreadCapture* outer_;
    bool active_ = true;
    std::vector<Line> lines_;
};

// LoadFacts is what TensorRT did with a serialized cache it was given.
struct LoadFacts {
    uint64_t size = 0;                       // bytes given; 0: none
    bool created = false;                    // createTimingCache returned an object
    std::vector<std::string> errors;         // errors the calling thread logged during it
    std::vector<std::string> warnings;       // warnings the calling thread logged during it
    int64_t keys = -1;                       // ITimingCache::queryKeys; -1: cannot count
    bool exact = true;                       // setTimingCache(cache, false) succeeded (or not tried)
    std::vector<std::string> exact_refusal;  // errors and warnings the calling thread logged when it refused
};

// LoadKind is what a given cache is.
enum class LoadKind {
    kNone,      // no bytes: build from a new cache
    kUsable,    // a cache with keys (or that cannot be counted) for this device
    kEmpty,     // a valid cache with no key: used, and merged into like any other
    kMismatch,  // readable, but made on another GPU or CUDA version
    kForeign,   // not a cache TensorRT can read (corrupt, another version)
};

// LoadVerdict is judge_load's answer: the kind and, for kMismatch and kForeign, why (TensorRT's
// words where it gave any, quoted on one line).
struct LoadVerdict {
    LoadKind kind = LoadKind::kNone;
    std::string why;
};

// judge_load decides what a given cache is from what TensorRT did with it.
LoadVerdict judge_load(const LoadFacts& f);

// LoadAction is what a build does with a cache of a kind.
enum class LoadAction {
    kNew,                     // create an empty cache and attach it
    kAttach,                  // attach it exactly (ignoreMismatch=false succeeded)
    kAttachIgnoringMismatch,  // attach it with ignoreMismatch=true, and warn
    kStartEmpty,              // warn, and build from an empty cache (the file is never replaced)
    kFail,                    // --strict-cache: fail before building (TRTB_ERR_CACHE_REJECTED)
};

// load_action maps a kind to the action, strictly (--strict-cache) or not.
LoadAction load_action(LoadKind kind, bool strict);

// load_message is the one-line warning for a cache of kind kMismatch or kForeign, with why; ""
// for the kinds that need none. Strictly it is the error instead, worded to follow
// "timing cache <file> " (the caller names the file).
std::string load_message(const LoadVerdict& v, bool strict);

// SaveFacts is what is known when a build's cache may be written into the cache file.
struct SaveFacts {
    uint64_t file_size = 0;  // bytes the file holds; 0: no file, or an empty one
    int64_t build_keys = -1; // keys the build's cache holds (given and timed); -1: cannot count
    // holds_file: the file holds exactly the cache the build was given, and the build's cache
    // was read from those bytes and attached as it was (no ignoreMismatch), so it holds every
    // entry of the file and keeps them: writing it is the merge, without reading the file.
    bool holds_file = false;
};

// SaveAction is what to do with the build's cache.
enum class SaveAction {
    kNothing,    // nothing timed is nothing to save: the file stays as it is (or absent)
    kWriteOwn,   // no cache in the file, or the build's holds it: the build's cache becomes the file
    kMerge,      // combine the build's cache into the file's, and write it if that changed it
};

// judge_save decides whether and how the build's cache is saved.
SaveAction judge_save(const SaveFacts& f);

}  // namespace tcache
}  // namespace trtb

#endif  // TRTB_TIMING_CACHE_RULES_HPP
