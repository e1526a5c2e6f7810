package trtexec

import (
	"fmt"
	"strings"
)

// Kinds of trtexec flags trtbuild does not take; each has its own reason and advice.
const (
	kindInference   = iota // runs or times the engine
	kindInspect            // reads a built engine
	kindCalibration        // INT8 calibration
	kindOldFormat          // Caffe and UFF models, removed in TensorRT 10
	kindObsolete           // has no effect since TensorRT 10
	kindBuilder            // a builder setting trtbuild does not expose
	kindTuning             // TensorRT 11's build-route tuning loop
)

// unsupported lists trtexec's flags (TensorRT 10 and 11) that trtbuild does not take.
var unsupported = map[string]int{
	"loadEngine": kindInference, "iterations": kindInference, "warmUp": kindInference, "duration": kindInference,
	"avgRuns": kindInference, "useCudaGraph": kindInference, "noDataTransfers": kindInference,
	"useSpinWait": kindInference, "threads": kindInference, "streams": kindInference, "infStreams": kindInference,
	"exposeDMA": kindInference, "separateProfileRun": kindInference, "loadInputs": kindInference,
	"idleTime": kindInference, "sleepTime": kindInference, "persistentCacheRatio": kindInference,
	"useManagedMemory": kindInference, "percentile": kindInference, "dumpOutput": kindInference,
	"dumpRawBindingsToFile": kindInference, "exportOutput": kindInference, "exportTimes": kindInference,
	"exportProfile": kindInference, "dumpProfile": kindInference, "batch": kindInference,
	"weightStreamingBudget": kindInference, "allocationStrategy": kindInference, "useRuntime": kindInference,
	"leanDLLPath": kindInference, "timeDeserialize": kindInference, "timeRefit": kindInference,
	"saveDebugTensors": kindInference, "asyncFileReader": kindInference, "refitEngine": kindInference,

	"exportLayerInfo": kindInspect, "dumpLayerInfo": kindInspect, "getPlanVersionOnly": kindInspect,
	"dumpOptimizationProfile": kindInspect,

	"calib": kindCalibration, "optShapesCalib": kindCalibration, "minShapesCalib": kindCalibration,
	"maxShapesCalib": kindCalibration,

	"deploy": kindOldFormat, "model": kindOldFormat, "output": kindOldFormat, "uff": kindOldFormat,
	"uffInput": kindOldFormat, "uffNHWC": kindOldFormat, "prototxt": kindOldFormat,

	"explicitBatch": kindObsolete, "workspace_MB": kindObsolete, "maxBatch": kindObsolete, "directIO": kindObsolete,
	"minTiming": kindObsolete, "buildOnly": kindObsolete,

	"maxTactics": kindBuilder, "tilingOptimizationLevel": kindBuilder,
	"l2LimitForTiling": kindBuilder, "layerOutputTypes": kindBuilder, "layerDeviceTypes": kindBuilder,
	"sparsity": kindBuilder, "safe": kindBuilder, "consistency": kindBuilder, "restricted": kindBuilder,
	"buildDLAStandalone": kindBuilder, "preview": kindBuilder, "tempdir": kindBuilder,
	"tempfileControls": kindBuilder, "setPluginsToSerialize": kindBuilder, "markDebug": kindBuilder,
	"markUnfusedTensorsAsDebugTensors": kindBuilder, "noCompilationCache": kindBuilder,
	"monitorMemory": kindBuilder, "weightless": kindBuilder, "stripAllWeights": kindBuilder,
	"enablePluginOverride": kindBuilder, "pluginInstanceNorm": kindBuilder, "pi": kindBuilder,
	"uint8AsymmetricQuantizationDLA": kindBuilder, "reportCapabilityDLA": kindBuilder,
	"adjustForDLA": kindBuilder, "distributiveIndependence": kindBuilder, "decomposableAttentions": kindBuilder,
	"saveAllEngines": kindTuning, "allowWeightStreaming": kindBuilder, "errorOnTimingCacheMiss": kindBuilder,
	"int4": kindBuilder, "cpuOnly": kindBuilder, "runtimePlatform": kindBuilder, "dumpKernelText": kindBuilder,
	"remoteAutoTuningConfig": kindBuilder, "refitIdentical": kindBuilder, "greenContext": kindBuilder,
	"remoteConfig": kindBuilder,

	"helpBuildRoute": kindTuning, "tuneBuildRoutes": kindTuning, "tuneBuildRouteFile": kindTuning,
	"tuningCacheFile": kindTuning, "tuningSearch": kindTuning, "tuningTimeOut": kindTuning,
	"continue": kindTuning, "dryRun": kindTuning, "tuningResultFile": kindTuning,
}

// byKey finds a flag of unsupported whatever its case and dashes (--useCudaGraph,
// --use-cuda-graph).
var byKey = func() map[string]string {
	m := make(map[string]string, len(unsupported))
	for name := range unsupported {
		m[key(name)] = name
	}
	return m
}()

