package standin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Windows stand-ins are DLLs compiled with MinGW-w64 (x86_64-w64-mingw32-g++-posix), linked
// statically so that they need no MinGW DLL. Under Wine a Windows test cannot run the Linux
// compiler (Wine starts an ELF program but hands back no process handle to wait on), so the
// DLLs of the Windows tests (WindowsTestLibs) are compiled beforehand on the build machine by
// `go run ./internal/cgo/standin/mkdll DIR` and found by EnvDLLs; on a Windows machine with a
// MinGW g++ (CXX), Build compiles them itself.

// EnvDLLs names the folder of the stand-in DLLs compiled beforehand (mkdll), each stored under
// DLLKey of its Lib.
const EnvDLLs = "TRTBUILD_STANDIN_DLLS"

// MinGWCXX is the cross compiler the stand-in DLLs are compiled with on Linux.
const MinGWCXX = "x86_64-w64-mingw32-g++-posix"

// MissingImport is the DLL a Lib with LinkMissing is linked against and that is never put next
// to it: loading such a Lib fails as a TensorRT DLL whose dependency (say cudart64_12.dll) is
// missing fails.
const MissingImport = "trtbuild_standin_nowhere.dll"

// DLLKey is the file name the DLL of l is stored under in the EnvDLLs folder: a hash of what
// goes into it, so that a changed source is never served from an old build.
func DLLKey(l Lib) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%t\x00%t\x00%d\x00", l.Src, l.Headers, l.LinkMissing, l.Fake)
	if l.Fake != 0 {
		sources, err := FakeSourceHash(l.Fake)
		if err != nil {
			return "", err
		}
		h.Write([]byte(sources))
	}
	return hex.EncodeToString(h.Sum(nil))[:32] + ".dll", nil
}

// CompileDLL compiles l into the DLL out with the MinGW C++ compiler cxx (every extern "C"
// function is exported: MinGW's linker exports all symbols of a DLL that marks none).
func CompileDLL(cxx, out string, l Lib) error {
	tmp, err := os.MkdirTemp("", "standin-dll")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "lib.cpp")
	// The logger prelude's dlfcn.h is Linux's; a Windows stand-in that loads a DLL includes
	// windows.h itself.
	text := strings.Replace(l.Src, "#include <dlfcn.h>\n", "", 1)
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		return err
	}
	args := []string{"-std=c++17", "-shared", "-static", "-o", out, src}
	if l.Headers {
		flags, err := HeaderFlags(l.File)
		if err != nil {
			return err
		}
		args = append(flags, args...)
	}
	if l.Fake != 0 {
		core, err := fakeCore(cxx, l.Fake, false)
		if err != nil {
			return err
		}
		args = append(args, core)
	}
	if l.LinkMissing {
		nowhere := filepath.Join(tmp, MissingImport)
		nsrc := filepath.Join(tmp, "nowhere.cpp")
		if err := os.WriteFile(nsrc, []byte(`extern "C" int trtbuild_standin_nowhere() { return 1; }`+"\n"), 0o644); err != nil {
			return err
		}
		if b, err := exec.Command(cxx, "-shared", "-static", "-o", nowhere, nsrc).CombinedOutput(); err != nil {
			return fmt.Errorf("compiling %s: %v\n%s", MissingImport, err, b)
		}
		args = append(args, nowhere) // MinGW links against a DLL directly
	}
	if b, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("compiling stand-in %s: %v\n%s", l.File, err, strings.TrimSpace(string(b)))
	}
	return nil
}

// DLLBuilderResourceFile names the builder resource for GPU architecture sm of a TensorRT
// major, as the Windows releases name it: nvinfer_builder_resource_sm90_11.dll.
func DLLBuilderResourceFile(major, sm int) string {
	return fmt.Sprintf("nvinfer_builder_resource_sm%d_%d.dll", sm, major)
}

// WindowsTestLibs are the stand-in DLLs the Windows tests of internal/cgo load, by file name
// relative to the folder a test builds them in: a whole TensorRT 10.16 (nvinfer_10.dll loading
// its builder resource by bare name) with a driver; a TensorRT 11.1 and the same names of
// version 10 (nvinfer_11.dll saying 10.16; nvinfer_10.dll); a nvinfer without its builder
// factory; one whose import is missing; one that is not a DLL is written by the test itself.
func WindowsTestLibs() []Lib {
	infer := func(v int) string { return "nvinfer_" + strconv.Itoa(v/10000) + ".dll" }
	var out []Lib
	add := func(dir string, libs ...Lib) {
		for _, l := range libs {
			l.File = filepath.ToSlash(filepath.Join(dir, l.File))
			out = append(out, l)
		}
	}
	loading := LoadingDLLs(101600, 72, 90, "Stand-in GPU")
	add("trt10", loading[:4]...)
	add("driver", loading[4])
	add("trt11", Lib{File: infer(110100), Src: InferSrc(110100, 5)}, Lib{File: "nvonnxparser_11.dll", Src: ParserSrc},
		Lib{File: "nvinfer_plugin_11.dll", Src: PluginSrc})
	add("says10", Lib{File: "nvinfer_11.dll", Src: InferSrc(101600, 72)})
	add("nofactory", Lib{File: "nvinfer_11.dll", Src: strings.Replace(InferNoFactorySrc, "101600", "110100", 1)})
	add("missingimport", Lib{File: "nvinfer_11.dll", Src: UnresolvedSrc, LinkMissing: true})
	for _, v := range append(append([][2]int(nil), ShimVersions...), MinorVersions...) {
		add("shim"+strconv.Itoa(v[0]), ShimLibs(v[0], v[1])...)
	}
	return out
}

// LoadingDLLs is Loading for Windows: a stand-in TensorRT of version and build whose
// nvinfer_<major>.dll loads its builder resource for sm by bare name with LoadLibraryA, as an
// application loads a DLL it does not link (Windows then searches the process's DLL folders,
// which trtbuild adds TensorRT's to with AddDllDirectory, not nvinfer's own folder; when that
// fails it logs "createInferBuilder: Error Code 6: API Usage Error (Unable to load library:
// NAME: error N)"), with that resource, a parser, the plugins and nvcuda.dll describing gpu.
func LoadingDLLs(version, build, sm int, gpu string) []Lib {
	major := strconv.Itoa(version / 10000)
	libs := FakeTensorRT(version, build, DLLBuilderResourceFile(version/10000, sm), "nvinfer_"+major+".dll",
		"nvonnxparser_"+major+".dll", "nvinfer_plugin_"+major+".dll")
	return append(libs, Lib{File: DLLBuilderResourceFile(version/10000, sm), Src: BuilderResource(version, sm).Src},
		Lib{File: "nvcuda.dll", Src: Driver(gpu, sm/10, sm%10, 108).Src})
}
