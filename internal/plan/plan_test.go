package plan

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// trtPlan builds a plan start by the layout printPlanVersion reads: "ftrt", the serialization
// version, 16 bytes it does not read, then major, minor, patch and build.
func trtPlan(serialization byte, version [4]byte, tail string) []byte {
	b := []byte("ftrt")
	b = append(b, serialization, 0, 0, 0)
	b = append(b, bytes.Repeat([]byte{0xEE}, 16)...)
	b = append(b, version[:]...)
	return append(b, tail...)
}

func TestRead(t *testing.T) {
	cases := []struct {
		name    string
		data    []byte
		want    Header
		wantErr string
	}{
		{"TensorRT 10.16", trtPlan(0, [4]byte{10, 16, 0, 32}, "rest of the plan"), Header{Kind: KindTensorRT, TensorRT: "10.16.0.32"}, ""},
		{"TensorRT 11.1 header only", trtPlan(0, [4]byte{11, 1, 0, 5}, ""), Header{Kind: KindTensorRT, TensorRT: "11.1.0.5"}, ""},
		{"unknown serialization", trtPlan(3, [4]byte{11, 1, 0, 5}, ""), Header{Kind: KindTensorRT, SerializationVersion: 3}, ""},
		{"short plan", trtPlan(0, [4]byte{10, 16, 0, 32}, "")[:20], Header{}, "cut short"},
		{"ONNX model", []byte("\x08\x08\x12\x07pytorch"), Header{}, "plan tag"},
		{"empty", nil, Header{}, "plan tag"},
		{"simulated", []byte("TRTBUILD-SIMULATED-PLAN 1\n# comment\nmodel m.onnx\nprecision fp16\nlayer 0\tconv\n"),
			Header{Kind: KindSimulated, SimVersion: 1, Sim: map[string]string{"model": "m.onnx", "precision": "fp16"}}, ""},
		{"simulated without a version", []byte("TRTBUILD-SIMULATED-PLAN x\n"), Header{}, "simulated plan version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Read(bytes.NewReader(c.data))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrNotEngine) {
					t.Fatalf("Read: %v, want ErrNotEngine containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Kind != c.want.Kind || h.TensorRT != c.want.TensorRT || h.SerializationVersion != c.want.SerializationVersion ||
				h.SimVersion != c.want.SimVersion || len(h.Sim) != len(c.want.Sim) {
				t.Fatalf("Read = %+v, want %+v", h, c.want)
			}
			for k, v := range c.want.Sim {
				if h.Sim[k] != v {
					t.Errorf("sim %s = %q, want %q", k, h.Sim[k], v)
				}
			}
		})
	}
}

// TestSimulatedPlanFromBuilder reads a plan the stand-in TensorRT wrote.
func TestSimulatedPlanFromBuilder(t *testing.T) {
	h, err := ReadFile(filepath.Join(tm.RepoRoot(t), "internal", "cgo", "testdata", "build.plan"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind != KindSimulated || h.Sim["builder"] != "trtfake" || h.Sim["precision"] == "" || h.Sim["model"] == "" || h.Sim["tensorrt"] == "" {
		t.Fatalf("header %+v", h)
	}
}

func TestMatches(t *testing.T) {
	h := Header{Kind: KindTensorRT, TensorRT: "10.16.0.32"}
	for want, ok := range map[string]bool{"10": true, "10.16": true, "10.16.0.32": true, "10.1": false, "10.16.0.3": false, "11": false} {
		if h.Matches(want) != ok {
			t.Errorf("Matches(%q) = %v", want, !ok)
		}
	}
	if (Header{Kind: KindSimulated}).Matches("10") {
		t.Error("a simulated plan matched a TensorRT version")
	}
}

func FuzzRead(f *testing.F) {
	f.Add(trtPlan(0, [4]byte{10, 16, 0, 32}, ""))
	f.Add([]byte("TRTBUILD-SIMULATED-PLAN 1\nmodel x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Read(bytes.NewReader(data))
		if err == nil && h.Kind != KindTensorRT && h.Kind != KindSimulated {
			t.Fatalf("no error and no kind: %+v", h)
		}
	})
}

func TestReadFileMissing(t *testing.T) {
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none")); !os.IsNotExist(err) {
		t.Fatalf("ReadFile of a missing file: %v", err)
	}
}
