package cgo

/*
#include <stdlib.h>
#include "trtb.h"
*/
import "C"

import "unsafe"

// DataType is a tensor data type for I/O formats and layer precisions (trtb_data_type).
type DataType int32

// Data types, numbered as trtb_data_type; DataTypes names them as trtexec does.
const (
	TypeFP32  DataType = 1
	TypeFP16  DataType = 2
	TypeBF16  DataType = 3
	TypeINT8  DataType = 4
	TypeFP8   DataType = 5
	TypeINT32 DataType = 6
	TypeINT64 DataType = 7
	TypeBool  DataType = 8
	TypeUINT8 DataType = 9
	TypeINT4  DataType = 10
)

// DataTypes maps trtexec's data type names to DataType.
var DataTypes = map[string]DataType{
	"fp32": TypeFP32, "fp16": TypeFP16, "bf16": TypeBF16, "int8": TypeINT8, "fp8": TypeFP8,
	"int32": TypeINT32, "int64": TypeINT64, "bool": TypeBool, "uint8": TypeUINT8, "int4": TypeINT4,
}

// TensorFormats maps trtexec's tensor format names to bits of IOFormat.Formats
// (trtb_tensor_format); "chw" is TensorRT's kLINEAR.
var TensorFormats = map[string]uint32{
	"chw": 1 << 0, "chw2": 1 << 1, "hwc8": 1 << 2, "chw4": 1 << 3, "chw16": 1 << 4, "chw32": 1 << 5,
	"dhwc8": 1 << 6, "cdhw32": 1 << 7, "hwc": 1 << 8, "dla_linear": 1 << 9, "dla_hwc4": 1 << 10,
	"hwc16": 1 << 11, "dhwc": 1 << 12,
}

// TacticSources maps trtexec's tactic source names, in lower case, to bits of
// Options.TacticSourcesOn and TacticSourcesOff (trtb_tactic_source). cublas, cublas_lt and
// cudnn exist in TensorRT 10 only.
var TacticSources = map[string]uint32{
	"cublas": 1 << 0, "cublas_lt": 1 << 1, "cudnn": 1 << 2, "edge_mask_convolutions": 1 << 3, "jit_convolutions": 1 << 4,
}

// Memory pools besides the workspace: keys of Options.Pools (trtb_pool).
const (
	PoolTacticSharedMemory uint32 = 1 << iota // trtexec tacticSharedMem
	PoolDLAManagedSRAM                        // dlaSRAM
	PoolDLALocalDRAM                          // dlaLocalDRAM
	PoolDLAGlobalDRAM                         // dlaGlobalDRAM
)

// Precision constraints (Options.PrecisionConstraints, trtb_precision_constraints).
const (
	PrecisionConstraintsNone   = 0
	PrecisionConstraintsPrefer = 1
	PrecisionConstraintsObey   = 2
)

// Profiling verbosities (Options.ProfilingVerbosity, trtb_profiling_verbosity); 0 keeps
// TensorRT's default.
const (
	ProfilingDefault        = 0
	ProfilingLayerNamesOnly = 1
	ProfilingNone           = 2
	ProfilingDetailed       = 3
)

// IOFormat is one network input's or output's type and allowed formats.
type IOFormat struct {
	Type    DataType
	Formats uint32 // TensorFormats bits, at least one
}

// LayerPrecision asks for one layer's precision; Layer "*" means every layer.
type LayerPrecision struct {
	Layer string
	Type  DataType
}

// BuildSettings are trtexec's build settings beyond the basic ones; the zero value leaves
// TensorRT's defaults. Options embeds it.
type BuildSettings struct {
	// InputFormats has one entry for every network input, in order, or one for all of them;
	// OutputFormats likewise for the outputs.
	InputFormats, OutputFormats []IOFormat
	PrecisionConstraints        int // PrecisionConstraints*; TensorRT 10 only
	LayerPrecisions             []LayerPrecision
	ProfilingVerbosity          int // Profiling*
	TacticSourcesOn             uint32
	TacticSourcesOff            uint32
	UseDLA                      bool // build for DLA core DLACore
	DLACore                     int
	GPUFallback                 bool // with UseDLA: what DLA cannot run goes to the GPU
	StronglyTyped               bool // TensorRT 10's strongly typed network flag
	Best                        bool // TensorRT 10: enable every precision
	Pools                       map[uint32]uint64
	// AvgTiming is how many iterations every tactic's timing averages
	// (IBuilderConfig::setAvgTimingIterations; 0: TensorRT's default, 1). BuildRoute is
	// TensorRT 11.1's IBuilderConfig::setBuildRoute ("": none; refused before 11.1).
	AvgTiming  int
	BuildRoute string
}

