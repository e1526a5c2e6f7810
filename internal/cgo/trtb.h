/*
 * trtb.h: the C boundary between trtbuild's Go build worker and an engine builder.
 *
 * One implementation sits behind this header: the TensorRT shim (shim/, one per major), which
 * builds over the TensorRT libraries the process loaded (TRTB_BACKEND_TENSORRT) or over the
 * stand-in TensorRT compiled into the binary (trtfake/, TRTB_BACKEND_SIM: a simulated build).
 *
 * Rules that hold for every function here:
 *   - No C++ type and no TensorRT type or enum value appears in this header. Every enum is
 *     trtbuild's own and is mapped to TensorRT names inside the shim.
 *   - No C++ exception crosses this boundary: every entry point runs its body through one
 *     guarded-call helper (trtb::guarded, trtb_internal.hpp), which reports std::bad_alloc as
 *     TRTB_ERR_OUT_OF_MEMORY and any other exception as TRTB_ERR_INTERNAL with its text.
 *   - No Go code is ever called from here. Builder threads (TensorRT's, or the stand-in's)
 *     only copy events into a bounded queue owned by the trtb_build (and, the first time they
 *     push after the drainer went to sleep, wake it with one condition-variable notify); Go
 *     takes the events out in batches with trtb_build_drain from a goroutine of its own.
 *   - One implementation: both backends are the TensorRT shim (over a loaded TensorRT, or over
 *     the stand-in), so an option is refused with the same message whichever backend gets it.
 *   - Strings passed in are copied before the call returns; the caller may free them at once.
 *
 * Life of a build (see each function for its threading rule):
 *
 *     trtb_build_create -> trtb_build_run (blocking, one thread)
 *                          trtb_build_drain (another thread, in a loop until batch.done)
 *                          trtb_build_cancel (any thread, any time)
 *                       -> trtb_build_write_timing_cache (optional)
 *                       -> trtb_build_destroy
 */
#ifndef TRTB_H
#define TRTB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TRTB_ABI_VERSION changes whenever a struct or a function in this header changes. */
#define TRTB_ABI_VERSION 6

/* Status codes. TRTB_OK is zero; every other value is a failure of the named kind. */
typedef enum trtb_code {
    TRTB_OK = 0,
    TRTB_ERR_INVALID_ARGUMENT = 1, /* an option is malformed or out of range */
    TRTB_ERR_UNAVAILABLE = 2,      /* the backend is not compiled in, or its library cannot be used */
    TRTB_ERR_VERSION_MISMATCH = 3, /* compiled against one TensorRT major, loaded another */
    TRTB_ERR_PARSE = 4,            /* the model could not be parsed */
    TRTB_ERR_UNSUPPORTED = 5,      /* the option exists but this backend or version cannot do it */
    TRTB_ERR_BUILD_FAILED = 6,     /* the builder ran and returned no engine */
    TRTB_ERR_CANCELLED = 7,        /* trtb_build_cancel was called and the builder stopped */
    TRTB_ERR_IO = 8,               /* reading the model or writing the plan failed */
    TRTB_ERR_OUT_OF_MEMORY = 9,    /* host or device allocation failed */
    TRTB_ERR_INTERNAL = 10,        /* an exception or an impossible state inside the builder */
    TRTB_ERR_STATE = 11,           /* a function was called out of order (run twice, drain after destroy) */
    TRTB_ERR_CACHE_REJECTED = 12   /* a timing cache to merge is corrupt, or made by another builder,
                                      TensorRT version or device */
} trtb_code;

/* TRTB_MESSAGE_MAX bounds trtb_status.message, including the terminating NUL. */
#define TRTB_MESSAGE_MAX 2048

/*
 * trtb_status carries a code and a human-readable message. Functions that take a trtb_status*
 * always fill it (code TRTB_OK and an empty message on success) and also return the code.
 * The message is NUL-terminated and truncated to fit.
 */
typedef struct trtb_status {
    int32_t code;
    char message[TRTB_MESSAGE_MAX];
} trtb_status;

/* Builders that may sit behind this header: both are the TensorRT shim, over the TensorRT
 * libraries the process loaded (TENSORRT) or over the stand-in TensorRT compiled in (SIM). */
