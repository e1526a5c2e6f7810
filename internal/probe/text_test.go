package probe

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// A folder name may hold a newline or an ESC (a virtual environment's, TENSORRT_ROOT's), and
// TensorRT's messages may span lines: `trtbuild version` still writes one line per item, and
// no name can forge one ("builder   created ...") or start a terminal escape sequence.
func TestWriteTextOneLinePerItem(t *testing.T) {
	odd := "/venv\nbuilder   created and deleted on GPU 0\x1b]0;x\x07"
	site := odd + "/lib/python3.12/site-packages"
	loc := &trt.Location{Major: 10, Dir: site + "/tensorrt_libs", From: "pip (VIRTUAL_ENV)",
		LeanDir: site + "/tensorrt_lean_libs", CUDARuntime: site + "/nvidia/cu13/lib/libcudart.so.13",
		Others: []trt.Place{{Where: "pip (system)", Path: odd + "/other/libnvinfer.so.10"}}}
	full := Report{Location: loc, Infer: &Library{Path: loc.Dir + "/libnvinfer.so.10", Version: 101600, Build: -1},
		Parser: &Library{Path: loc.Dir + "/libnvonnxparser.so.10"}, PluginsError: "cannot load\n" + odd,
		Driver: &Library{Path: odd + "/libcuda.so.1", Version: 13000}, DeviceCount: 1, DeviceName: "GPU\nX",
		BuilderChecked: true, BuilderError: "Unable to load library\n" + odd, BuilderHint: "add " + odd}
	for _, tc := range []struct {
		name   string
		r      Report
		runErr error
		lines  int
	}{
		{name: "found", r: full, lines: 10},
		{name: "not found", r: Report{Location: loc, LoadError: "cannot load " + odd}, lines: 4},
		{name: "probe failed", runErr: errors.New("asking TensorRT: " + odd), lines: 1},
	} {
		var b bytes.Buffer
		tc.r.WriteText(&b, tc.runErr)
		out := b.String()
		if n := strings.Count(out, "\n"); n != tc.lines || strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s: WriteText wrote %d lines, want %d, with no control bytes:\n%s", tc.name, n, tc.lines, out)
		}
	}
}

// TestSimulatedText: `trtbuild version` says which TensorRT --backend sim plays: the newest
// major compiled in by default, the other with --sim-tensorrt; nothing without a shim.
func TestSimulatedText(t *testing.T) {
	for _, tc := range []struct {
		name     string
		compiled []cgo.Compiled
		want     string
	}{
		{"both majors", []cgo.Compiled{{TensorRT: 101600}, {TensorRT: 110100}},
			"--backend sim plays TensorRT 11.1 with the stand-in linked into this binary (10.16 with --sim-tensorrt 10); it needs no GPU"},
		{"one major", []cgo.Compiled{{TensorRT: 101600}},
			"--backend sim plays TensorRT 10.16 with the stand-in linked into this binary; it needs no GPU"},
		{"none", nil, ""},
	} {
		if got := SimulatedText(tc.compiled); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
