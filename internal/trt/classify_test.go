package trt

import (
	"strings"
	"testing"
)

// Messages below are real TensorRT, ONNX parser, CUDA and loader output (or trtbuild's own
// wording around them), the kind a failed build leaves in its error and log tail.
var classifyTests = []struct {
	name     string
	messages []string
	rule     string // "" when no hint is expected
}{
	{name: "nothing", messages: nil},
	{name: "unknown text", messages: []string{"something unusual happened"}},
	{
		name:     "old driver",
		messages: []string{"[TRT] CUDA initialization failure with error: 35. Please check your CUDA installation"},
		rule:     "driver",
	},
	{
		name:     "old driver from the runtime",
		messages: []string{"cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version"},
		rule:     "driver",
	},
	{name: "no gpu", messages: []string{"cudaGetDeviceCount: no CUDA-capable device is detected"}, rule: "no-gpu"},
	{name: "no gpu code", messages: []string{"CUDA initialization failure with error: 100"}, rule: "no-gpu"},
	{name: "other init failure", messages: []string{"CUDA initialization failure with error: 999"}, rule: "cuda-init"},
	{name: "device ordinal", messages: []string{"cudaSetDevice(3): invalid device ordinal"}, rule: "device-ordinal"},
	{name: "no gpu from the driver API", messages: []string{"cuInit: no CUDA-capable device is detected (CUDA error 100)"}, rule: "no-gpu"},
	{name: "the driver's old-driver text", messages: []string{"cuInit: CUDA driver version is insufficient for CUDA runtime version (CUDA error 35)"}, rule: "driver"},
	{
		name:     "builder resource by file name (trtexec on 10.16.2)",
		messages: []string{"TensorRT could not create a builder: createInferBuilder: Error Code 6: API Usage Error (Unable to load library: libnvinfer_builder_resource_sm86.so.10.16.2: libnvinfer_builder_resource_sm86.so.10.16.2: cannot open shared object file: No such file or directory)"},
		rule:     "builder-resource",
	},
	{
		name:     "executable stack refused by glibc 2.41",
		messages: []string{"createInferBuilder: Error Code 6: API Usage Error (Unable to load library: libnvinfer_builder_resource.so.10.7.0: libnvinfer_builder_resource.so.10.7.0: cannot enable executable stack as shared object requires: Invalid argument)"},
		rule:     "executable-stack",
	},
	{
		name:     "old gpu",
		messages: []string{"Target GPU SM 61 is not supported by this TensorRT release."},
		rule:     "unsupported-gpu",
	},
	{
		name:     "no TensorRT found",
		messages: []string{"cannot use TensorRT: TensorRT library not found: cannot load libnvinfer.so.11 or libnvinfer.so.10; searched: system (LD_LIBRARY_PATH=unset, ld.so.cache) libnvinfer.so.11: cannot open shared object file: No such file or directory"},
		rule:     "no-tensorrt",
	},
	{
		name:     "library path",
		messages: []string{"trtbuild: error while loading shared libraries: libnvinfer.so.10: cannot open shared object file: No such file or directory"},
		rule:     "tensorrt-library",
	},
	{
		name:     "plugin library path",
		messages: []string{"cannot load plugin library ./libmy.so: libcustom.so.1: cannot open shared object file: No such file or directory"},
		rule:     "plugin-library",
	},
	{
		name: "missing plugin beats unsupported node",
		messages: []string{
			"node 2 (LeakyRelu_2, Custom): Assertion failed: creator && \"Plugin not found, are the plugin name, version, and namespace correct?\" (UNSUPPORTED_NODE)",
			"3: getPluginCreator could not find plugin: Custom version: 1",
		},
		rule: "plugin-not-found",
	},
	{
		name:     "unsupported node",
		messages: []string{"node 17 (/model/Round, Round): No importer registered for op: Round (UNSUPPORTED_NODE)"},
		rule:     "unsupported-node",
	},
	{
		name:     "unsupported datatype code only",
		messages: []string{"node 3 (cast1, Cast): unsupported cast target (UNSUPPORTED_NODE_DATATYPE)"},
		rule:     "unsupported-node",
	},
	{
		name:     "protobuf limit",
		messages: []string{"[libprotobuf ERROR] A protocol message was rejected because it was too big (more than 2147483647 bytes); Message onnx.ModelProto exceeds maximum protobuf size of 2GB: 4294967296"},
		rule:     "protobuf-limit",
	},
	{name: "external data", messages: []string{"Failed to open file: weights.bin"}, rule: "external-data"},
	{name: "not a model", messages: []string{"node -1 (, ): Failed to parse ONNX model from file (MODEL_DESERIALIZE_FAILED)"}, rule: "invalid-model"},
	{
		name:     "no profile",
		messages: []string{"4: [network.cpp::validate::3119] Error Code 4: Internal Error (Network has dynamic or shape inputs, but no optimization profile has been defined.)"},
		rule:     "missing-profile",
	},
	{
		name:     "bad profile",
		messages: []string{"IOptimizationProfile::setDimensions: Error Code 3: API Usage Error (Parameter check failed, condition: std::all_of(dims.d, dims.d + dims.nbDims, [](int64_t x) noexcept { return x >= 0; }).)"},
		rule:     "profile-shapes",
	},
	{
		name:     "static dims changed",
		messages: []string{"Error Code 4: API Usage Error (images: for dimension number 1 in profile 0 does not match network definition (got min=4, network definition=3).) kMIN dimensions in profile 0 are [1,4,224,224]"},
		rule:     "profile-shapes",
	},
	{
		name:     "cache miss fails the build",
		messages: []string{"Error Code 4: Internal Error (Timing cache miss for layer conv1 while BuilderFlag::kERROR_ON_TIMING_CACHE_MISS is set)"},
		rule:     "timing-cache-miss",
	},
	{
		name:     "device out of memory",
		messages: []string{"1: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)"},
		rule:     "gpu-out-of-memory",
	},
	{
		name: "out of memory beats no implementation",
		messages: []string{
			"10: [optimizer.cpp::computeCosts::2011] Error Code 10: Internal Error (Could not find any implementation for node {ForeignNode[Reshape_419...Gather_2423]}.)",
			"2: Requested amount of GPU memory (8589934592 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.",
		},
		rule: "gpu-out-of-memory",
	},
	{name: "host memory", messages: []string{"std::bad_alloc"}, rule: "host-out-of-memory"},
	{
		name: "workspace warning explains no implementation",
		messages: []string{
			"Skipping tactic 0 due to insuficient memory on requested size of 1170309120 detected for tactic 0.",
			"Error Code 10: Internal Error (Could not find any implementation for node {ForeignNode[transformer.wte.weight...MatMul_2899]}.)",
		},
		rule: "workspace",
	},
	{
		name:     "no implementation alone",
		messages: []string{"[optimizer.cpp::computeCosts::2011] Error Code 10: Internal Error (Could not find any implementation for node ArgMax_260.)"},
		rule:     "no-implementation",
	},
	{
		name:     "assertion",
		messages: []string{"2: [builder.cpp::buildSerializedNetwork::609] Error Code 2: Internal Error (Assertion enginePtr != nullptr failed. )"},
		rule:     "internal-assertion",
	},
	{
		name: "rejected cache explains nothing when something else matches",
		messages: []string{
			"the timing cache does not match this TensorRT version or GPU; building from an empty cache",
			"Error Code 1: Cuda Runtime (out of memory)",
		},
		rule: "gpu-out-of-memory",
	},
	{
		name: "rejected cache alone",
		messages: []string{
			"1: [stdArchiveReader.cpp::StdArchiveReaderInitCommon::36] Error Code 1: Serialization (Serialization assertion magicTagRead == kMAGIC_TAG failed.Magic tag does not match)",
			"4: The timing cache will not be used!",
		},
		rule: "timing-cache-mismatch", // ranks above the generic "assertion ... failed"
	},
	{
		name:     "rejected cache, warning only",
		messages: []string{"4: The timing cache will not be used!"},
		rule:     "timing-cache-mismatch",
	},
	{
		name: "no low-precision kernel",
		messages: []string{
			"No low-precision conv kernel available for this strongly-typed Conv/ConvTranspose. Consider keeping Conv/ConvTranspose and Q/DQ ops in FP32. Failing node: node_223_Conv",
			"IBuilder::buildSerializedNetworkToStream: Error Code 10: Internal Error (Could not find any implementation for node node_223_Conv. In computeCosts at optimizer/common/tactic/optimizer.cpp)",
		},
		rule: "low-precision-kernel",
	},
	{
		name:     "case does not matter",
		messages: []string{"NO CUDA-CAPABLE DEVICE IS DETECTED"},
		rule:     "no-gpu",
	},
}