typedef enum trtb_backend {
    TRTB_BACKEND_SIM = 1,
    TRTB_BACKEND_TENSORRT = 2
} trtb_backend;

/* Log severities, most severe first. The shim maps TensorRT's ILogger::Severity onto these. */
typedef enum trtb_severity {
    TRTB_SEVERITY_INTERNAL_ERROR = 0,
    TRTB_SEVERITY_ERROR = 1,
    TRTB_SEVERITY_WARNING = 2,
    TRTB_SEVERITY_INFO = 3,
    TRTB_SEVERITY_VERBOSE = 4
} trtb_severity;

/* Precision requests (bits of trtb_options.precision). Their meaning depends on the backend's
 * TensorRT major: 10.x maps them to builder flags; 11.x has no such flags and the shim refuses
 * them with TRTB_ERR_UNSUPPORTED (the Go side converts the model instead). */
typedef enum trtb_precision {
    TRTB_PRECISION_FP16 = 1 << 0,
    TRTB_PRECISION_BF16 = 1 << 1,
    TRTB_PRECISION_INT8 = 1 << 2,
    TRTB_PRECISION_FP8 = 1 << 3
} trtb_precision;

/* Builder switches (bits of trtb_options.flags). */
typedef enum trtb_flag {
    TRTB_FLAG_NO_TF32 = 1 << 0,                   /* clear TF32 */
    TRTB_FLAG_REFIT = 1 << 1,                     /* refittable engine */
    TRTB_FLAG_STRIP_WEIGHTS = 1 << 2,             /* strip refittable weights from the plan */
    TRTB_FLAG_VERSION_COMPATIBLE = 1 << 3,        /* version-compatible engine */
    TRTB_FLAG_EXCLUDE_LEAN_RUNTIME = 1 << 4,      /* with VERSION_COMPATIBLE: leave out the lean runtime */
    TRTB_FLAG_SPARSE_WEIGHTS = 1 << 5,            /* allow structured-sparsity tactics */
    TRTB_FLAG_DISABLE_TIMING_CACHE = 1 << 6,      /* use no timing cache at all */
    TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS = 1 << 7, /* fail when a tactic is not in the cache */
    TRTB_FLAG_STRICT_TIMING_CACHE = 1 << 8        /* --strict-cache: a given timing cache the builder
                                                     cannot use exactly (corrupt, of another version,
                                                     or made on another device) fails the build
                                                     before it starts, with TRTB_ERR_CACHE_REJECTED,
                                                     instead of a warning */
} trtb_flag;

/* Hardware compatibility levels (trtb_options.hardware_compat). */
typedef enum trtb_hardware_compat {
    TRTB_HARDWARE_COMPAT_NONE = 0,
    TRTB_HARDWARE_COMPAT_AMPERE_PLUS = 1,
    TRTB_HARDWARE_COMPAT_SAME_COMPUTE_CAPABILITY = 2
} trtb_hardware_compat;

/* TRTB_MAX_DIMS is the largest rank a shape may have (TensorRT's Dims::MAX_DIMS). */
#define TRTB_MAX_DIMS 8

/* One input's dimensions in an optimization profile. The three arrays hold nb_dims values. */
typedef struct trtb_shape {
    const char *input;
    int32_t nb_dims;
    int64_t min[TRTB_MAX_DIMS];
    int64_t opt[TRTB_MAX_DIMS];
    int64_t max[TRTB_MAX_DIMS];
} trtb_shape;

/* One optimization profile: the shapes of the model's dynamic inputs. */
typedef struct trtb_profile {
    const trtb_shape *shapes;
    int32_t nb_shapes;
} trtb_profile;

/*
 * A simulated build (TRTB_BACKEND_SIM) is a TensorRT build through the shim over the stand-in
 * TensorRT compiled into the binary (trtb_fake.h): these say which major it plays and how it
 * behaves beyond what the model and the options decide.
 */
typedef struct trtb_sim_options {
    int32_t tensorrt_major;  /* 10 or 11; 0: 11. A process plays one major: the first simulated
                                build installs its stand-in, and a build of the other major, or
                                one in a process that loaded TensorRT, is TRTB_ERR_STATE */
    const char *settings;    /* the stand-in's settings, "key=value;key=value"
                                (trtfake/trtfake.hpp); NULL or "": its defaults. They hold for
                                this build only */
} trtb_sim_options;

