package testmodels

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

func TestFloat16Bits(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{0.1, 0x2e66},
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds up to infinity
		{float32(math.Inf(-1)), 0xfc00},
		{float32(math.Pow(2, -24)), 0x0001},       // smallest subnormal
		{float32(math.Pow(2, -14)), 0x0400},       // smallest normal
		{float32(math.Pow(2, -26)), 0x0000},       // underflows to zero
		{1 + float32(math.Pow(2, -11)), 0x3c00},   // tie, rounds to even
		{1 + 3*float32(math.Pow(2, -11)), 0x3c02}, // tie, rounds to even (up)
	}
	for _, tt := range tests {
		if got := Float16Bits(tt.f); got != tt.want {
			t.Errorf("Float16Bits(%g) = %#04x, want %#04x", tt.f, got, tt.want)
		}
	}
	if got := Float16Bits(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("Float16Bits(NaN) = %#04x, not a NaN", got)
	}
}

func TestRandIsDeterministic(t *testing.T) {
	a, b := NewRand(7), NewRand(7)
	for i := 0; i < 100; i++ {
		x, y := a.Float(1), b.Float(1)
		if x != y || x < -1 || x >= 1 {
			t.Fatalf("step %d: %g vs %g", i, x, y)
		}
	}
	if NewRand(1).Uint64() == NewRand(2).Uint64() {
		t.Fatal("different seeds give the same value")
	}
}

func TestWriteLarge(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteLarge(&buf, 12); err != nil {
		t.Fatal(err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("the large model does not decode: %v", err)
	}
	g := m.GetGraph()
	if len(g.GetNode()) != 3 || len(g.GetInitializer()) != 3 || len(g.GetInput()) != 1 || len(g.GetOutput()) != 1 {
		t.Fatalf("%d nodes, %d initializers, %d inputs, %d outputs", len(g.GetNode()), len(g.GetInitializer()), len(g.GetInput()), len(g.GetOutput()))
	}
	for _, w := range g.GetInitializer() {
		if len(w.GetRawData()) != LargeTensorMiB<<20 {
			t.Fatalf("%s has %d bytes", w.GetName(), len(w.GetRawData()))
		}
	}
	if g.GetOutput()[0].GetName() != "layer2/out" || g.GetNode()[2].GetInput()[1] != "layer2.weight" {
		t.Fatalf("graph is not a chain: %v", g.GetNode()[2])
	}
}
