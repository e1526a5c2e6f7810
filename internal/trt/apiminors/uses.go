package apiminors

// Use is one piece of TensorRT's C++ API that trtbuild's TensorRT backend (the shim,
// internal/cgo/tensorrt_*.cpp) depends on: a member function it calls, "~" for a delete of an
// object TensorRT made, an enumerator it passes or compares, or, with Callback, an interface it
// implements and TensorRT calls.
type Use struct {
	// Type is the class ("nvinfer1::IBuilderConfig") or the enum ("nvinfer1::BuilderFlag"), as
	// the shim names it, qualified.
	Type string
	// Member is the member function or the enumerator; empty for a Callback.
	Member string
	// Flags are the build options that make the shim use it; none when a build uses it
	// whatever its options (or whatever the model holds, which is not known before parsing).
	Flags []string
	// Callback marks an interface the shim implements: TensorRT calls its virtual functions.
	Callback bool
	// Majors lists the TensorRT majors whose shim uses it; none: every major.
	Majors []int
}

// major10 marks what only the shim compiled for TensorRT 10 uses: weak typing, precision flags
// and the tactic sources TensorRT 11 removed.
var major10 = []int{10}

// Flags a build's options turn on, as the command line names them.
var (
	flagsIOFormats      = []string{"--input-io-formats", "--output-io-formats"}
	flagsDataTypes      = []string{"--input-io-formats", "--output-io-formats", "--layer-precisions"}
	flagsDLA            = []string{"--use-dla-core"}
	flagsTacticSources  = []string{"--tactic-sources"}
	flagsProfiling      = []string{"--profiling-verbosity"}
	flagsMemPools       = []string{"--mem-pool-size"}
	flagsLayerPrecision = []string{"--layer-precisions"}
)