/* Data types, for I/O formats and layer precisions; trtexec's names in the comments. */
typedef enum trtb_data_type {
    TRTB_TYPE_FP32 = 1,  /* fp32 */
    TRTB_TYPE_FP16 = 2,  /* fp16 */
    TRTB_TYPE_BF16 = 3,  /* bf16 */
    TRTB_TYPE_INT8 = 4,  /* int8 */
    TRTB_TYPE_FP8 = 5,   /* fp8 */
    TRTB_TYPE_INT32 = 6, /* int32 */
    TRTB_TYPE_INT64 = 7, /* int64 */
    TRTB_TYPE_BOOL = 8,  /* bool */
    TRTB_TYPE_UINT8 = 9, /* uint8 */
    TRTB_TYPE_INT4 = 10  /* int4 */
} trtb_data_type;

/* Tensor formats (bits of trtb_io_format.formats); trtexec's names in the comments. The shim
 * maps each to the TensorFormat of the same name (CHW is kLINEAR). */
typedef enum trtb_tensor_format {
    TRTB_FORMAT_CHW = 1 << 0,         /* chw */
    TRTB_FORMAT_CHW2 = 1 << 1,        /* chw2 */
    TRTB_FORMAT_HWC8 = 1 << 2,        /* hwc8 */
    TRTB_FORMAT_CHW4 = 1 << 3,        /* chw4 */
    TRTB_FORMAT_CHW16 = 1 << 4,       /* chw16 */
    TRTB_FORMAT_CHW32 = 1 << 5,       /* chw32 */
    TRTB_FORMAT_DHWC8 = 1 << 6,       /* dhwc8 */
    TRTB_FORMAT_CDHW32 = 1 << 7,      /* cdhw32 */
    TRTB_FORMAT_HWC = 1 << 8,         /* hwc */
    TRTB_FORMAT_DLA_LINEAR = 1 << 9,  /* dla_linear */
    TRTB_FORMAT_DLA_HWC4 = 1 << 10,   /* dla_hwc4 */
    TRTB_FORMAT_HWC16 = 1 << 11,      /* hwc16 */
    TRTB_FORMAT_DHWC = 1 << 12        /* dhwc */
} trtb_tensor_format;

/* One network input's or output's type and allowed formats (ITensor::setType and
 * setAllowedFormats). */
typedef struct trtb_io_format {
    int32_t type;     /* trtb_data_type */
    uint32_t formats; /* trtb_tensor_format bits, at least one */
} trtb_io_format;

/* One layer's precision (ILayer::setPrecision). layer "*" means every layer. */
typedef struct trtb_layer_precision {
    const char *layer;
    int32_t type; /* trtb_data_type */
} trtb_layer_precision;

/* How strictly the builder keeps layer precisions (TensorRT 10's kPREFER_ and
 * kOBEY_PRECISION_CONSTRAINTS). */
typedef enum trtb_precision_constraints {
    TRTB_PRECISION_CONSTRAINTS_NONE = 0,
    TRTB_PRECISION_CONSTRAINTS_PREFER = 1,
    TRTB_PRECISION_CONSTRAINTS_OBEY = 2
} trtb_precision_constraints;

/* IBuilderConfig::setProfilingVerbosity; DEFAULT leaves TensorRT's. */
typedef enum trtb_profiling_verbosity {
    TRTB_PROFILING_DEFAULT = 0,
    TRTB_PROFILING_LAYER_NAMES_ONLY = 1,
    TRTB_PROFILING_NONE = 2,
    TRTB_PROFILING_DETAILED = 3
} trtb_profiling_verbosity;

/* Tactic sources (bits of trtb_options.tactic_sources_on/off). CUBLAS, CUBLAS_LT and CUDNN
 * exist in TensorRT 10 only. */
typedef enum trtb_tactic_source {
    TRTB_TACTIC_CUBLAS = 1 << 0,
    TRTB_TACTIC_CUBLAS_LT = 1 << 1,
    TRTB_TACTIC_CUDNN = 1 << 2,
    TRTB_TACTIC_EDGE_MASK_CONVOLUTIONS = 1 << 3,
    TRTB_TACTIC_JIT_CONVOLUTIONS = 1 << 4
} trtb_tactic_source;