func TestHint(t *testing.T) {
	byName := make(map[string]rule, len(rules))
	for _, r := range rules {
		byName[r.name] = r
	}
	for _, tt := range classifyTests {
		t.Run(tt.name, func(t *testing.T) {
			got := Hint(tt.messages)
			if tt.rule == "" {
				if got != "" {
					t.Fatalf("Hint = %q, want none", got)
				}
				return
			}
			want, ok := byName[tt.rule]
			if !ok {
				t.Fatalf("no rule named %q", tt.rule)
			}
			if got != want.hint {
				r, _ := match(tt.messages)
				t.Fatalf("Hint matched rule %q (%q), want %q", r.name, got, tt.rule)
			}
		})
	}
}

// TestHintOrderIndependent checks that the message order does not change the hint.
func TestHintOrderIndependent(t *testing.T) {
	for _, tt := range classifyTests {
		if len(tt.messages) < 2 {
			continue
		}
		rev := make([]string, len(tt.messages))
		for i, m := range tt.messages {
			rev[len(rev)-1-i] = m
		}
		if a, b := Hint(tt.messages), Hint(rev); a != b {
			t.Errorf("%s: Hint depends on message order: %q vs %q", tt.name, a, b)
		}
	}
}

// TestRulesWellFormed keeps the table usable: every rule tested, names unique, fragments in
// lower case (messages are lowered before matching), hints one line.
func TestRulesWellFormed(t *testing.T) {
	tested := make(map[string]bool)
	for _, tt := range classifyTests {
		tested[tt.rule] = true
	}
	seen := make(map[string]bool)
	for _, r := range rules {
		if seen[r.name] {
			t.Errorf("rule %q appears twice", r.name)
		}
		seen[r.name] = true
		if !tested[r.name] {
			t.Errorf("rule %q has no test case in classifyTests", r.name)
		}
		if len(r.patterns) == 0 {
			t.Errorf("rule %q has no patterns", r.name)
		}
		for _, p := range r.patterns {
			if len(p) == 0 {
				t.Errorf("rule %q has an empty pattern", r.name)
			}
			for _, frag := range p {
				if frag == "" || frag != strings.ToLower(frag) {
					t.Errorf("rule %q: fragment %q must be non-empty lower case", r.name, frag)
				}
			}
		}
		if r.hint == "" || strings.Contains(r.hint, "\n") || strings.HasSuffix(r.hint, ".") {
			t.Errorf("rule %q: hint %q must be one line without a final period", r.name, r.hint)
		}
	}
}

func BenchmarkHint(b *testing.B) {
	// A failed build's log tail: many ordinary lines, the deciding one last.
	msgs := make([]string, 0, 201)
	for i := 0; i < 200; i++ {
		msgs = append(msgs, "[MemUsageChange] Init builder kernel library: CPU +1454, GPU +266, now: CPU 11567, GPU 1340 (MiB)")
	}
	msgs = append(msgs, "Error Code 10: Internal Error (Could not find any implementation for node ArgMax_260.)")
	b.ReportAllocs()
	for b.Loop() {
		if Hint(msgs) == "" {
			b.Fatal("no hint")
		}
	}
}
