package standin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The stand-in TensorRT (internal/cgo/trtfake) as libraries: libnvinfer.so.<major>
// (nvinfer_<major>.dll) is the stand-in of that major, compiled from trtfake/library.cpp once
// per major and linked with a small source of the release it plays (FakeInferSrc); its
// libnvonnxparser finds the parser in the libnvinfer already loaded (FakeParserSrc), as the
// real one needs the real libnvinfer. A build through the loader and the shim over them goes
// all the way to a plan.

// EnvSettings names the environment variable the stand-in libnvinfer reads the stand-in's
// settings from when it creates a builder ("key=value;key=value", internal/cgo/trtfake/trtfake.hpp).
const EnvSettings = "TRTBUILD_TRTFAKE"

// FakeInferSrc is what a stand-in libnvinfer of version (NV_TENSORRT_VERSION style) and build
// adds to the stand-in of its major: its version, and the builder resource it loads by bare
// file name when it creates a builder ("" for none), as the real libnvinfer does.
func FakeInferSrc(version, build int, resource string) string {
	// The stand-in exports only what it marks (library.cpp), so these are marked too.
	return fmt.Sprintf(`#include <stdint.h>
#ifdef _WIN32
#define STANDIN_EXPORT extern "C" __declspec(dllexport)
#else
#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))
#endif
STANDIN_EXPORT int32_t getInferLibVersion() noexcept { return %d; }
STANDIN_EXPORT int32_t getInferLibBuildVersion() noexcept { return %d; }
extern "C" int32_t trtb_fake_library_version() { return %d; }
extern "C" int32_t trtb_fake_library_build() { return %d; }
extern "C" const char* trtb_fake_library_resource() { return %s; }
`, version, build, version, build, strconv.Quote(resource))
}

// FakeParserSrc is the stand-in libnvonnxparser of a major: its parser is the stand-in
// libnvinfer's of that major (libnvinfer.so.N; nvinfer_N.dll on Windows), found in the one
// already loaded (the loader loads libnvinfer first, as the real libnvonnxparser needs it);
// getNvOnnxParserVersion answers version.
func FakeParserSrc(major, version int) string {
	return fmt.Sprintf(`#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif
extern "C" int getNvOnnxParserVersion() noexcept { return %d; }
extern "C" void* createNvOnnxParser_INTERNAL(void* network, void* logger, int version) noexcept {
    typedef void* (*Create)(void*, void*, int);
    Create create = nullptr;
#ifdef _WIN32
    HMODULE h = GetModuleHandleA("nvinfer_%[2]d.dll");
    if (h != nullptr) create = reinterpret_cast<Create>(reinterpret_cast<void*>(GetProcAddress(h, "trtb_fake_create_parser")));
#else
    void* h = dlopen("libnvinfer.so.%[2]d", RTLD_NOW | RTLD_NOLOAD);
    if (h != nullptr) create = reinterpret_cast<Create>(dlsym(h, "trtb_fake_create_parser"));
#endif
    return create != nullptr ? create(network, logger, version) : nullptr;
}
`, version, major)
}

// FakeTensorRT is a whole stand-in TensorRT of version and build as this OS names its files
// (libnvinfer.so.N, its parser and plugins; nvinfer_N.dll, ... on Windows), whose libnvinfer
// loads the builder resource named resource ("" for none).
func FakeTensorRT(version, build int, resource string, infer, parser, plugin string) []Lib {
	return []Lib{
		{File: infer, Src: FakeInferSrc(version, build, resource), Fake: version / 10000},
		{File: parser, Src: FakeParserSrc(version/10000, 100)},
		{File: plugin, Src: PluginSrc},
	}
}

// moduleRoot finds the module's root above the working folder (a test's package folder).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working folder: run the test in the module")
		}
		dir = parent
	}
}

// fakeSources are what the stand-in of major is compiled from, relative to the module's root.
func fakeSources(major int) []string {
	return []string{
		filepath.Join("internal", "cgo", "trtfake"),
		filepath.Join("internal", "cgo", "shim", "tensorrt_headers.hpp"),
		filepath.Join("internal", "cgo", "cudadecl"),
		filepath.Join("third_party", "tensorrt", "v"+strconv.Itoa(major), "include"),
	}
}

// FakeSourceHash digests what the stand-in of major is compiled from, so that a library
// compiled beforehand (mkdll) or cached is never served for other sources.
func FakeSourceHash(major int) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, src := range fakeSources(major) {
		var files []string
		err := filepath.WalkDir(filepath.Join(root, src), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			return "", fmt.Errorf("the stand-in's sources: %w", err)
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			rel, _ := filepath.Rel(root, f)
			fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(data))
			h.Write(data)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// coreMu serialises the compiles of the stand-in's object (fakeCore), so that tests running
// in parallel in one process compile each once; the cache itself is files (fakeCore). It is
// the package's only state, for that reason.
var coreMu sync.Mutex

// fakeCore returns the stand-in of major compiled by cxx into an object file (position
// independent, with only the C entry points visible, where pic is set), compiling it only
// when no earlier compile of the same sources with the same compiler and arguments is kept in
// the user's cache folder (trtbuild-standin): a few seconds a major, paid once.
func fakeCore(cxx string, major int, pic bool) (string, error) {
	sources, err := FakeSourceHash(major)
	if err != nil {
		return "", err
	}
	args, err := fakeCoreArgs(major, "OUT", pic)
	if err != nil {
		return "", err
	}
	key := sha256.Sum256([]byte(sources + "\x00" + cxx + "\x00" + strings.Join(args[:len(args)-3], " ")))
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "trtbuild-standin")
	out := filepath.Join(dir, fmt.Sprintf("trtfake%d-%s.o", major, hex.EncodeToString(key[:12])))
	coreMu.Lock()
	defer coreMu.Unlock()
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "trtfake-*.o")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if args, err = fakeCoreArgs(major, tmp.Name(), pic); err != nil {
		return "", err
	}
	if b, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("compiling the stand-in TensorRT %d: %v\n%s", major, err, strings.TrimSpace(string(b)))
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return out, nil
}

// fakeCoreArgs are the compiler's arguments that compile the stand-in of major into the object
// out (position independent where pic is set, with only the C entry points visible).
func fakeCoreArgs(major int, out string, pic bool) ([]string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	args := []string{"-std=c++17", "-O1", "-c", "-DTRTB_SHIM_MAJOR=" + strconv.Itoa(major),
		"-I" + filepath.Join(root, "internal", "cgo", "cudadecl")}
	if pic {
		args = append(args, "-fPIC", "-fvisibility=hidden", "-fvisibility-inlines-hidden")
	}
	return append(args, "-o", out, filepath.Join(root, "internal", "cgo", "trtfake", "library.cpp")), nil
}