/* Memory pools besides the workspace (bits of trtb_options.pools_set). */
typedef enum trtb_pool {
    TRTB_POOL_TACTIC_SHARED_MEMORY = 1 << 0, /* trtexec tacticSharedMem */
    TRTB_POOL_DLA_MANAGED_SRAM = 1 << 1,     /* dlaSRAM */
    TRTB_POOL_DLA_LOCAL_DRAM = 1 << 2,       /* dlaLocalDRAM */
    TRTB_POOL_DLA_GLOBAL_DRAM = 1 << 3       /* dlaGlobalDRAM */
} trtb_pool;

/*
 * Everything a build needs. Zero means "the builder's default" for every numeric field unless
 * the comment says otherwise. trtb_build_create copies what it keeps; nothing here needs to
 * outlive that call.
 */
typedef struct trtb_options {
    uint32_t size;                     /* sizeof(trtb_options), checked by trtb_build_create */
    const char *model_path;            /* the ONNX file; external data resolves next to it */
    int32_t plan_fd;                   /* an open, writable, empty file: the plan is written here.
                                          The builder neither closes nor renames it; the caller
                                          commits or discards the file. */
    int32_t log_severity;              /* forward log messages up to and including this severity */
    int32_t device;                    /* CUDA device ordinal */
    uint32_t precision;                /* trtb_precision bits */
    uint32_t flags;                    /* trtb_flag bits */
    int32_t opt_level;                 /* builder optimization level 0..5; -1: default */
    int32_t max_aux_streams;           /* -1: default */
    int32_t hardware_compat;           /* trtb_hardware_compat */
    uint64_t workspace_bytes;          /* workspace pool limit; 0: default */
    const trtb_profile *profiles;      /* optimization profiles; NULL with nb_profiles 0 */
    int32_t nb_profiles;
    const char *const *plugin_paths;   /* plugin libraries to load; this runs their code */
    int32_t nb_plugin_paths;
    const void *timing_cache;          /* a serialized timing cache to start from; may be NULL.
                                        * Borrowed, not copied (a cache can be hundreds of MB):
                                        * it must stay valid and unchanged until
                                        * trtb_build_destroy (ABI 4) */
    uint64_t timing_cache_size;
    const trtb_sim_options *sim;       /* TRTB_BACKEND_SIM's stand-in; NULL: defaults */

    /* trtexec's other build settings (ABI 3). Zero leaves TensorRT's default. */
    const trtb_io_format *input_formats;  /* nb_input_formats: 1 (for every input) or one per
                                             network input, in order; NULL with 0: none */
    int32_t nb_input_formats;
    const trtb_io_format *output_formats; /* the same for the network's outputs */
    int32_t nb_output_formats;
    int32_t precision_constraints;        /* trtb_precision_constraints (TensorRT 10 only) */
    const trtb_layer_precision *layer_precisions; /* needs precision_constraints (TensorRT 10 only) */
    int32_t nb_layer_precisions;
    int32_t profiling_verbosity;          /* trtb_profiling_verbosity */
    uint32_t tactic_sources_on;           /* trtb_tactic_source bits to enable */
    uint32_t tactic_sources_off;          /* trtb_tactic_source bits to disable */
    int32_t use_dla;                      /* nonzero: build for DLA core dla_core */
    int32_t dla_core;
    int32_t gpu_fallback;                 /* with use_dla: layers DLA cannot run go to the GPU */
    int32_t strongly_typed;               /* nonzero: TensorRT 10's kSTRONGLY_TYPED network (11
                                             networks always are) */
    int32_t best;                         /* nonzero: TensorRT 10 enables every precision */
    uint32_t pools_set;                   /* trtb_pool bits: which sizes below are given */
    uint64_t tactic_shared_memory_bytes;
    uint64_t dla_managed_sram_bytes;
    uint64_t dla_local_dram_bytes;
    uint64_t dla_global_dram_bytes;

    /* Tactic timing and TensorRT 11's build route (ABI 5). */
    int32_t avg_timing;                   /* averaging iterations of every tactic's timing
                                             (IBuilderConfig::setAvgTimingIterations; trtexec
                                             uses 8); 0: TensorRT's default (1) */
    const char *build_route;              /* IBuilderConfig::setBuildRoute (TensorRT 11.1 and
                                             newer; refused with TRTB_ERR_UNSUPPORTED before),
                                             such as "-conv_use_long_w=off"; NULL or "": none */
} trtb_options;

