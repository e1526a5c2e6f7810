// Package cgo is trtbuild's only door to C: it wraps the C ABI of trtb.h, behind which sits
// the TensorRT shim, in every binary: over the TensorRT the worker loaded (BackendTensorRT), or,
// for a simulated build (BackendSim), over the stand-in TensorRT compiled in. The shim (shim/) is
// compiled twice, against the vendored headers of TensorRT 10.16 and of 11.1
// (third_party/tensorrt; tensorrt10.cpp, tensorrt11.cpp), each in namespaces of its own, and
// tensorrt.cpp hands a build to the one of the major of the libnvinfer the worker loaded. No
// CUDA header is needed: cudadecl/ declares the few CUDA names TensorRT's headers and the shim
// use. A stand-in TensorRT of each major is compiled in too (trtfake/, trtfake10.cpp,
// trtfake11.cpp): a TensorRT with no GPU, written against the same headers, which
// InstallStandIn (trtb_fake.h) puts in place of the loaded libraries so that the shim builds
// over it; internal/cgo/standin compiles the same stand-in into the loader tests' libnvinfer.
// No other package imports "C". The measurement and test ABI of trtb_bench.h
// (bench.cpp, bench.go), which this package's benchmarks and queue tests drive, is compiled
// only with the build tag "trtbench", so a trtbuild binary holds none of it.
//
// The C++ that the package's files include from its sub-folders (shim/, trtfake/, cudadecl/)
// and third_party/tensorrt is invisible to Go's build cache, which hashes only this folder's
// files: cxx_sources_gen.h carries their digest, and go generate ./internal/cgo refreshes it
// after such a file changes, so that the next build compiles the change (a test fails while
// it is stale).
//
// # Life of a build
//
//	b, err := cgo.NewBuild(cgo.BackendSim, opts) // copies opts, takes over opts.TimingCache
//	go func() { runtime.LockOSThread(); res, err = b.Run() }()  // blocks for the whole build
//	for { evs, done, drops, err = b.Drain(evs, time.Second); ...; if done { break } }
//	changed, _ := b.WriteTimingCache(disk, f) // after Run returned: merge into the cache file
//	b.Close()                                 // after Run returned and after the last Drain
//
// # Threads
//
// Run blocks one OS thread for the whole build. TensorRT and CUDA keep per-thread state (the
// current device, the context), so the goroutine that calls Run should hold
// runtime.LockOSThread, and so should any goroutine that selects the device for it.
//
// Builder threads (TensorRT's own, or the simulation's) never call Go. They copy each progress
// report and log line into a buffer of their own inside the build's queue, under a lock only
// the drainer ever contends for, and return; a step report also tells the builder whether to
// stop. The queue holds a bounded number of bytes: when Drain falls behind, verbose and info
// log lines are dropped first, then steps, warnings and errors, never phase starts or finishes,
// and Drain counts the drops (Drops). While nothing is queued, Drain sleeps in C until the
// builder reports, so a silent build costs no CPU. Go takes the reports out in batches with Drain, from one goroutine at a time, in one
// order that respects what each thread did first (a parent phase starts before its children
// on other threads) and with times that never decrease. Cancel may be called from any
// goroutine at any time; it stores a flag that builder threads read at their next step
// boundary, so a build stops within one step of the builder, however long that is.
//
// # Crashes
//
// A crash inside the builder ends the process: nothing here can catch it, which is why builds
// run in a worker process. An abort on a builder thread kills the process by SIGABRT; on the
// thread that called Run (a Go thread in a cgo call) the Go runtime catches it, prints
// "SIGABRT: abort" with a traceback and exits with status 2, or dies by the signal when
// GOTRACEBACK=crash. On Windows an abort on any thread ends the process at once with exit
// status 3, by the C runtime's SIGABRT handler; the Go runtime does not see it.
//
// # Windows
//
// The C++ side asks the operating system for things through trtb_platform.hpp only, with a
// POSIX and a Win32 implementation. On Windows a file handed over in trtb.h (the plan file,
// the timing cache) is the HANDLE of (*os.File).Fd(), paths are UTF-8 turned into UTF-16, and
// TensorRT's DLLs are loaded with LoadLibraryExW from the folder trt.Search.Locate chose, which
// LoadTensorRT first adds to the process's DLL search (AddDllDirectory, with
// SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)): TensorRT then finds its builder
// resources and lean runtime next to nvinfer_<major>.dll, and no DLL loaded by bare name comes
// from the working folder or PATH. The C++ is cross-compiled with MinGW-w64's POSIX thread model
// (std::thread over winpthreads).
//
// # Memory
//
// C never holds a Go pointer. Options are copied into C memory for the duration of NewBuild
// and freed before it returns (the C side copies what it keeps), except the timing cache: it
// is a CBuffer (C memory) that the Build takes over and C reads in place until Close frees it,
// since a cache can be hundreds of MB. WriteTimingCache writes the merged cache from C straight
// into the file. Each Build allocates its drain buffers in C memory once and frees them in
// Close. Strings handed out by Drain are Go copies.
package cgo

//go:generate go run ./sourcedigest -root ../..
