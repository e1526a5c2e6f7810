package trt

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestSearchWindows: Windows' names and places: nvinfer_11.dll, TENSORRT_ROOT's lib\ then bin\,
// pip's Lib\site-packages, PATH's folders after them (said as one place when none has it), and
// --tensorrt-lib given the DLL itself.
func TestSearchWindows(t *testing.T) {
	if got := FileName(LibInfer, 11); got != "nvinfer_11.dll" {
		t.Errorf("FileName(LibInfer, 11) = %q", got)
	}
	if got := FileName(LibCUDADriver, 11); got != "nvcuda.dll" {
		t.Errorf("FileName(LibCUDADriver, 11) = %q", got)
	}
	for _, tt := range []struct {
		path string
		want bool
	}{{`C:\TensorRT\bin\nvinfer_11.dll`, true}, {`C:\TensorRT\bin\NVINFER_10.DLL`, true}, {`C:\TensorRT\bin`, false},
		{`C:\TensorRT\bin\nvinfer_plugin_11.dll`, false}, {`C:\TensorRT\bin\nvinfer.dll`, false}} {
		if got := NamesInferLibrary(tt.path); got != tt.want {
			t.Errorf("NamesInferLibrary(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	env := map[string]string{"TENSORRT_ROOT": `C:\trt`, "VIRTUAL_ENV": `C:\venv`, "PATH": `C:\Windows\system32;C:\cuda\bin;;relative`,
		"APPDATA": `C:\Users\u\AppData\Roaming`, EnvLibDir: `D:\TensorRT-11.1\bin\nvinfer_11.dll`}
	s := SearchFromEnv([]int{11}, 13, `D:\TensorRT-11.1\bin\nvinfer_11.dll`, func(k string) string { return env[k] })
	if s.Dir != `D:\TensorRT-11.1\bin` || s.DirFrom != EnvLibDir {
		t.Errorf("the DLL named: Dir %q from %q, want its folder from %s", s.Dir, s.DirFrom, EnvLibDir)
	}
	if s.UserBase != `C:\Users\u\AppData\Roaming\Python` || s.LDLibraryPath != "" || s.SystemPrefixes != nil {
		t.Errorf("SearchFromEnv = %+v", s)
	}
	s.Dir = ""
	files := map[string]bool{`C:\cuda\bin\nvinfer_11.dll`: true, `C:\venv\Lib\site-packages\tensorrt_libs\nvinfer_11.dll`: true}
	loc := s.locate(func(p string) []string {
		m, _ := filepath.Match(p, `C:\venv\Lib\site-packages`)
		if m || p == `C:\venv\Lib\site-packages` {
			return []string{`C:\venv\Lib\site-packages`}
		}
		return nil
	}, func(p string) bool { return files[p] })
	if loc.From != "pip (VIRTUAL_ENV)" || loc.Dir != `C:\venv\Lib\site-packages\tensorrt_libs` {
		t.Errorf("located %s %s, want pip's", loc.From, loc.Dir)
	}
	wantLooked := []Place{{Where: EnvRoot, Path: `C:\trt\lib\nvinfer_11.dll`, Why: "no such file"}, {Where: EnvRoot, Path: `C:\trt\bin\nvinfer_11.dll`, Why: "no such file"}}
	if !slices.Equal(loc.Looked, wantLooked) {
		t.Errorf("looked %+v, want %+v", loc.Looked, wantLooked)
	}
	if len(loc.Others) != 1 || loc.Others[0] != (Place{Where: "PATH", Path: `C:\cuda\bin\nvinfer_11.dll`}) {
		t.Errorf("others %+v, want the PATH install", loc.Others)
	}
	// Nowhere: PATH's folders are one place in the message; the relative entry is not searched.
	none := s.locate(func(string) []string { return nil }, func(string) bool { return false })
	last := none.Looked[len(none.Looked)-1]
	if last != (Place{Where: "PATH", Path: "nvinfer_11.dll", Why: "in none of its 2 folders"}) {
		t.Errorf("last place %+v", last)
	}
	if env := loc.Environ([]string{"PATH=C:\\x"}); !slices.Equal(env, []string{"PATH=C:\\x"}) {
		t.Errorf("Environ = %q, want the environment as it is", env)
	}
	if got := (Location{Major: 11}).Describe(); got != "system (trtbuild.exe's folder, System32)" {
		t.Errorf("Describe = %q", got)
	}
}