/* Kinds of trtb_event. */
typedef enum trtb_event_kind {
    TRTB_EVENT_PHASE_START = 1,  /* name, parent (if has_parent), nb_steps */
    TRTB_EVENT_STEP = 2,         /* name, step: the step just completed, as reported */
    TRTB_EVENT_PHASE_FINISH = 3, /* name */
    TRTB_EVENT_LOG = 4           /* name holds the message, severity its level */
} trtb_event_kind;

/*
 * One queued event. Text lives in the trtb_batch's text buffer at [off, off+len); it is not
 * NUL-terminated. thread is a small number (1, 2, ...) that names the reporting thread for the
 * life of the build; the Go side uses it to tell apart equally named phases of parallel threads.
 */
typedef struct trtb_event {
    int32_t kind;
    int32_t severity;
    int32_t nb_steps;
    int32_t step;
    uint64_t thread;
    int64_t time_ns;   /* steady-clock nanoseconds since trtb_build_create */
    uint32_t name_off;
    uint32_t name_len;
    uint32_t parent_off;
    uint32_t parent_len;
    int32_t has_parent;
    int32_t reserved;
} trtb_event;

/* TRTB_NAME_MAX bounds one phase name or log message in bytes; longer ones are cut. */
#define TRTB_NAME_MAX 4096

/*
 * A caller-owned buffer that trtb_build_drain fills. The caller sets events, capacity, text and
 * text_capacity (at least TRTB_NAME_MAX * 2); drain sets count, text_len, dropped_steps and done.
 */
typedef struct trtb_batch {
    trtb_event *events;
    int32_t capacity;
    int32_t count;
    char *text;
    uint32_t text_capacity;
    uint32_t text_len;
    uint64_t dropped_steps; /* step events dropped so far because the queue was full */
    uint64_t dropped_logs[5]; /* log lines dropped so far because the queue was full, indexed
                                 by trtb_severity (phase starts and finishes are never dropped) */
    int32_t done;           /* 1: the build has returned and every event has been handed out */
    int32_t reserved;
} trtb_batch;

/* The result of trtb_build_run. */
typedef struct trtb_result {
    int32_t code;                 /* same as the returned code */
    int32_t timing_cache_used;    /* 1: the given timing cache was accepted */
    uint64_t plan_bytes;          /* bytes written to plan_fd */
    uint64_t timing_cache_hits;   /* tactics found in the cache (when the backend can tell) */
    uint64_t timing_cache_misses; /* tactics timed because they were not in the cache */
    int64_t cancel_seen_ns;       /* steady clock (CLOCK_MONOTONIC on Linux), nanoseconds since its
                                     epoch, when a builder thread first saw the cancel request at a
                                     step boundary; 0 if none did */
} trtb_result;

/* Versions and the device, for `trtbuild version` and for choosing the precision path. */
typedef struct trtb_version_info {
    char backend[32];          /* "sim" or "tensorrt" */
    int32_t compiled_version;  /* NV_TENSORRT_VERSION-style major*10000+minor*100+patch; 0 for sim */
    int32_t loaded_version;    /* what the loaded library reports; 0 for sim */
    int32_t onnx_parser_version;
    int32_t device_count;      /* CUDA devices seen; 0 without a GPU */
    char device_name[256];     /* of the device asked for; empty without a GPU */
    int32_t compute_major;
    int32_t compute_minor;
    int32_t multiprocessor_count; /* the device's SMs (fewer on a MIG slice); 0 without a GPU */
} trtb_version_info;

/* trtb_build is an opaque handle to one build. */
typedef struct trtb_build trtb_build;

/* trtb_backend_available returns 1 if the backend is compiled into this binary, else 0.
 * Any thread. Loads no library. */
int32_t trtb_backend_available(int32_t backend);

/* trtb_version fills info for the backend and the device numbered device. For TensorRT this
 * loads the library, compares versions and queries CUDA; a major-version mismatch is
 * TRTB_ERR_VERSION_MISMATCH. Any thread. */
