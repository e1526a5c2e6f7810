package trtexec

import (
	"reflect"
	"strings"
	"testing"
)

// wantErr checks that err is one line containing want.
func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q, want one line containing %q", err, want)
	}
}

func TestParseIOFormats(t *testing.T) {
	tests := []struct {
		in   string
		want []IOFormat
		err  string
	}{
		{in: "fp16:chw", want: []IOFormat{{"fp16", []string{"chw"}}}},
		{in: "fp16:chw,int8:chw4+chw32", want: []IOFormat{{"fp16", []string{"chw"}}, {"int8", []string{"chw4", "chw32"}}}},
		{in: " FP32:HWC8 ", want: []IOFormat{{"fp32", []string{"hwc8"}}}},
		{in: "bool:chw,int64:chw,uint8:dla_linear", want: []IOFormat{{"bool", []string{"chw"}}, {"int64", []string{"chw"}}, {"uint8", []string{"dla_linear"}}}},
		{in: "", err: "is empty; give TYPE:FORMAT entries"},
		{in: "fp16", err: `entry "fp16" has no ':'; write TYPE:FORMAT`},
		{in: "half:chw", err: `unknown type "half"; use one of fp32, fp16`},
		{in: "fp16:nchw", err: `unknown format "nchw"; use one of chw, chw2`},
		{in: "fp16:chw+", err: `unknown format ""`},
		{in: "fp16:chw+chw", err: `names format "chw" twice`},
		{in: "fp16:chw,,", err: `entry "" has no ':'`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseIOFormats("--inputIOFormats", tt.in)
			if tt.err != "" {
				wantErr(t, err, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseLayerPrecisions(t *testing.T) {
	tests := []struct {
		in   string
		want []LayerPrecision
		err  string
	}{
		{in: "conv1:fp16", want: []LayerPrecision{{"conv1", "fp16"}}},
		{in: "*:fp32,stem/conv1:FP16", want: []LayerPrecision{{"*", "fp32"}, {"stem/conv1", "fp16"}}},
		{in: "model:0/Conv:int8", want: []LayerPrecision{{"model:0/Conv", "int8"}}},
		{in: "'a b':bf16", want: []LayerPrecision{{"a b", "bf16"}}},
		{in: "", err: "is empty"},
		{in: "conv1", err: `entry "conv1" has no ':'`},
		{in: ":fp16", err: "has no layer name"},
		{in: "conv1:half", err: `unknown type "half"`},
		{in: "a:fp16,a:fp32", err: `names layer "a" twice`},
		{in: "a\x00:fp16", err: "NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLayerPrecisions(tt.in)
			if tt.err != "" {
				wantErr(t, err, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseSmallFlags(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) (string, error)
		in    string
		want  string
		err   string
	}{
		{"constraints obey", ParsePrecisionConstraints, "obey", "obey", ""},
		{"constraints prefer", ParsePrecisionConstraints, "Prefer", "prefer", ""},
		{"constraints none", ParsePrecisionConstraints, "none", "", ""},
		{"constraints bad", ParsePrecisionConstraints, "strict", "", "use prefer (keep layer precisions where possible), obey (fail otherwise) or none"},
		{"verbosity detailed", ParseProfilingVerbosity, "detailed", "detailed", ""},
		{"verbosity none", ParseProfilingVerbosity, "none", "none", ""},
		{"verbosity layer names", ParseProfilingVerbosity, "layer_names_only", "layer_names_only", ""},
		{"verbosity old default", ParseProfilingVerbosity, "default", "layer_names_only", ""},
		{"verbosity old verbose", ParseProfilingVerbosity, "verbose", "detailed", ""},
		{"verbosity bad", ParseProfilingVerbosity, "all", "", "use layer_names_only, detailed or none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse(tt.in)
			if tt.err != "" {
				wantErr(t, err, tt.err)
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestParseTacticSources(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "-CUDNN,+CUBLAS", want: []string{"+cublas", "-cudnn"}},
		{in: "-jit_convolutions,-EDGE_MASK_CONVOLUTIONS,-JIT_CONVOLUTIONS", want: []string{"-edge_mask_convolutions", "-jit_convolutions"}},
		{in: "+CUBLAS_LT", want: []string{"+cublas_lt"}},
		{in: "", err: "is empty"},
		{in: "CUDNN", err: "needs a + (enable) or - (disable)"},
		{in: "-CUDNN,", err: `entry "" needs a +`},
		{in: "+TENSORCORE", err: `unknown source "TENSORCORE"; use CUBLAS, CUBLAS_LT, CUDNN, EDGE_MASK_CONVOLUTIONS, JIT_CONVOLUTIONS`},
		{in: "+CUDNN,-cudnn", err: "both enables and disables CUDNN"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTacticSources(tt.in)
			if tt.err != "" {
				wantErr(t, err, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnsupported(t *testing.T) {
	tests := []struct {
		name string
		want string // "" means not a refused trtexec flag
	}{
		{"iterations", "--iterations is a trtexec flag for running inference; trtbuild builds the engine and never runs it: build with trtbuild, then for inference run trtexec --loadEngine=model.engine with --iterations"},
		{"use-cuda-graph", "--useCudaGraph is a trtexec flag for running inference"},
		{"USECUDAGRAPH", "--useCudaGraph is a trtexec flag"},
		{"loadEngine", "for inference run trtexec --loadEngine=model.engine"},
		{"exportLayerInfo", "--exportLayerInfo is a trtexec flag that reads a built engine's layers, which only TensorRT can read: trtbuild engine inspect model.engine shows its TensorRT version, build key, precision and profiles; for the layers build with --profilingVerbosity detailed, then run trtexec --loadEngine=model.engine --exportLayerInfo=… --skipInference"},
		{"dumpLayerInfo", "trtbuild engine inspect model.engine shows"},
		{"getPlanVersionOnly", "trtbuild engine inspect model.engine names the TensorRT version that wrote the plan"},
		{"dumpOptimizationProfile", "trtbuild engine inspect model.engine lists the engine's optimization profiles"},
		{"calib", "INT8 calibration"},
		{"deploy", "Caffe and UFF models"},
		{"output", "the engine's path is -o"},
		{"explicitBatch", "has no effect since TensorRT 10"},
		{"buildOnly", "--buildOnly is a trtexec flag of TensorRT 8 (now --skipInference); trtbuild never runs inference: leave it out"},
		{"sparsity", "use --sparse-weights"},
		{"avgTiming", ""},     // trtbuild takes it: --avg-timing
		{"setBuildRoute", ""}, // trtbuild takes it: --set-build-route
		{"maxTactics", "--maxTactics is a trtexec builder flag that trtbuild does not set"},
		{"helpBuildRoute", "--helpBuildRoute is a trtexec 11 flag that prints TensorRT's build-route knobs as JSON; trtbuild does not print them: run trtexec --helpBuildRoute, then build with trtbuild --set-build-route"},
		{"tuneBuildRoutes", "--tuneBuildRoutes is a trtexec 11 flag of its build-route tuning loop"},
		{"tuningCacheFile", "then build the best route with trtbuild --set-build-route"},
		{"tuning-cache-file", "--tuningCacheFile is a trtexec 11 flag"},
		{"saveAllEngines", "tune with trtexec --tuneBuildRoutes"},
		{"greenContext", "--greenContext is a trtexec builder flag that trtbuild does not set: it profiles on a CUDA green context of N SMs"},
		{"remoteConfig", "safety-certified (--safe) builds"},
		{"frobnicate", ""},
		{"fp16", ""},
		{"best", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, ok := Unsupported(tt.name)
			if tt.want == "" {
				if ok {
					t.Errorf("%s is refused: %s", tt.name, msg)
				}
				return
			}
			if !ok || !strings.Contains(msg, tt.want) {
				t.Errorf("message %q, want it to contain %q", msg, tt.want)
			}
		})
	}
	// Every refused flag gets one line that says it is a trtexec flag.
	for name := range unsupported {
		msg, ok := Unsupported(name)
		if !ok || !strings.HasPrefix(msg, "--"+name+" is a trtexec ") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q", name, msg)
		}
	}
}

func TestParseBuildRoute(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{"-conv_use_long_w=off", "-conv_use_long_w=off", ""},
		{"  -conv_use_long_w=off   -kgen:codegen:cuda_tile=2 ", "-conv_use_long_w=off -kgen:codegen:cuda_tile=2", ""},
		{"", "", "--setBuildRoute is empty; give knobs -NAME=VALUE"},
		{"   ", "", "--setBuildRoute is empty"},
		{"conv_use_long_w=off", "", `--setBuildRoute knob "conv_use_long_w=off" is not -NAME=VALUE`},
		{"-conv_use_long_w", "", `--setBuildRoute knob "-conv_use_long_w" is not -NAME=VALUE`},
		{"-=on", "", `--setBuildRoute knob "-=on" is not -NAME=VALUE`},
		{"-a=", "", `--setBuildRoute knob "-a=" is not -NAME=VALUE`},
		{"-a='on'", "", `is not -NAME=VALUE`},
		{"-a=o\x01n", "", "holds a control character"},
	}
	for _, tt := range tests {
		got, err := ParseBuildRoute(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseBuildRoute(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseBuildRoute(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseIOFormats(f *testing.F) {
	for _, s := range []string{"fp16:chw", "fp16:chw,int8:chw4+chw32", "x", ":", ",", "fp16:chw+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseIOFormats("--inputIOFormats", s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
			return
		}
		// What was accepted writes back to an equivalent list.
		var parts []string
		for _, f := range got {
			parts = append(parts, f.String())
		}
		again, err := ParseIOFormats("--inputIOFormats", strings.Join(parts, ","))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("%q: parsed %v, written back and parsed %v, %v", s, got, again, err)
		}
	})
}

func FuzzParseLayerPrecisions(f *testing.F) {
	for _, s := range []string{"conv1:fp16", "*:fp32,a/b:int8", "'a':fp16", "a", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseLayerPrecisions(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, lp := range got {
			if lp.Layer == "" || seen[lp.Layer] || !contains(DataTypes, lp.Type) {
				t.Fatalf("%q: accepted %v", s, got)
			}
			seen[lp.Layer] = true
		}
	})
}
