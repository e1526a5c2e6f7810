package trt

import "strings"

// rule is one known kind of failure. It matches when all the fragments of any one of its
// patterns occur in the same message (compared case-insensitively).
type rule struct {
	name     string
	patterns [][]string // lower-case fragments; each inner list must all appear in one message
	hint     string
}

// rules are tried in order, and the first that matches any message wins, so the order is the
// priority: what the environment decides (driver, GPU, libraries) first, then errors that name
// their cause, then warnings that explain a vaguer error further down, then a rejected timing
// cache (TensorRT goes on without it, so it explains a failure only when nothing above
// matches), and last the generic internal error.
// Fragments are taken from messages TensorRT, its ONNX parser, CUDA and the dynamic loader
// print; TensorRT itself spells "insuficient" with one f in some of them.
var rules = []rule{
	{
		name: "driver",
		patterns: [][]string{
			{"cuda driver version is insufficient"},
			{"cudaerrorinsufficientdriver"},
			{"cuda initialization failure with error: 35"},
			{"forward compatibility was attempted on non supported hw"},
			{"unsupported display driver / cuda driver combination"},
		},
		hint: "the NVIDIA driver is too old for the CUDA version this TensorRT uses: update the driver (nvidia-smi shows it) or use a TensorRT built for an older CUDA",
	},
	{
		name: "no-gpu",
		patterns: [][]string{
			{"no cuda-capable device is detected"},
			{"cudaerrornodevice"},
			{"cuda initialization failure with error: 100"},
		},
		hint: "no GPU is visible: check that nvidia-smi lists one and that CUDA_VISIBLE_DEVICES allows it; run containers with --gpus all",
	},
	{
		name: "cuda-init",
		patterns: [][]string{
			{"cuda initialization failure"},
		},
		hint: "CUDA could not start: check that nvidia-smi works and that the driver supports this TensorRT's CUDA version; run containers with --gpus all",
	},
	{
		name: "device-ordinal",
		patterns: [][]string{
			{"invalid device ordinal"},
			{"cudaerrorinvaliddevice"},
		},
		hint: "--device names a GPU that does not exist: trtbuild version shows how many GPUs CUDA sees (numbered from 0)",
	},
	{
		name: "unsupported-gpu",
		patterns: [][]string{
			{"is not supported by this tensorrt release"},
		},
		hint: "this GPU's compute capability is not supported by this TensorRT release: use a TensorRT version that lists it in its support matrix",
	},
	{
		// Before the library rules: the dynamic loader names the file in both.
		name: "executable-stack",
		patterns: [][]string{
			{execStackFragment},
		},
		hint: "a TensorRT library asks for an executable stack, which glibc 2.41 and newer refuse to load: clear the flag on the file the error names (patchelf --clear-execstack FILE, or execstack -c FILE), or start trtbuild with GLIBC_TUNABLES=glibc.rtld.execstack=2, or use a TensorRT release whose libraries do not ask for it",
	},
	{
		name: "builder-resource",
		patterns: [][]string{
			{"unable to load library", "libnvinfer_builder_resource"},
		},
		hint: "TensorRT loads its builder resource library by file name from the worker's LD_LIBRARY_PATH, which starts with the TensorRT folder trtbuild chose: that folder lacks it; trtbuild version --check-builder names the file and the folder to add",
	},
	{
		// The search found no libnvinfer of a major trtbuild drives (SearchError).
		name: "no-tensorrt",
		patterns: [][]string{
			{"tensorrt library not found"},
		},
		hint: "no TensorRT 10 or 11 was found where trtbuild looks: install one (pip install tensorrt, or NVIDIA's tarball or packages), or point --tensorrt-lib at the folder that holds libnvinfer; trtbuild version shows where it looked",
	},
	{
		name: "tensorrt-library",
		patterns: [][]string{
			{"libnvinfer", "cannot open shared object file"},
			{"libnvonnxparser", "cannot open shared object file"},
			{"libcudart", "cannot open shared object file"},
		},
		hint: "the TensorRT or CUDA libraries are not on the library path: add TensorRT's lib folder to LD_LIBRARY_PATH (see docs/tensorrt.md)",
	},
	{
		name: "plugin-library",
		patterns: [][]string{
			{"plugin library", "cannot open shared object file"},
			{"plugin library", "undefined symbol"},
		},
		hint: "a --plugins library could not be loaded: check the path, and run ldd on it to see which of its dependencies are missing from LD_LIBRARY_PATH",
	},
	{
		name: "plugin-not-found",
		patterns: [][]string{
			{"plugin not found, are the plugin name"},
			{"getplugincreator could not find plugin"},
			{"could not find plugin creator"},
		},
		hint: "the model uses an operator that neither TensorRT nor a loaded plugin implements: load its plugin library with --plugins PATH, or replace the operator in the model",
	},
	{
		name: "unsupported-node",
		patterns: [][]string{
			{"unsupported_node"},
			{"no importer registered for op"},
		},
		hint: "the ONNX parser does not support an operator, attribute or data type of this model: check TensorRT's ONNX operator support list, export with another opset, or supply a plugin with --plugins",
	},
	{
		name: "protobuf-limit",
		patterns: [][]string{
			{"exceeds maximum protobuf size"},
		},
		hint: "the model is over protobuf's 2 GB limit: save it with its weights as external data (onnx.save(model, path, save_as_external_data=True)) next to the .onnx file",
	},
	{
		name: "external-data",
		patterns: [][]string{
			{"external data"},
			{"external weights"},
			{"failed to open file"},
		},
		hint: "the model's external weight file is missing or unreadable: keep it in the folder of the .onnx file, under the name the model records",
	},
	{
		name: "invalid-model",
		patterns: [][]string{
			{"model_deserialize_failed"},
			{"failed to parse onnx model"},
			{"invalid_graph"},
		},
		hint: "the file is not a valid ONNX model: check it with python -c \"import onnx; onnx.checker.check_model('MODEL.onnx')\" and export it again",
	},
	{
		name: "missing-profile",
		patterns: [][]string{
			{"no optimization profile has been defined"},
			{"dynamic or shape inputs", "optimization profile"},
		},
		hint: "the model has dynamic input dimensions: give their shapes with --shapes, or --min-shapes, --opt-shapes and --max-shapes",
	},
	{
		name: "profile-shapes",
		patterns: [][]string{
			{"kmin dimensions"},
			{"kopt dimensions"},
			{"kmax dimensions"},
			{"setdimensions"},
			{"optimization profile", "invalid"},
		},
		hint: "the shapes do not fit the model: every input needs min <= opt <= max, the model's rank, and its fixed dimensions unchanged",
	},
	{
		name: "timing-cache-miss",
		patterns: [][]string{
			{"error_on_timing_cache_miss"},
			{"timing cache miss"},
		},
		hint: "a tactic was missing from the timing cache and misses were set to fail the build: build once without that option to fill the cache",
	},
	{
		// Before the memory rules: TensorRT 11.2 follows it with "Could not find any
		// implementation for node X", which is not a memory problem here.
		name: "low-precision-kernel",
		patterns: [][]string{
			{lowPrecisionFragment},
		},
		hint: "TensorRT has no float16/bfloat16 kernel for the convolution named after \"Failing node:\": --keep-fp32 NODE,... converts the model with those nodes (or every node of an operator type, e.g. Conv) left in float32; trtbuild rebuilds once by itself with the first such node kept, so name the others",
	},
	{
		name: "gpu-out-of-memory",
		patterns: [][]string{
			{"cuda runtime (out of memory)"},
			{"cudaerrormemoryallocation"},
			{"requested amount of gpu memory"},
			{"outofmemory"},
			{"out of memory"},
		},
		hint: "the GPU ran out of memory: stop other processes using it (nvidia-smi), lower --workspace, or lower the --max-shapes of the profile",
	},
	{
		name: "host-out-of-memory",
		patterns: [][]string{
			{"std::bad_alloc"},
			{"cannot allocate memory"},
		},
		hint: "the machine ran out of host memory: the builder can need several times the model's size in RAM; close other programs or build on a larger machine",
	},
	{
		name: "workspace",
		patterns: [][]string{
			{"try increasing the workspace size"},
			{"insufficient memory"},
			{"insuficient memory"},
			{"device memory is insufficient"},
			{"sufficient workspace memory"},
		},
		hint: "tactics were skipped for lack of memory: raise --workspace (unset, it may use all free GPU memory) or free GPU memory held by other processes",
	},
	{
		name: "no-implementation",
		patterns: [][]string{
			{"could not find any implementation"},
		},
		hint: "TensorRT found no kernel for a layer: often a memory limit (raise --workspace, free GPU memory, lower --max-shapes); otherwise rerun with --verbose and report the layer",
	},
	{
		name: "timing-cache-mismatch",
		patterns: [][]string{
			{"magic tag does not match"},
			{"magictag"},
			{"the timing cache will not be used"},
			{"invalid timing cache"},
			{"timing cache", "mismatch"},
		},
		hint: "the timing cache was rejected (made by another TensorRT version, GPU or CUDA) and the build ran without it: delete it, or keep one cache per TensorRT version and GPU",
	},
	{
		name: "internal-assertion",
		patterns: [][]string{
			{"assertion", "failed"},
			{"internal error"},
		},
		hint: "TensorRT failed an internal check: rerun with --verbose and attach the log to a TensorRT bug report, or try another --opt-level",
	},
}

// Hint returns a one-line, actionable hint for a failed build from its error and log messages,
// or "" when no known pattern matches. Rules are tried in a fixed priority order and the
// first rule that matches any message wins, whatever the messages' order.
func Hint(messages []string) string {
	r, ok := match(messages)
	if !ok {
		return ""
	}
	return r.hint
}

// match returns the first rule that matches any of messages.
func match(messages []string) (rule, bool) {
	lower := make([]string, len(messages))
	for i, m := range messages {
		lower[i] = strings.ToLower(m)
	}
	for _, r := range rules {
		for _, m := range lower {
			if r.matches(m) {
				return r, true
			}
		}
	}
	return rule{}, false
}

// matches reports whether every fragment of one of r's patterns occurs in m (lower case).
func (r rule) matches(m string) bool {
	for _, p := range r.patterns {
		all := true
		for _, frag := range p {
			if !strings.Contains(m, frag) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}