// toC fills the ABI 3 and ABI 5 fields of c.
func (s *BuildSettings) toC(c *C.trtb_options, mem *cmem) error {
	var err error
	if c.input_formats, c.nb_input_formats, err = formatsToC(mem, "input format", s.InputFormats); err != nil {
		return err
	}
	if c.output_formats, c.nb_output_formats, err = formatsToC(mem, "output format", s.OutputFormats); err != nil {
		return err
	}
	c.precision_constraints = C.int32_t(s.PrecisionConstraints)
	if n := len(s.LayerPrecisions); n > 0 {
		if c.nb_layer_precisions, err = toInt32("layer precision count", n); err != nil {
			return err
		}
		list := unsafe.Slice((*C.trtb_layer_precision)(mem.alloc(n*C.sizeof_trtb_layer_precision)), n)
		for i, lp := range s.LayerPrecisions {
			if list[i].layer, err = mem.str("layer name", lp.Layer); err != nil {
				return err
			}
			list[i]._type = C.int32_t(lp.Type)
		}
		c.layer_precisions = &list[0]
	}
	c.profiling_verbosity = C.int32_t(s.ProfilingVerbosity)
	c.tactic_sources_on = C.uint32_t(s.TacticSourcesOn)
	c.tactic_sources_off = C.uint32_t(s.TacticSourcesOff)
	if s.UseDLA {
		c.use_dla = 1
		if c.dla_core, err = toInt32("DLA core", s.DLACore); err != nil {
			return err
		}
	}
	c.gpu_fallback = boolToC(s.GPUFallback)
	c.strongly_typed = boolToC(s.StronglyTyped)
	c.best = boolToC(s.Best)
	if c.avg_timing, err = toInt32("averaging iterations", s.AvgTiming); err != nil {
		return err
	}
	if s.BuildRoute != "" {
		if c.build_route, err = mem.str("build route", s.BuildRoute); err != nil {
			return err
		}
	}
	for pool, size := range s.Pools {
		c.pools_set |= C.uint32_t(pool)
		switch pool {
		case PoolTacticSharedMemory:
			c.tactic_shared_memory_bytes = C.uint64_t(size)
		case PoolDLAManagedSRAM:
			c.dla_managed_sram_bytes = C.uint64_t(size)
		case PoolDLALocalDRAM:
			c.dla_local_dram_bytes = C.uint64_t(size)
		case PoolDLAGlobalDRAM:
			c.dla_global_dram_bytes = C.uint64_t(size)
		default:
			return invalid("unknown memory pool 0x%x", pool)
		}
	}
	return nil
}

func formatsToC(mem *cmem, what string, fs []IOFormat) (*C.trtb_io_format, C.int32_t, error) {
	if len(fs) == 0 {
		return nil, 0, nil
	}
	n, err := toInt32(what+" count", len(fs))
	if err != nil {
		return nil, 0, err
	}
	list := unsafe.Slice((*C.trtb_io_format)(mem.alloc(len(fs)*C.sizeof_trtb_io_format)), len(fs))
	for i, f := range fs {
		list[i]._type = C.int32_t(f.Type)
		list[i].formats = C.uint32_t(f.Formats)
	}
	return &list[0], n, nil
}

func boolToC(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// Compile-time checks that the numbers above match trtb.h.
func _() {
	var x [1]struct{}
	_ = x[TypeFP32-C.TRTB_TYPE_FP32]
	_ = x[TypeINT4-C.TRTB_TYPE_INT4]
	_ = x[PoolTacticSharedMemory-C.TRTB_POOL_TACTIC_SHARED_MEMORY]
	_ = x[PoolDLAGlobalDRAM-C.TRTB_POOL_DLA_GLOBAL_DRAM]
	_ = x[PrecisionConstraintsObey-C.TRTB_PRECISION_CONSTRAINTS_OBEY]
	_ = x[ProfilingDetailed-C.TRTB_PROFILING_DETAILED]
}
