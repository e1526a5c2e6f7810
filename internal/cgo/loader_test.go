//go:build !windows

package cgo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/trt"
)

func TestOpenLibrary(t *testing.T) {
	dir := buildStandIns(t, t.TempDir(),
		standIn{File: "libnvinfer.so.10", Src: inferSrc(101600, 72)},
		standIn{File: "nobuild/libnvinfer.so.10", Src: inferSrc(101300, -1)},
		standIn{File: "nofactory/libnvinfer.so.10", Src: inferNoFactorySrc},
		standIn{File: "unresolved/libnvinfer.so.10", Src: unresolvedSrc},
		standIn{File: "libnvonnxparser.so.10", Src: parserSrc},
		standIn{File: "versioned/libnvonnxparser.so.10", Src: standin.ParserVersionSrc(100)},
		driverStandIn("NVIDIA A100-SXM4-40GB MIG 1g.5gb", 8, 0, 14),
		standIn{File: "nostream/libcuda.so.1", Src: "extern \"C\" int cuInit(unsigned) { return 0; }\n"},
	)
	notELF := filepath.Join(dir, "text/libnvinfer.so.10")
	os.MkdirAll(filepath.Dir(notELF), 0o755)
	if err := os.WriteFile(notELF, []byte("not a shared library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Planted where a library is looked for: a FIFO (dlopen would block opening it), a folder.
	fifo := filepath.Join(dir, "fifo/libnvinfer.so.10")
	os.MkdirAll(filepath.Dir(fifo), 0o755)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo/libnvinfer.so.10", filepath.Join(dir, "linked-fifo.so.10")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "folder/libnvinfer.so.10"), 0o755)
	tests := []struct {
		name    string
		lib     trt.Library
		path    string
		version int
		build   int
		errHas  []string // empty: must open
	}{
		{name: "version and build", lib: trt.LibInfer, path: "libnvinfer.so.10", version: 101600, build: 72},
		{name: "no build number", lib: trt.LibInfer, path: "nobuild/libnvinfer.so.10", version: 101300, build: -1},
		{name: "driver version", lib: trt.LibCUDADriver, path: "libcuda.so.1", version: 13000, build: -1},
		{name: "a parser without getNvOnnxParserVersion", lib: trt.LibONNXParser, path: "libnvonnxparser.so.10", version: 0, build: -1},
		{name: "the parser's version", lib: trt.LibONNXParser, path: "versioned/libnvonnxparser.so.10", version: 100, build: -1},
		{name: "a driver without the API the backend calls", lib: trt.LibCUDADriver, path: "nostream/libcuda.so.1",
			errHas: []string{"cuDriverGetVersion", "is missing from"}},
		{name: "missing entry point", lib: trt.LibInfer, path: "nofactory/libnvinfer.so.10",
			errHas: []string{"createInferBuilder_INTERNAL", "is missing from", "nofactory/libnvinfer.so.10"}},
		{name: "wrong library for the role", lib: trt.LibONNXParser, path: "libnvinfer.so.10",
			errHas: []string{"createNvOnnxParser_INTERNAL"}},
		{name: "undefined symbol", lib: trt.LibInfer, path: "unresolved/libnvinfer.so.10",
			errHas: []string{"undefined symbol", "trtbuild_standin_nowhere"}},
		{name: "not a shared library", lib: trt.LibInfer, path: "text/libnvinfer.so.10",
			errHas: []string{"text/libnvinfer.so.10"}},
		{name: "a FIFO", lib: trt.LibInfer, path: "fifo/libnvinfer.so.10",
			errHas: []string{"fifo/libnvinfer.so.10 is a named pipe (FIFO), not a shared library"}},
		{name: "a link to a FIFO", lib: trt.LibInfer, path: "linked-fifo.so.10",
			errHas: []string{"linked-fifo.so.10 is a named pipe (FIFO)"}},
		{name: "a folder", lib: trt.LibInfer, path: "folder/libnvinfer.so.10",
			errHas: []string{"folder/libnvinfer.so.10 is a folder, not a shared library"}},
		{name: "no such file", lib: trt.LibInfer, path: "absent/libnvinfer.so.10",
			errHas: []string{"No such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.path)
			l, err := OpenLibrary(tt.lib, path)
			if len(tt.errHas) > 0 {
				if err == nil {
					l.Close()
					t.Fatalf("OpenLibrary(%s) succeeded, want an error", tt.path)
				}
				var nerr *Error
				if !errors.As(err, &nerr) || nerr.Code != CodeUnavailable {
					t.Errorf("error %v is not an *Error with CodeUnavailable", err)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenLibrary(%s): %v", tt.path, err)
			}
			defer l.Close()
			if l.Info.Version != tt.version || l.Info.Build != tt.build || l.Info.Lib != tt.lib {
				t.Errorf("info = %+v, want version %d build %d", l.Info, tt.version, tt.build)
			}
			if l.Info.Path != path || l.Info.Resolved != path {
				t.Errorf("path %q resolved %q, want both %q", l.Info.Path, l.Info.Resolved, path)
			}
		})
	}
}

// noSystemTensorRT skips the test when this machine has TensorRT where the dynamic loader
// looks by itself: the cases below expect the system search to come up empty.
func noSystemTensorRT(t *testing.T) {
	t.Helper()
	for _, name := range []string{"libnvinfer.so.10", "libnvinfer.so.11", "libcuda.so.1"} {
		if l, err := OpenLibrary(trt.LibPlugin, name); err == nil {
			l.Close()
			t.Skipf("%s is installed here; the search cases assume it is not", name)
		} else if !strings.Contains(err.Error(), "cannot open shared object file") {
			t.Skipf("%s is installed here (%v); the search cases assume it is not", name, err)
		}
	}
}

func TestFindTensorRT(t *testing.T) {
	noSystemTensorRT(t)
	root := t.TempDir()
	good := buildStandIns(t, filepath.Join(root, "good"), goodSet()...)
	buildStandIns(t, filepath.Join(root, "trtroot", "lib"), goodSet()...)
	buildStandIns(t, filepath.Join(root, "major11", "lib"),
		standIn{File: "libnvinfer.so.10", Src: inferSrc(110100, 106)})
	// The oldest minor the headers drive (internal/trt's table of older minors), and the one before.
	table, ok := trt.OlderMinorsFor(compiled10_16)
	if !ok || table.Oldest == 0 {
		t.Fatalf("internal/trt has no table of older minors for 10.16 with an oldest above 10.0: %+v", table)
	}
	oldest := 100000 + table.Oldest*100
	drivable := buildStandIns(t, filepath.Join(root, "drivable"), standIn{File: "libnvinfer.so.10", Src: inferSrc(oldest, 5)},
		standIn{File: "libnvonnxparser.so.10", Src: parserSrc})
	buildStandIns(t, filepath.Join(root, "older", "lib"),
		standIn{File: "libnvinfer.so.10", Src: inferSrc(oldest-100+3, 5)})
	buildStandIns(t, filepath.Join(root, "noplugin"),
		standIn{File: "libnvinfer.so.10", Src: inferSrc(101600, 72)},
		standIn{File: "libnvonnxparser.so.10", Src: parserSrc})
	venv := filepath.Join(root, "venv")
	pip := standin.VirtualEnv(t, venv, goodSet()...)
	buildStandIns(t, filepath.Join(root, "eleven"), standin.Set(110100, 106)...)
	buildStandIns(t, filepath.Join(root, "both"), append(standin.Set(110100, 106), goodSet()...)...)

	tests := []struct {
		name    string
		search  trt.Search
		plugins bool
		want    map[trt.Library]string // library -> folder it must come from
		major   int                    // the major of libnvinfer taken (0: not checked)
		errHas  []string
	}{
		{name: "--tensorrt-lib folder", search: trt.Search{Dir: good, DirFrom: "--tensorrt-lib"}, plugins: true,
			want: map[trt.Library]string{trt.LibInfer: good, trt.LibONNXParser: good, trt.LibPlugin: good}},
		{name: "TENSORRT_ROOT/lib", search: trt.Search{Root: filepath.Join(root, "trtroot")}, plugins: true,
			want: map[trt.Library]string{trt.LibInfer: filepath.Join(root, "trtroot", "lib")}},
		{name: "the folder wins over TENSORRT_ROOT", search: trt.Search{Dir: good, DirFrom: "--tensorrt-lib", Root: filepath.Join(root, "trtroot")}, plugins: true,
			want: map[trt.Library]string{trt.LibInfer: good}},
		{name: "pip's tensorrt_libs in VIRTUAL_ENV", search: trt.Search{VirtualEnv: venv}, plugins: true,
			want: map[trt.Library]string{trt.LibInfer: pip, trt.LibONNXParser: pip, trt.LibPlugin: pip}},
		{name: "TENSORRT_ROOT before pip", search: trt.Search{Root: filepath.Join(root, "trtroot"), VirtualEnv: venv}, plugins: true,
			want: map[trt.Library]string{trt.LibInfer: filepath.Join(root, "trtroot", "lib")}},
		{name: "an explicit folder is the only place for TensorRT",
			search: trt.Search{Dir: filepath.Join(root, "empty"), DirFrom: "TRTBUILD_TENSORRT_LIB", Root: filepath.Join(root, "trtroot")},
			errHas: []string{"cannot load libnvinfer.so.11 or libnvinfer.so.10", "TRTBUILD_TENSORRT_LIB " + filepath.Join(root, "empty", "libnvinfer.so.11"),
				"TRTBUILD_TENSORRT_LIB " + filepath.Join(root, "empty", "libnvinfer.so.10"), "No such file", "install TensorRT 11 or 10"}},
		{name: "another major in the folder chosen is refused, and no other is tried",
			search: trt.Search{Root: filepath.Join(root, "major11"), VirtualEnv: venv},
			errHas: []string{"TENSORRT_ROOT " + filepath.Join(root, "major11", "lib", "libnvinfer.so.10"), "TensorRT version mismatch", "compiled against TensorRT 10.16.0 but loaded libnvinfer 11.1.0",
				"install TensorRT 10, or point --tensorrt-lib (or TRTBUILD_TENSORRT_LIB)"}},
		{name: "the places without libnvinfer are named",
			search: trt.Search{Root: filepath.Join(root, "nothing-here")},
			errHas: []string{"TENSORRT_ROOT " + filepath.Join(root, "nothing-here", "lib", "libnvinfer.so.{11,10}") + ": no such file",
				"TENSORRT_ROOT " + filepath.Join(root, "nothing-here", "lib64", "libnvinfer.so.{11,10}") + ": no such file",
				"system (LD_LIBRARY_PATH=", "libnvinfer.so.11: cannot open shared object file", "libnvinfer.so.10: cannot open shared object file"}},
		{name: "TensorRT 11 in a folder: the 11 shim's libraries",
			search: trt.Search{Dir: filepath.Join(root, "eleven"), DirFrom: "--tensorrt-lib"}, plugins: true,
			want: map[trt.Library]string{trt.LibInfer: filepath.Join(root, "eleven"), trt.LibONNXParser: filepath.Join(root, "eleven"), trt.LibPlugin: filepath.Join(root, "eleven")}},
		{name: "both majors in a folder: the newer",
			search: trt.Search{Dir: filepath.Join(root, "both"), DirFrom: "--tensorrt-lib"}, plugins: true,
			want: map[trt.Library]string{trt.LibInfer: filepath.Join(root, "both")}, major: 11},
		{name: "the oldest minor the headers drive is accepted",
			search: trt.Search{Dir: drivable, DirFrom: "--tensorrt-lib"},
			want:   map[trt.Library]string{trt.LibInfer: drivable, trt.LibONNXParser: drivable}},
		{name: "an older minor is refused, saying why",
			search: trt.Search{Dir: filepath.Join(root, "older", "lib"), DirFrom: "--tensorrt-lib"},
			errHas: []string{fmt.Sprintf("loaded libnvinfer 10.%d.3 is older than TensorRT 10.%d, the oldest the TensorRT 10.16.0 headers trtbuild was compiled against can drive (%s)", table.Oldest-1, table.Oldest, table.Why)}},
		{name: "the standard plugins are required by default",
			search: trt.Search{Dir: filepath.Join(root, "noplugin"), DirFrom: "--tensorrt-lib"}, plugins: true,
			errHas: []string{"cannot load libnvinfer_plugin.so.10", "--no-builtin-plugins"}},
		{name: "without the standard plugins",
			search: trt.Search{Dir: filepath.Join(root, "noplugin"), DirFrom: "--tensorrt-lib"}, plugins: false,
			want: map[trt.Library]string{trt.LibInfer: filepath.Join(root, "noplugin"), trt.LibONNXParser: filepath.Join(root, "noplugin")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.search.Majors = CompiledMajors()
			found, err := FindTensorRT(tt.search.Locate(), tt.plugins)
			if len(tt.errHas) > 0 {
				if err == nil {
					found.Close()
					t.Fatalf("FindTensorRT succeeded, want an error")
				}
				if !errors.Is(err, trt.ErrNotFound) {
					t.Errorf("error does not wrap trt.ErrNotFound: %v", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q\ndoes not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("FindTensorRT: %v", err)
			}
			defer found.Close()
			if (found.Plugin != nil) != tt.plugins {
				t.Errorf("plugin library loaded = %v, want %v", found.Plugin != nil, tt.plugins)
			}
			got := map[trt.Library]LibraryInfo{}
			for _, info := range found.Infos() {
				got[info.Lib] = info
			}
			for lib, dir := range tt.want {
				if d := filepath.Dir(got[lib].Path); d != dir {
					t.Errorf("%s from %s, want %s", lib, got[lib].Path, dir)
				}
			}
			if tt.major != 0 && got[trt.LibInfer].Version/10000 != tt.major {
				t.Errorf("libnvinfer %d taken, want major %d", got[trt.LibInfer].Version, tt.major)
			}
		})
	}
}

func init() { childHelpers[loaderHelperEnv] = loaderHelper }

// loaderHelperEnv makes the test binary run loaderHelper instead of the tests (TestMain).
const loaderHelperEnv = "TRTBUILD_LOADER_TEST_HELPER"

// loaderHelper runs in a child process, so that what it installs (for the life of a process)
// does not outlive its test: it finds TensorRT 10.16 by the system search (the child's
// LD_LIBRARY_PATH, which the dynamic loader reads at start-up), installs it and prints what
// is installed as JSON.
func loaderHelper() int {
	loc := trt.SearchFromEnv(CompiledMajors(), 0, "", os.Getenv).Locate()
	found, err := FindTensorRT(loc, true)
	if err != nil {
		json.NewEncoder(os.Stdout).Encode(map[string]string{"error": err.Error()})
		return 0
	}
	if err := found.Install(); err != nil {
		json.NewEncoder(os.Stdout).Encode(map[string]string{"error": err.Error()})
		return 0
	}
	if err := LoadCUDADriver(loc); err != nil {
		json.NewEncoder(os.Stdout).Encode(map[string]string{"error": err.Error()})
		return 0
	}
	out := map[string]LibraryInfo{}
	for _, lib := range []trt.Library{trt.LibInfer, trt.LibONNXParser, trt.LibPlugin, trt.LibCUDADriver} {
		if info, ok := InstalledLibrary(lib); ok {
			out[lib.String()] = info
		}
	}
	// A second install of the same role is refused.
	again, err := FindTensorRT(loc, false)
	if err == nil {
		if err := again.Install(); err != nil {
			out["second install: "+err.Error()] = LibraryInfo{}
		}
		again.Close()
	}
	json.NewEncoder(os.Stdout).Encode(out)
	return 0
}

func TestInstallThroughLDLibraryPath(t *testing.T) {
	noSystemTensorRT(t)
	dir := buildStandIns(t, filepath.Join(t.TempDir(), "ld"), goodSet()...)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), loaderHelperEnv+"=1", "LD_LIBRARY_PATH="+dir, "TENSORRT_ROOT=", "TRTBUILD_TENSORRT_LIB=", "VIRTUAL_ENV=", "CONDA_PREFIX=", "PYTHONUSERBASE="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var got map[string]LibraryInfo
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	for _, name := range []string{"libnvinfer", "libnvonnxparser", "libnvinfer_plugin", "libcuda"} {
		info, ok := got[name]
		if !ok {
			t.Errorf("%s not installed; helper said %s", name, out)
			continue
		}
		// Found by bare file name, mapped from the LD_LIBRARY_PATH folder.
		if strings.Contains(info.Path, "/") || filepath.Dir(info.Resolved) != dir {
			t.Errorf("%s: path %q resolved %q, want a bare name resolved in %s", name, info.Path, info.Resolved, dir)
		}
	}
	if got["libnvinfer"].Version != 101600 || got["libnvinfer"].Build != 72 {
		t.Errorf("libnvinfer info %+v, want version 101600 build 72", got["libnvinfer"])
	}
	if _, ok := got["second install: libnvinfer is already loaded in this process"]; !ok {
		t.Errorf("a second install was not refused as expected; helper said %s", out)
	}
}