int32_t trtb_version(int32_t backend, int32_t device, trtb_version_info *info, trtb_status *status);

/* trtb_build_create checks the options and prepares a build without starting it.
 * On success *out owns a handle the caller must pass to trtb_build_destroy exactly once. */
int32_t trtb_build_create(int32_t backend, const trtb_options *options, trtb_build **out,
                          trtb_status *status);

/* trtb_build_run parses the model, builds the engine and writes the plan to plan_fd. It blocks
 * until the build ends and may be called once per handle. Builder threads it starts report into
 * the handle's queue; they have all stopped before it returns. TRTB_ERR_CANCELLED means the
 * build stopped because of trtb_build_cancel. */
int32_t trtb_build_run(trtb_build *build, trtb_result *result, trtb_status *status);

/* trtb_build_cancel asks the builder to stop at its next step boundary. It only stores a flag:
 * it never blocks, may be called from any thread any number of times, and takes effect the next
 * time a builder thread completes a step. */
void trtb_build_cancel(trtb_build *build);

/* trtb_build_drain moves queued events into batch, waiting up to timeout_ms for the first one.
 * It returns with batch->count == 0 on timeout, and sets batch->done once run has returned and
 * the queue is empty. At most one thread may drain a handle at a time.
 *
 * Waiting: while nothing is queued the calling thread sleeps on a condition variable; the
 * first event pushed after it fell asleep wakes it (the pushing builder thread pays one
 * notify for that), and so does the end of run. A silent builder costs no CPU, however long
 * the timeout; the timeout only bounds how long the caller is away.
 *
 * Bound: the queue holds at most a fixed number of bytes of events (16 MiB; see EventQueue in
 * trtb_internal.hpp). When the drainer falls behind, VERBOSE and INFO log lines are dropped
 * first, then step events, then WARNING lines, and ERROR lines last; phase starts and
 * finishes are never dropped. dropped_steps and dropped_logs count what was dropped. */
int32_t trtb_build_drain(trtb_build *build, trtb_batch *batch, int32_t timeout_ms,
                         trtb_status *status);

/*
 * trtb_build_write_timing_cache merges this build's cache (the given one plus what the build
 * learned, also after a cancelled build when the backend allows it) into the cache file's and writes the result to the file descriptor fd, for a cache file that
 * several builds share: the caller locks the file, merges into a new file, replaces the old one
 * atomically and unlocks, so no build's entries are lost. Entries already in the file are kept;
 * the build adds those the file lacks.
 *
 * What the file holds is either given as its bytes (disk, disk_size; NULL with 0 for no file or
 * an empty one), or, with disk_is_given set (disk NULL, disk_size 0), said to be exactly the
 * cache given in options.timing_cache (none: no file), so that a file nobody changed since the
 * build loaded it is not read again. *changed is set to 1 when the merged cache differs from
 * what the file holds; only then is anything written to fd, from fd's current offset, through
 * short writes and EINTR. fd -1 writes nothing: the call only tells whether there is
 * something to save.
 *
 * When disk is not a cache this backend can read (corrupt, or made by another builder,
 * TensorRT version or device) it returns TRTB_ERR_CACHE_REJECTED: the caller must leave the
 * file alone rather than replace it. A failed write is TRTB_ERR_IO with errno's text.
 *
 * Threading and ownership: call it after trtb_build_run has returned, from one thread at a
 * time. disk is only read during the call; fd stays the caller's. Memory: the shim keeps the
 * build's builder from run until destroy (only when there is a cache to save) and, on the
 * calling thread, deserializes the file's cache with a new config of it, combines the build's
 * cache into it (ITimingCache::combine, ignoreMismatch=false) and writes the serialized result.
 * A build whose cache holds no entry writes nothing (*changed stays 0), whatever the file holds.
 */
int32_t trtb_build_write_timing_cache(trtb_build *build, int32_t disk_is_given, const void *disk,
                                      uint64_t disk_size, int32_t fd, int32_t *changed,
                                      trtb_status *status);

/* trtb_build_destroy frees the handle. Call it after run has returned (or if run was never
 * called) and after the last drain. NULL is ignored. */
void trtb_build_destroy(trtb_build *build);

#ifdef __cplusplus
}
#endif

#endif /* TRTB_H */
