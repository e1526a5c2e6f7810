package cgo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// windowsStandIns puts standin.WindowsTestLibs into a fresh folder and returns it.
func windowsStandIns(t *testing.T) string {
	t.Helper()
	return standin.Build(t, testDir(t), standin.WindowsTestLibs()...)
}

// samePath compares two Windows paths as Windows does: without regard to case or separators.
func samePath(a, b string) bool {
	return strings.EqualFold(filepath.Clean(a), filepath.Clean(b))
}

func TestOpenLibraryWindows(t *testing.T) {
	dir := windowsStandIns(t)
	notDLL := filepath.Join(dir, "text", "nvinfer_11.dll")
	os.MkdirAll(filepath.Dir(notDLL), 0o755)
	if err := os.WriteFile(notDLL, []byte("not a DLL\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "folder", "nvinfer_11.dll"), 0o755)
	// A folder whose name is outside every ANSI code page: the path reaches LoadLibraryExW as
	// UTF-16.
	unicode := filepath.Join(dir, "Modèles 模型 ✓", "nvinfer_10.dll")
	os.MkdirAll(filepath.Dir(unicode), 0o755)
	if b, err := os.ReadFile(filepath.Join(dir, "trt10", "nvinfer_10.dll")); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(unicode, b, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		lib     trt.Library
		path    string
		version int
		build   int
		errHas  []string // empty: must open
	}{
		{name: "version and build", lib: trt.LibInfer, path: `trt10\nvinfer_10.dll`, version: 101600, build: 72},
		{name: "a folder name in UTF-16", lib: trt.LibInfer, path: unicode[len(dir)+1:], version: 101600, build: 72},
		{name: "no build number", lib: trt.LibInfer, path: `trt11\nvinfer_11.dll`, version: 110100, build: 5},
		{name: "the parser's version", lib: trt.LibONNXParser, path: `trt10\nvonnxparser_10.dll`, version: 100, build: -1},
		{name: "missing entry point", lib: trt.LibInfer, path: `nofactory\nvinfer_11.dll`,
			errHas: []string{"nvinfer entry point createInferBuilder_INTERNAL is missing from", `nofactory\nvinfer_11.dll`, "not a TensorRT-compatible nvinfer"}},
		{name: "wrong library for the role", lib: trt.LibONNXParser, path: `trt11\nvinfer_11.dll`,
			errHas: []string{"createNvOnnxParser_INTERNAL"}},
		{name: "a DLL it imports is missing", lib: trt.LibInfer, path: `missingimport\nvinfer_11.dll`,
			errHas: []string{`missingimport\nvinfer_11.dll: `, "(error 126); the file is there, so a DLL it imports is missing"}},
		{name: "not a DLL", lib: trt.LibInfer, path: `text\nvinfer_11.dll`,
			errHas: []string{`text\nvinfer_11.dll: `, "(error 193)"}},
		{name: "a folder", lib: trt.LibInfer, path: `folder\nvinfer_11.dll`,
			errHas: []string{`folder\nvinfer_11.dll is a folder, not a shared library`}},
		{name: "no such file", lib: trt.LibInfer, path: `absent\nvinfer_11.dll`,
			errHas: []string{`absent\nvinfer_11.dll: `, "(error 126)"}},
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
				if strings.ContainsAny(err.Error(), "\r\n") {
					t.Errorf("error %q has several lines", err)
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
			if l.Info.Path != path || !samePath(l.Info.Resolved, path) {
				t.Errorf("path %q resolved %q, want both %q", l.Info.Path, l.Info.Resolved, path)
			}
		})
	}
}

// TestFindTensorRTWindows: the search order of trt.Search.Locate with Windows' names, through
// the real loader: --tensorrt-lib, TENSORRT_ROOT\lib then \bin, then PATH's folders; and each
// way a found DLL is refused, in one line that names the places and the fix.
func TestFindTensorRTWindows(t *testing.T) {
	dir := windowsStandIns(t)
	root := filepath.Join(dir, "root")
	for _, sub := range []string{"lib", "bin"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The zip of TensorRT 10.8 and later: DLLs in bin\, import libraries in lib\.
	for _, f := range []string{"nvinfer_11.dll", "nvonnxparser_11.dll", "nvinfer_plugin_11.dll"} {
		b, err := os.ReadFile(filepath.Join(dir, "trt11", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "bin", f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "lib", "nvinfer_11.lib"), []byte("import library"), 0o644)
	trt11 := filepath.Join(dir, "trt11")
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	tests := []struct {
		name   string
		flag   string
		env    map[string]string
		from   string   // where the libraries were found
		dir    string   // in which folder
		errHas []string // empty: found
	}{
		{name: "--tensorrt-lib", flag: trt11, env: map[string]string{"TENSORRT_ROOT": root}, from: "--tensorrt-lib", dir: trt11},
		{name: "TRTBUILD_TENSORRT_LIB", env: map[string]string{trt.EnvLibDir: trt11, "PATH": empty}, from: trt.EnvLibDir, dir: trt11},
		{name: "TENSORRT_ROOT's bin", env: map[string]string{"TENSORRT_ROOT": root, "PATH": trt11}, from: "TENSORRT_ROOT", dir: filepath.Join(root, "bin")},
		{name: "PATH, after a folder without it", env: map[string]string{"PATH": empty + ";relative;" + trt11}, from: "PATH", dir: trt11},
		{name: "the explicit folder is never replaced", flag: empty, env: map[string]string{"PATH": trt11},
			errHas: []string{"TensorRT library not found: cannot load nvinfer_11.dll or nvinfer_10.dll; searched: --tensorrt-lib " + filepath.Join(empty, "nvinfer_11.dll") + ": ", "(error 126)",
				"--tensorrt-lib " + filepath.Join(empty, "nvinfer_10.dll") + ": ",
				"; install TensorRT 11 or 10, or point --tensorrt-lib (or TRTBUILD_TENSORRT_LIB) at the folder holding nvinfer_11.dll or nvinfer_10.dll"}},
		{name: "a TensorRT 10 folder: the 10 shim's libraries", flag: filepath.Join(dir, "trt10"), from: "--tensorrt-lib", dir: filepath.Join(dir, "trt10")},
		{name: "nvinfer_11.dll saying 10.16", flag: filepath.Join(dir, "says10"),
			errHas: []string{"--tensorrt-lib " + filepath.Join(dir, "says10", "nvinfer_11.dll") + ": ", "10.16"}},
		{name: "nothing anywhere", env: map[string]string{"TENSORRT_ROOT": empty, "PATH": empty},
			errHas: []string{"searched: TENSORRT_ROOT " + filepath.Join(empty, "lib", "nvinfer_{11,10}.dll") + ": no such file; TENSORRT_ROOT " +
				filepath.Join(empty, "bin", "nvinfer_{11,10}.dll") + ": no such file; PATH nvinfer_{11,10}.dll: in none of its 1 folders; system (trtbuild.exe's folder, System32) nvinfer_11.dll: ",
				"system (trtbuild.exe's folder, System32) nvinfer_10.dll: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			loc := trt.SearchFromEnv(CompiledMajors(), 13, tt.flag, getenv).Locate()
			found, err := FindTensorRT(loc, true)
			if len(tt.errHas) > 0 {
				if err == nil {
					found.Close()
					t.Fatalf("found TensorRT at %+v, want an error", loc)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q\ndoes not contain %q", err, s)
					}
				}
				if strings.ContainsAny(err.Error(), "\r\n") {
					t.Errorf("error %q has several lines", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FindTensorRT(%+v): %v", loc, err)
			}
			defer found.Close()
			if loc.From != tt.from || !samePath(loc.Dir, tt.dir) {
				t.Errorf("located %s %s, want %s %s", loc.From, loc.Dir, tt.from, tt.dir)
			}
			for _, l := range found.all() {
				if !samePath(filepath.Dir(l.Info.Resolved), tt.dir) {
					t.Errorf("%s mapped from %s, want %s", l.Info.Lib, l.Info.Resolved, tt.dir)
				}
			}
		})
	}
}