func key(name string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(name))
}

// Unsupported says, in one line, why trtbuild does not take the trtexec flag name (without its
// dashes, in trtexec's or trtbuild's spelling) and what to use instead. ok is false when name
// is not such a flag.
func Unsupported(name string) (message string, ok bool) {
	canon, ok := byKey[key(strings.TrimLeft(name, "-"))]
	if !ok {
		return "", false
	}
	flag := "--" + canon
	switch unsupported[canon] {
	case kindInference:
		if canon == "loadEngine" {
			return fmt.Sprintf("%s is a trtexec flag that loads a built engine to run it; trtbuild builds engines from ONNX models and never runs them: "+
				"build with trtbuild model.onnx -o model.engine, and for inference run trtexec --loadEngine=model.engine", flag), true
		}
		return fmt.Sprintf("%s is a trtexec flag for running inference; trtbuild builds the engine and never runs it: "+
			"build with trtbuild, then for inference run trtexec --loadEngine=model.engine with %s", flag, flag), true
	case kindInspect:
		// trtbuild engine inspect reads the plan header and the manifest in pure Go; the layers
		// of an engine only TensorRT can read.
		switch canon {
		case "getPlanVersionOnly":
			return fmt.Sprintf("%s is a trtexec flag that reads a built engine; trtbuild reads it with its own command: "+
				"trtbuild engine inspect model.engine names the TensorRT version that wrote the plan (no GPU needed)", flag), true
		case "dumpOptimizationProfile":
			return fmt.Sprintf("%s is a trtexec flag that reads a built engine; trtbuild reads it with its own command: "+
				"trtbuild engine inspect model.engine lists the engine's optimization profiles from its manifest (no GPU needed)", flag), true
		}
		return fmt.Sprintf("%s is a trtexec flag that reads a built engine's layers, which only TensorRT can read: "+
			"trtbuild engine inspect model.engine shows its TensorRT version, build key, precision and profiles; for the layers "+
			"build with --profilingVerbosity detailed, then run trtexec --loadEngine=model.engine %s=… --skipInference", flag, flag), true
	case kindCalibration:
		return fmt.Sprintf("%s is a trtexec flag for INT8 calibration, which TensorRT deprecated and trtbuild does not do: "+
			"quantize the ONNX model with Q/DQ nodes (for example with NVIDIA's TensorRT Model Optimizer) and build that", flag), true
	case kindOldFormat:
		engine := ""
		if canon == "output" {
			engine = " (the engine's path is -o)"
		}
		return fmt.Sprintf("%s is a trtexec flag for Caffe and UFF models, which TensorRT 10 removed; trtbuild builds ONNX models: "+
			"export the model to ONNX and give the .onnx file%s", flag, engine), true
	case kindObsolete:
		if canon == "buildOnly" {
			return fmt.Sprintf("%s is a trtexec flag of TensorRT 8 (now --skipInference); trtbuild never runs inference: leave it out", flag), true
		}
		return fmt.Sprintf("%s is a trtexec flag that has no effect since TensorRT 10 (networks are explicit-batch, the workspace is --workspace): "+
			"leave it out", flag), true
	case kindTuning:
		if canon == "helpBuildRoute" {
			return fmt.Sprintf("%s is a trtexec 11 flag that prints TensorRT's build-route knobs as JSON; trtbuild does not print them: "+
				"run trtexec --helpBuildRoute, then build with trtbuild --set-build-route \"-KNOB=VALUE …\"", flag), true
		}
		return fmt.Sprintf("%s is a trtexec 11 flag of its build-route tuning loop, which builds the model once per route in child processes and keeps the fastest; "+
			"trtbuild builds one route: tune with trtexec --tuneBuildRoutes, then build the best route with trtbuild --set-build-route \"-KNOB=VALUE …\"", flag), true
	}
	hint := "leave it out to keep TensorRT's default, or build with trtexec"
	switch canon {
	case "sparsity":
		hint = "for --sparsity=enable use --sparse-weights"
	case "layerOutputTypes":
		hint = "trtbuild sets layer precisions (--layerPrecisions with --precisionConstraints) but not output types; build with trtexec for those"
	case "int4":
		hint = "use a model quantized to INT4 with Q/DQ nodes"
	case "errorOnTimingCacheMiss":
		hint = "leave it out; --strict-cache makes timing cache problems fail the build"
	case "greenContext":
		hint = "it profiles on a CUDA green context of N SMs and records that SM count in the engine; trtbuild profiles on the whole device it builds on, " +
			"so to build for part of a GPU build on a MIG slice of that size, or build with trtexec 11.4 or newer"
	case "remoteConfig", "remoteAutoTuningConfig", "cpuOnly":
		hint = "it is for safety-certified (--safe) builds tuned on a remote GPU, which trtbuild does not make; build those with trtexec"
	}
	return fmt.Sprintf("%s is a trtexec builder flag that trtbuild does not set: %s", flag, hint), true
}
