package probe

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/trt"
)

// TestWriteTextWindows: `trtbuild version` on Windows names the DLLs, nvcuda.dll and the
// worker's DLL search path where Linux says LD_LIBRARY_PATH; a folder name outside the ANSI
// code page is shown as it is.
func TestWriteTextWindows(t *testing.T) {
	site := `C:\Users\Zoë\venv\Lib\site-packages`
	loc := &trt.Location{Major: 11, Dir: site + `\tensorrt_libs`, From: "pip (VIRTUAL_ENV)", LeanDir: site + `\tensorrt_lean_libs`,
		CUDARuntime: site + `\nvidia\cu13\bin\cudart64_13.dll`, Others: []trt.Place{{Where: "PATH", Path: `D:\TensorRT-11.1\bin\nvinfer_11.dll`}}}
	r := Report{Location: loc, Infer: &Library{Path: loc.Dir + `\nvinfer_11.dll`, Version: 110100, Build: 5},
		Parser: &Library{Path: loc.Dir + `\nvonnxparser_11.dll`}, Plugins: loc.Dir + `\nvinfer_plugin_11.dll`,
		Driver: &Library{Path: "nvcuda.dll", Resolved: `C:\Windows\System32\nvcuda.dll`, Version: 13000}, DeviceCount: 1, DeviceName: "NVIDIA RTX 4090",
		ComputeMajor: 8, ComputeMinor: 9, SMs: 128}
	var b bytes.Buffer
	r.WriteText(&b, nil)
	for _, want := range []string{
		`found 11.1.0.5 at C:\Users\Zoë\venv\Lib\site-packages\tensorrt_libs\nvinfer_11.dll (pip (VIRTUAL_ENV))`,
		`plugins   C:\Users\Zoë\venv\Lib\site-packages\tensorrt_libs\nvinfer_plugin_11.dll`,
		`cuda      driver 13.0 at C:\Windows\System32\nvcuda.dll`,
		`seen      lean runtime in C:\Users\Zoë\venv\Lib\site-packages\tensorrt_lean_libs (on the worker's DLL search path, added with AddDllDirectory)`,
		`seen      PATH D:\TensorRT-11.1\bin\nvinfer_11.dll (not used`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteText does not say %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "LD_LIBRARY_PATH") {
		t.Errorf("WriteText speaks of LD_LIBRARY_PATH on Windows:\n%s", b.String())
	}
}