// Uses is what the shim uses of TensorRT's API, for the headers the table is generated from
// (the vendored 10.16 and 11.1): calls compiled only for older headers (buildSerializedNetwork
// before 10.13, setShapeValues before 10.11) are not listed. uses_test.go checks the list
// against the shim's source both ways.
var Uses = []Use{
	// The builder and its objects.
	{Type: "nvinfer1::IBuilder", Member: "setErrorRecorder"},
	{Type: "nvinfer1::IBuilder", Member: "getPluginRegistry"},
	{Type: "nvinfer1::IBuilder", Member: "createNetworkV2"},
	{Type: "nvinfer1::IBuilder", Member: "createBuilderConfig"},
	{Type: "nvinfer1::IBuilder", Member: "createOptimizationProfile"},
	{Type: "nvinfer1::IBuilder", Member: "buildSerializedNetworkToStream"},
	{Type: "nvinfer1::IBuilder", Member: "getNbDLACores", Flags: flagsDLA},
	{Type: "nvinfer1::IBuilder", Member: "~"},

	{Type: "nvinfer1::IBuilderConfig", Member: "setFlag"},
	{Type: "nvinfer1::IBuilderConfig", Member: "clearFlag"},
	{Type: "nvinfer1::IBuilderConfig", Member: "setAvgTimingIterations"}, // trtbuild's default is trtexec's 8
	{Type: "nvinfer1::IBuilderConfig", Member: "setProgressMonitor"},
	{Type: "nvinfer1::IBuilderConfig", Member: "setProfileStream"},
	{Type: "nvinfer1::IBuilderConfig", Member: "addOptimizationProfile"},
	{Type: "nvinfer1::IBuilderConfig", Member: "createTimingCache"},
	{Type: "nvinfer1::IBuilderConfig", Member: "setTimingCache"},
	{Type: "nvinfer1::IBuilderConfig", Member: "getTimingCache"},
	{Type: "nvinfer1::IBuilderConfig", Member: "setMemoryPoolLimit", Flags: []string{"--workspace", "--mem-pool-size"}},
	{Type: "nvinfer1::IBuilderConfig", Member: "setBuilderOptimizationLevel", Flags: []string{"--opt-level"}},
	{Type: "nvinfer1::IBuilderConfig", Member: "setMaxAuxStreams", Flags: []string{"--max-aux-streams"}},
	{Type: "nvinfer1::IBuilderConfig", Member: "setHardwareCompatibilityLevel", Flags: []string{"--hardware-compat"}},
	{Type: "nvinfer1::IBuilderConfig", Member: "setPluginsToSerialize", Flags: []string{"--version-compatible"}},
	{Type: "nvinfer1::IBuilderConfig", Member: "setProfilingVerbosity", Flags: flagsProfiling},
	{Type: "nvinfer1::IBuilderConfig", Member: "getTacticSources", Flags: flagsTacticSources},
	{Type: "nvinfer1::IBuilderConfig", Member: "setTacticSources", Flags: flagsTacticSources},
	{Type: "nvinfer1::IBuilderConfig", Member: "setDefaultDeviceType", Flags: flagsDLA},
	{Type: "nvinfer1::IBuilderConfig", Member: "setDLACore", Flags: flagsDLA},
	{Type: "nvinfer1::IBuilderConfig", Member: "setBuildRoute", Flags: []string{"--set-build-route"}, Majors: []int{11}},
	{Type: "nvinfer1::IBuilderConfig", Member: "~"},

	{Type: "nvinfer1::INetworkDefinition", Member: "getNbInputs"},
	{Type: "nvinfer1::INetworkDefinition", Member: "getInput"},
	{Type: "nvinfer1::INetworkDefinition", Member: "getNbOutputs"},
	{Type: "nvinfer1::INetworkDefinition", Member: "getOutput"},
	{Type: "nvinfer1::INetworkDefinition", Member: "getNbLayers", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::INetworkDefinition", Member: "getLayer", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::INetworkDefinition", Member: "~"},

	{Type: "nvinfer1::ITensor", Member: "getName"},
	{Type: "nvinfer1::ITensor", Member: "getDimensions"},
	{Type: "nvinfer1::ITensor", Member: "isShapeTensor"},
	{Type: "nvinfer1::ITensor", Member: "getType", Flags: flagsDataTypes},
	{Type: "nvinfer1::ITensor", Member: "setType", Flags: flagsIOFormats, Majors: major10},
	{Type: "nvinfer1::ITensor", Member: "setAllowedFormats", Flags: flagsIOFormats},

	{Type: "nvinfer1::ILayer", Member: "getName", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::ILayer", Member: "getPrecision", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::ILayer", Member: "setPrecision", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::ILayer", Member: "getNbInputs", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::ILayer", Member: "getInput", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::ILayer", Member: "getNbOutputs", Flags: flagsLayerPrecision, Majors: major10},
	{Type: "nvinfer1::ILayer", Member: "getOutput", Flags: flagsLayerPrecision, Majors: major10},

	// Shapes: any model may have dynamic inputs or shape tensors, so these count for every build.
	{Type: "nvinfer1::IOptimizationProfile", Member: "setDimensions"},
	{Type: "nvinfer1::IOptimizationProfile", Member: "setShapeValuesV2"},

	{Type: "nvinfer1::ITimingCache", Member: "serialize"},
	{Type: "nvinfer1::ITimingCache", Member: "combine"},
	{Type: "nvinfer1::ITimingCache", Member: "queryKeys"},
	{Type: "nvinfer1::ITimingCache", Member: "~"},

	{Type: "nvinfer1::IHostMemory", Member: "data"},
	{Type: "nvinfer1::IHostMemory", Member: "size"},
	{Type: "nvinfer1::IHostMemory", Member: "~"},

	{Type: "nvinfer1::IPluginRegistry", Member: "getErrorRecorder"},
	{Type: "nvinfer1::IPluginRegistry", Member: "setErrorRecorder"},
	{Type: "nvinfer1::IPluginRegistry", Member: "loadLibrary", Flags: []string{"--plugins", "--version-compatible"}},

	// The ONNX parser.
	{Type: "nvonnxparser::IParser", Member: "parseFromFile"},
	{Type: "nvonnxparser::IParser", Member: "getNbErrors"},
	{Type: "nvonnxparser::IParser", Member: "getError"},
	{Type: "nvonnxparser::IParser", Member: "getUsedVCPluginLibraries", Flags: []string{"--version-compatible"}},
	{Type: "nvonnxparser::IParser", Member: "~"},
	{Type: "nvonnxparser::IParserError", Member: "code"},
	{Type: "nvonnxparser::IParserError", Member: "desc"},
	{Type: "nvonnxparser::IParserError", Member: "node"},
	{Type: "nvonnxparser::IParserError", Member: "nodeName"},
	{Type: "nvonnxparser::IParserError", Member: "nodeOperator"},

	// What the shim implements and TensorRT calls.
	{Type: "nvinfer1::ILogger", Callback: true},
	{Type: "nvinfer1::IErrorRecorder", Callback: true},
	{Type: "nvinfer1::IProgressMonitor", Callback: true},
	{Type: "nvinfer1::IStreamWriter", Callback: true},

	// Enumerators the shim passes to TensorRT.
	{Type: "nvinfer1::BuilderFlag", Member: "kTF32", Flags: []string{"--no-tf32"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kREFIT", Flags: []string{"--refit"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kSTRIP_PLAN", Flags: []string{"--strip-weights"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kVERSION_COMPATIBLE", Flags: []string{"--version-compatible"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kEXCLUDE_LEAN_RUNTIME", Flags: []string{"--exclude-lean-runtime"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kSPARSE_WEIGHTS", Flags: []string{"--sparse-weights"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kDISABLE_TIMING_CACHE", Flags: []string{"--no-timing-cache"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kERROR_ON_TIMING_CACHE_MISS"}, // no option sets it yet: counted for every build
	{Type: "nvinfer1::BuilderFlag", Member: "kGPU_FALLBACK", Flags: []string{"--allow-gpu-fallback"}},
	{Type: "nvinfer1::BuilderFlag", Member: "kFP16", Flags: []string{"--fp16", "--best", "--use-dla-core"}, Majors: major10},
	{Type: "nvinfer1::BuilderFlag", Member: "kBF16", Flags: []string{"--bf16", "--best"}, Majors: major10},
	{Type: "nvinfer1::BuilderFlag", Member: "kINT8", Flags: []string{"--int8", "--best"}, Majors: major10},
	{Type: "nvinfer1::BuilderFlag", Member: "kFP8", Flags: []string{"--fp8"}, Majors: major10},
	{Type: "nvinfer1::BuilderFlag", Member: "kPREFER_PRECISION_CONSTRAINTS", Flags: []string{"--precision-constraints", "--use-dla-core"}, Majors: major10},
	{Type: "nvinfer1::BuilderFlag", Member: "kOBEY_PRECISION_CONSTRAINTS", Flags: []string{"--precision-constraints"}, Majors: major10},
	{Type: "nvinfer1::NetworkDefinitionCreationFlag", Member: "kSTRONGLY_TYPED", Majors: major10},
	{Type: "nvinfer1::HardwareCompatibilityLevel", Member: "kAMPERE_PLUS", Flags: []string{"--hardware-compat"}},
	{Type: "nvinfer1::HardwareCompatibilityLevel", Member: "kSAME_COMPUTE_CAPABILITY", Flags: []string{"--hardware-compat same-compute-capability"}},
	{Type: "nvinfer1::MemoryPoolType", Member: "kWORKSPACE", Flags: []string{"--workspace", "--mem-pool-size"}},
	{Type: "nvinfer1::MemoryPoolType", Member: "kTACTIC_SHARED_MEMORY", Flags: flagsMemPools},
	{Type: "nvinfer1::MemoryPoolType", Member: "kDLA_MANAGED_SRAM", Flags: flagsMemPools},
	{Type: "nvinfer1::MemoryPoolType", Member: "kDLA_LOCAL_DRAM", Flags: flagsMemPools},
	{Type: "nvinfer1::MemoryPoolType", Member: "kDLA_GLOBAL_DRAM", Flags: flagsMemPools},
	{Type: "nvinfer1::ProfilingVerbosity", Member: "kLAYER_NAMES_ONLY", Flags: flagsProfiling},
	{Type: "nvinfer1::ProfilingVerbosity", Member: "kNONE", Flags: flagsProfiling},
	{Type: "nvinfer1::ProfilingVerbosity", Member: "kDETAILED", Flags: flagsProfiling},
	{Type: "nvinfer1::TacticSource", Member: "kEDGE_MASK_CONVOLUTIONS", Flags: flagsTacticSources},
	{Type: "nvinfer1::TacticSource", Member: "kJIT_CONVOLUTIONS", Flags: flagsTacticSources},
	{Type: "nvinfer1::TacticSource", Member: "kCUBLAS", Flags: flagsTacticSources, Majors: major10},
	{Type: "nvinfer1::TacticSource", Member: "kCUBLAS_LT", Flags: flagsTacticSources, Majors: major10},
	{Type: "nvinfer1::TacticSource", Member: "kCUDNN", Flags: flagsTacticSources, Majors: major10},
	{Type: "nvinfer1::DeviceType", Member: "kDLA", Flags: flagsDLA},
	{Type: "nvinfer1::OptProfileSelector", Member: "kMIN"},
	{Type: "nvinfer1::OptProfileSelector", Member: "kOPT"},
	{Type: "nvinfer1::OptProfileSelector", Member: "kMAX"},
	{Type: "nvinfer1::DataType", Member: "kFLOAT", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kHALF", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kBF16", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kINT8", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kFP8", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kINT4", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kINT32", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kINT64", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kBOOL", Flags: flagsDataTypes},
	{Type: "nvinfer1::DataType", Member: "kUINT8", Flags: flagsDataTypes},
	{Type: "nvinfer1::TensorFormat", Member: "kLINEAR", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kCHW2", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kHWC8", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kCHW4", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kCHW16", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kCHW32", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kDHWC8", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kCDHW32", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kHWC", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kDLA_LINEAR", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kDLA_HWC4", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kHWC16", Flags: flagsIOFormats},
	{Type: "nvinfer1::TensorFormat", Member: "kDHWC", Flags: flagsIOFormats},

	// Enumerators TensorRT passes to the shim.
	{Type: "nvinfer1::ILogger::Severity", Member: "kINTERNAL_ERROR"},
	{Type: "nvinfer1::ILogger::Severity", Member: "kERROR"},
	{Type: "nvinfer1::ILogger::Severity", Member: "kWARNING"},
	{Type: "nvinfer1::ILogger::Severity", Member: "kINFO"},
	{Type: "nvinfer1::ILogger::Severity", Member: "kVERBOSE"},
	{Type: "nvinfer1::ErrorCode", Member: "kUNSPECIFIED_ERROR"},
	{Type: "nvinfer1::ErrorCode", Member: "kFAILED_ALLOCATION"},
	{Type: "nvonnxparser::ErrorCode", Member: "kSUCCESS"},
	{Type: "nvonnxparser::ErrorCode", Member: "kINTERNAL_ERROR"},
	{Type: "nvonnxparser::ErrorCode", Member: "kMEM_ALLOC_FAILED"},
	{Type: "nvonnxparser::ErrorCode", Member: "kMODEL_DESERIALIZE_FAILED"},
	{Type: "nvonnxparser::ErrorCode", Member: "kINVALID_VALUE"},
	{Type: "nvonnxparser::ErrorCode", Member: "kINVALID_GRAPH"},
	{Type: "nvonnxparser::ErrorCode", Member: "kINVALID_NODE"},
	{Type: "nvonnxparser::ErrorCode", Member: "kUNSUPPORTED_GRAPH"},
	{Type: "nvonnxparser::ErrorCode", Member: "kUNSUPPORTED_NODE"},
	{Type: "nvonnxparser::ErrorCode", Member: "kUNSUPPORTED_NODE_ATTR"},
	{Type: "nvonnxparser::ErrorCode", Member: "kUNSUPPORTED_NODE_INPUT"},
	{Type: "nvonnxparser::ErrorCode", Member: "kUNSUPPORTED_NODE_DATATYPE"},
	{Type: "nvonnxparser::ErrorCode", Member: "kUNSUPPORTED_NODE_DYNAMIC"},
	{Type: "nvonnxparser::ErrorCode", Member: "kUNSUPPORTED_NODE_SHAPE"},
	{Type: "nvonnxparser::ErrorCode", Member: "kREFIT_FAILED"},
}

// forMajor reports whether u is used by the shim compiled for major.
func (u Use) forMajor(major int) bool {
	if len(u.Majors) == 0 {
		return true
	}
	for _, m := range u.Majors {
		if m == major {
			return true
		}
	}
	return false
}
