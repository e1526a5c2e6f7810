package cgo

/*
#include <stdlib.h>
#include "trtb_fake.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// InstallStandIn installs the stand-in TensorRT of major (10 or 11) compiled into the binary
// (trtfake/), with its ONNX parser, plugins and a CUDA driver of 8 "TensorRT stand-in GPU"s,
// as this process's TensorRT: the TensorRT backend then builds over it, through the shim of
// that major, as over a real TensorRT. settings are the stand-in's ("key=value;key=value", see
// trtfake/trtfake.hpp; "" for its defaults). It may be done once per process, and not in a
// process that loaded TensorRT libraries (LoadTensorRT): what is installed stays.
func InstallStandIn(major int, settings string) error {
	cs := C.CString(settings)
	defer C.free(unsafe.Pointer(cs))
	var st C.trtb_status
	if C.trtb_fake_install(C.int32_t(major), cs, &st) != C.TRTB_OK {
		return fmt.Errorf("installing the stand-in TensorRT %d: %w", major, statusError(&st))
	}
	return nil
}
