package builder

import (
	"github.com/trtbuild/trtbuild/internal/onnx"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/worker"
)

func TestParseMemPoolSize(t *testing.T) {
	ws, pools, err := parseMemPoolSize("workspace:1G,tacticSharedMem:1K,DLASRAM:0,dlaLocalDRAM:8,dlaGlobalDRAM:1G")
	if err != nil {
		t.Fatal(err)
	}
	if ws != 1<<30 {
		t.Errorf("workspace %d", ws)
	}
	want := map[string]uint64{"tacticSharedMem": 1024, "dlaSRAM": 0, "dlaLocalDRAM": 8 << 20, "dlaGlobalDRAM": 1 << 30}
	if len(pools) != len(want) {
		t.Errorf("pools %v, want %v", pools, want)
	}
	for k, v := range want {
		if got, ok := pools[k]; !ok || got != v {
			t.Errorf("pool %s = %d (%v), want %d", k, got, ok, v)
		}
	}
	for in, wantErr := range map[string]string{
		"workspace":                 "write POOL:SIZE",
		"l2:1M":                     `pool "l2" is unknown: use workspace, tacticSharedMem`,
		"workspace:0":               "--memPoolSize workspace: \"0\" is too small",
		"tacticSharedMem:x":         "--memPoolSize tacticSharedMem: \"x\" is not a size",
		"workspace:1G,workspace:2G": "gives pool workspace twice",
	} {
		if _, _, err := parseMemPoolSize(in); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("parseMemPoolSize(%q): %v, want an error containing %q", in, err, wantErr)
		}
	}
}

func TestApplyScenario(t *testing.T) {
	req := worker.Request{}
	if err := applyScenario("crash", "tensorrt", 1, Sim{}, &req); err == nil || !strings.Contains(err.Error(), "add --backend sim") {
		t.Errorf("a scenario with TensorRT: %v", err)
	}
	middle := 0.5 // the middle timed node
	tests := []struct {
		scenario string
		given    Sim
		speed    float64
		want     worker.SimConfig
	}{
		{"silence", Sim{}, 1, worker.SimConfig{Silent: 20 * time.Second}},
		{"silence", Sim{}, 4, worker.SimConfig{Silent: 5 * time.Second}},
		{"silence", Sim{Silent: time.Second}, 1, worker.SimConfig{}}, // --sim-silent wins
		{"fail", Sim{}, 1, worker.SimConfig{FailAt: &middle}},
		{"fail", Sim{FailPhase: "Timing*"}, 1, worker.SimConfig{}}, // --sim-fail-phase wins
		{"crash", Sim{}, 1, worker.SimConfig{AbortAt: &middle}},
		{"slow-cancel", Sim{}, 2, worker.SimConfig{Step: time.Second}},
	}
	for _, tt := range tests {
		req := worker.Request{}
		if err := applyScenario(tt.scenario, "sim", tt.speed, tt.given, &req); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(req.Sim, tt.want) {
			t.Errorf("%s at speed %g: %+v, want %+v", tt.scenario, tt.speed, req.Sim, tt.want)
		}
	}
}

// TestSharedDimsFillTheRequest checks that the inputs preflight fills in from the named
// dimensions they share with given ones reach the builder's profile.
func TestSharedDimsFillTheRequest(t *testing.T) {
	model := filepath.Join("..", "..", "testdata", "models", "bert_tiny.onnx")
	o := &Options{Profiles: []Profile{{Shapes: "input_ids:1x128"}}}
	flags, err := parseShapeFlags(o)
	if err != nil {
		t.Fatal(err)
	}
	req := worker.Request{}
	src := openTestModel(t, model)
	if _, _, err := checkModel(src, &req, flags, false); err != nil {
		t.Fatal(err)
	}
	if len(req.Profiles) != 1 {
		t.Fatalf("%d profiles, want 1", len(req.Profiles))
	}
	var got []string
	for _, in := range req.Profiles[0].Inputs {
		got = append(got, in.Name)
		for _, dims := range [][]int64{in.Min, in.Opt, in.Max} {
			if len(dims) != 2 || dims[0] != 1 || dims[1] != 128 {
				t.Errorf("input %s: %v, want 1x128", in.Name, dims)
			}
		}
	}
	if strings.Join(got, ",") != "input_ids,attention_mask,token_type_ids" {
		t.Errorf("profile inputs %v", got)
	}
}

// TestOptionRanges: Options that no flag parser checked (a library caller's) are refused by
// the builder's own rules, with the flag's name, before the C ABI's guard would see them.
func TestOptionRanges(t *testing.T) {
	for _, tt := range []struct {
		set  func(o *Options)
		want string
	}{
		{func(o *Options) { o.OptLevel = 7 }, "invalid --opt-level 7: use 0 to 5"},
		{func(o *Options) { o.OptLevel = -2 }, "invalid --opt-level -2"},
		{func(o *Options) { o.MaxAuxStreams = 65 }, "invalid --max-aux-streams 65: use 0 to 64"},
		{func(o *Options) { o.Trtexec.DLACore = 64 }, "invalid --use-dla-core 64: use 0 to 63"},
	} {
		o := DefaultOptions()
		o.Backend = "sim"
		tt.set(&o)
		_, err := buildRequest(&o, "model.onnx", "sim", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%v, want a usage error containing %q", err, tt.want)
		}
	}
	o := DefaultOptions()
	o.OptLevel, o.MaxAuxStreams, o.Trtexec.DLACore = 0, 64, 0
	if _, err := buildRequest(&o, "model.onnx", "sim", nil); err != nil {
		t.Errorf("in range: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in        string
		allowZero bool
		want      uint64
		err       string
	}{
		{in: "512M", want: 512 << 20},
		{in: "1.5GiB", want: 3 << 29},
		{in: "1024", want: 1 << 30}, // a bare number is MiB, as in trtexec
		{in: "1K", want: 1024},
		{in: "0", allowZero: true, want: 0},
		{in: "0", err: `"0" is too small: give at least 1 byte, like 512M or 4G (leave the flag out for TensorRT's default)`},
		{in: "0.1B", err: "is too small"},
		{in: "lots", err: `"lots" is not a size: write a number with a unit, like 512M or 4G`},
		{in: "4Q", err: `unknown unit "Q": use B, K, M, G or T`},
		{in: "99999999T", err: "is too large: give at most 8 EiB"},
		{in: "", err: "the size is empty"},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in, tt.allowZero)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseSize(%q): %v, want an error containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

// TensorRT loads its builder resources by file name from the LD_LIBRARY_PATH trtbuild gives
// the worker, which glibc splits at ':' and ';': a folder holding one would become two
// entries, one of them relative to the working folder, so it is refused.
func TestResolveTensorRTLibListSeparator(t *testing.T) {
	for _, name := range []string{"trt:10", "trt;10"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := ResolveTensorRTLib(dir)
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "LD_LIBRARY_PATH") {
			t.Errorf("ResolveTensorRTLib(%q) = %v, want a usage error naming LD_LIBRARY_PATH", dir, err)
		}
	}
}

// openTestModel opens the model at path as a build does, closed when the test ends.
func openTestModel(t *testing.T, path string) *onnx.Source {
	t.Helper()
	src, err := openModel(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
