// Package plan reads what an engine file says about itself, in pure Go and without a GPU.
//
// A TensorRT plan starts with a header that trtexec's --getPlanVersionOnly reads (NVIDIA/TensorRT
// samples/common/sampleEngines.cpp, printPlanVersion, identical in 10.16 and 11.1): a 32-bit
// tag 0x74727466 (the bytes "ftrt"), a 32-bit serialization version, and, for serialization
// version 0, the TensorRT version that wrote the plan as four bytes at offsets 24 to 27:
// major, minor, patch, build. Integers are little-endian, as on every platform TensorRT runs
// on. Other serialization versions are recognised as plans whose version cannot be read.
//
// A plan of trtbuild's simulated builder starts with the line "TRTBUILD-SIMULATED-PLAN 1",
// followed by "key value" lines that describe the simulated build.
package plan

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Kinds of engine file.
const (
	KindTensorRT  = "tensorrt"
	KindSimulated = "simulated"
)

// Tag is the first 32-bit word of a TensorRT plan.
const Tag uint32 = 0x74727466

// HeaderSize is how much of a plan the TensorRT header takes (what --getPlanVersionOnly reads).
const HeaderSize = 28

// SimMagic starts a simulated plan.
const SimMagic = "TRTBUILD-SIMULATED-PLAN"

// Header is what an engine file's start says.
type Header struct {
	Kind string `json:"kind"` // KindTensorRT or KindSimulated
	// SerializationVersion is the plan's serialization format (TensorRT plans only).
	SerializationVersion uint32 `json:"serialization_version"`
	// TensorRT is the version that wrote the plan, "major.minor.patch.build"; empty when the
	// serialization version is one whose layout is not known.
	TensorRT string `json:"tensorrt,omitempty"`
	// Sim holds a simulated plan's header lines ("precision": "fp16", …), SimVersion its
	// format version.
	SimVersion int               `json:"sim_version,omitempty"`
	Sim        map[string]string `json:"sim,omitempty"`
}

// ErrNotEngine marks a file that is neither a TensorRT plan nor a simulated one.
var ErrNotEngine = errors.New("not a TensorRT engine")

// Read reads an engine's header from r, which is read no further than the header.
func Read(r io.Reader) (Header, error) {
	br := bufio.NewReaderSize(r, 4096)
	start, err := br.Peek(len(SimMagic))
	if err == nil && string(start) == SimMagic {
		return readSim(br)
	}
	var head [HeaderSize]byte
	n, err := io.ReadFull(br, head[:])
	if n >= 4 && binary.LittleEndian.Uint32(head[:4]) != Tag || n < 4 {
		return Header{}, fmt.Errorf("%w: it does not start with TensorRT's plan tag", ErrNotEngine)
	}
	if err != nil {
		return Header{}, fmt.Errorf("%w: the plan header is cut short (%d of %d bytes)", ErrNotEngine, n, HeaderSize)
	}
	h := Header{Kind: KindTensorRT, SerializationVersion: binary.LittleEndian.Uint32(head[4:8])}
	if h.SerializationVersion == 0 {
		h.TensorRT = fmt.Sprintf("%d.%d.%d.%d", head[24], head[25], head[26], head[27])
	}
	return h, nil
}

// maxSimHeader bounds the header lines read from a simulated plan.
const maxSimHeader = 256

func readSim(br *bufio.Reader) (Header, error) {
	first, err := br.ReadString('\n')
	if err != nil {
		return Header{}, fmt.Errorf("%w: a simulated plan cut short", ErrNotEngine)
	}
	v, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(first, SimMagic)))
	if err != nil {
		return Header{}, fmt.Errorf("%w: simulated plan version %q", ErrNotEngine, strings.TrimSpace(first))
	}
	h := Header{Kind: KindSimulated, SimVersion: v, Sim: map[string]string{}}
	for i := 0; i < maxSimHeader; i++ {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "layer ") || (line == "" && err != nil) {
			break // the header ends where the layers start
		}
		if !strings.HasPrefix(line, "#") {
			if k, val, ok := strings.Cut(line, " "); ok && !strings.Contains(k, "\t") {
				h.Sim[k] = val
			}
		}
		if err != nil {
			break
		}
	}
	return h, nil
}

// Matches reports whether the plan's TensorRT version matches want, given as a prefix on
// component boundaries ("10", "10.16", "10.16.0" or "10.16.0.32").
func (h Header) Matches(want string) bool {
	if h.TensorRT == "" {
		return false
	}
	return h.TensorRT == want || strings.HasPrefix(h.TensorRT, want+".")
}
