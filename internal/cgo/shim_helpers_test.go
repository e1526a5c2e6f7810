//go:build trtbench

package cgo

import (
	"fmt"
	"strings"
	"testing"
)

// TestShimParserCodeNames: every error code of the ONNX parser (NvOnnxParser.h's ErrorCode, in
// its order) is named in a parse failure as the enum names it, without the k; a code the
// headers do not know is given by number.
func TestShimParserCodeNames(t *testing.T) {
	names := []string{"SUCCESS", "INTERNAL_ERROR", "MEM_ALLOC_FAILED", "MODEL_DESERIALIZE_FAILED", "INVALID_VALUE",
		"INVALID_GRAPH", "INVALID_NODE", "UNSUPPORTED_GRAPH", "UNSUPPORTED_NODE", "UNSUPPORTED_NODE_ATTR",
		"UNSUPPORTED_NODE_INPUT", "UNSUPPORTED_NODE_DATATYPE", "UNSUPPORTED_NODE_DYNAMIC", "UNSUPPORTED_NODE_SHAPE",
		"REFIT_FAILED", "error code 15", "error code -1"}
	for code, want := range names {
		if code == len(names)-1 {
			code = -1
		}
		got, err := shimText(0, code, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("parser error code %d is named %q, want %q", code, got, want)
		}
	}
}

// TestShimVersionCheck: the shim compiled against TensorRT 10.16 drives a libnvinfer of major
// 10 and refuses another major, or a version that is no version, naming both versions (8.x
// decoded the old way, major*1000+minor*100+patch) and the fix.
func TestShimVersionCheck(t *testing.T) {
	for _, tt := range []struct {
		loaded int
		want   string // "": accepted
	}{
		{101600, ""},
		{100300, ""},
		{110100, "TensorRT version mismatch: trtbuild was compiled against TensorRT 10.16.0 but loaded libnvinfer 11.1.0; put the TensorRT 10 libraries first on LD_LIBRARY_PATH or rebuild trtbuild with the TensorRT 11 headers"},
		{8601, "TensorRT version mismatch: trtbuild was compiled against TensorRT 10.16.0 but loaded libnvinfer 8.6.1; put the TensorRT 10 libraries first on LD_LIBRARY_PATH or rebuild trtbuild with the TensorRT 8 headers"},
		{0, "loaded TensorRT library version: libnvinfer reported version 0, not a version number"},
		{-5, "loaded TensorRT library version: libnvinfer reported version -5, not a version number"},
	} {
		got, err := shimText(1, tt.loaded, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("libnvinfer %d: %q, want %q", tt.loaded, got, tt.want)
		}
	}
}

// TestShimTextHelpers: errors are quoted at most eight at a time and say how many more there
// were; TensorRT's messages become one line; a rank-0 shape reads "scalar".
func TestShimTextHelpers(t *testing.T) {
	var ten []string
	for i := range 10 {
		ten = append(ten, fmt.Sprintf("e%d", i))
	}
	for _, tt := range []struct {
		what  int
		texts []string
		dims  []int64
		want  string
	}{
		{2, ten[:3], nil, "e0; e1; e2"},
		{2, ten[:8], nil, strings.Join(ten[:8], "; ")},
		{2, ten, nil, strings.Join(ten[:8], "; ") + "; and 2 more"},
		{3, []string{"\tline one\r\nline two\n"}, nil, "line one  line two"},
		{3, []string{" \t\n "}, nil, ""},
		{4, nil, nil, "scalar"},
		{4, nil, []int64{1, -1, 224}, "1x?x224"},
	} {
		got, err := shimText(tt.what, 0, tt.texts, tt.dims)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("helper %d of %q %v: %q, want %q", tt.what, tt.texts, tt.dims, got, tt.want)
		}
	}
}

// TestShimErrorRecorder: the IErrorRecorder TensorRT reports to keeps the first 256 errors
// with their codes and texts and says when more came; out of range it answers
// kUNSPECIFIED_ERROR (1) and "", as NvInferRuntimeBase.h requires; clear empties it; every
// error is fatal; and the build's log quotes the last 32, counting the ones before them.
func TestShimErrorRecorder(t *testing.T) {
	const unspecified, internal, invalidArgument = 1, 2, 3
	for _, tt := range []struct {
		n    int
		want recorderAnswers
	}{
		{3, recorderAnswers{NbErrors: 3, FirstCode: internal, FirstDesc: "error 0", LastCode: internal, LastDesc: "error 2",
			Logged: 3}},
		{300, recorderAnswers{NbErrors: 256, Overflowed: true, FirstCode: internal, FirstDesc: "error 0",
			LastCode: invalidArgument, LastDesc: "error 255", Logged: 32, LoggedOlder: 268}},
	} {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			got, err := errorRecorder(tt.n, []int32{internal, invalidArgument})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.BeyondCode, want.NegativeCode, want.BeyondDescEmpty, want.Fatal = unspecified, unspecified, true, true
			if got != want {
				t.Errorf("after %d errors the recorder answers %+v, want %+v", tt.n, got, want)
			}
		})
	}
}

// TestShimSeverities: each severity of TensorRT's ILogger (kINTERNAL_ERROR 0 to kVERBOSE 4)
// reaches a build's log as the trtb_severity of its name, and a severity the headers do not
// know (a newer TensorRT's, or no severity at all) as VERBOSE, so it is never shown as an error.
func TestShimSeverities(t *testing.T) {
	for trtSeverity, want := range map[int]int{
		0: SeverityInternalError, 1: SeverityError, 2: SeverityWarning, 3: SeverityInfo, 4: SeverityVerbose,
		5: SeverityVerbose, -1: SeverityVerbose,
	} {
		got, err := shimText(5, trtSeverity, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != fmt.Sprint(want) {
			t.Errorf("TensorRT's severity %d is logged as %s, want %d", trtSeverity, got, want)
		}
	}
}
