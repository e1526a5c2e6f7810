package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/trtbuild/trtbuild/internal/convert/half"
	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// weight is a float32 tensor whose data is part of the model: an
// initializer, or the value of a Constant or ConstantOfShape node, with
// what the conversion keeps of its statistics.
type weight struct {
	v        int32
	g        int32 // the graph of an initializer
	init     int32 // the initializer's index in its graph; -1 for a constant
	maxAbs   float32
	overflow int64
}

func (w *weight) setStats(s half.Stats) { w.maxAbs, w.overflow = s.MaxAbs, s.Overflow }

// constantTensor returns the float32 tensor a Constant or ConstantOfShape
// node makes, as the attribute holding it; nil when it makes none.
func constantTensor(n *onnxpb.NodeProto) *onnxpb.AttributeProto {
	for _, at := range n.Attribute {
		switch at.GetName() {
		case "value":
			if at.T != nil && at.T.GetDataType() == int32(onnxpb.TensorProto_FLOAT) {
				return at
			}
		case "value_float", "value_floats":
			if n.GetOpType() == "Constant" {
				return at
			}
		}
	}
	return nil
}

func elements(name string, dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("tensor %q has a negative dimension", name)
		}
		if d > 0 && n > math.MaxInt64/4/d {
			return 0, fmt.Errorf("tensor %q is too large", name)
		}
		n *= d
	}
	return n, nil
}

// checkSize verifies that a float32 initializer's data matches its shape,
// and returns its size.
func checkSize(m *modelio.Model, t *modelio.Tensor) (int64, error) {
	name := m.String(t.Name)
	if t.Segmented() {
		return 0, fmt.Errorf("tensor %q is stored in segments, which conversion does not support", name)
	}
	n, err := m.Elements(t)
	if err != nil {
		return 0, err
	}
	size, err := m.DataSize(t)
	if err != nil {
		return 0, err
	}
	if size != 4*n {
		return 0, fmt.Errorf("tensor %q has %d bytes of data, but its shape %v needs %d; the model is damaged", name, size, m.AppendDims(nil, t), 4*n)
	}
	return size, nil
}

// checkProtoSize is checkSize for a constant's tensor.
func checkProtoSize(t *onnxpb.TensorProto) error {
	if t.Segment != nil {
		return fmt.Errorf("tensor %q is stored in segments, which conversion does not support", t.GetName())
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return fmt.Errorf("tensor %q keeps its data in an external file; convert the model file with ConvertFile, which reads it", t.GetName())
	}
	n, err := elements(t.GetName(), t.Dims)
	if err != nil {
		return err
	}
	size, err := modelio.ProtoDataSize(t)
	if err != nil {
		return err
	}
	if size != 4*n {
		return fmt.Errorf("tensor %q has %d bytes of data, but its shape %v needs %d; the model is damaged", t.GetName(), size, t.Dims, 4*n)
	}
	return nil
}

// scanAlone is the size from which a weight is scanned on a goroutine of
// its own; smaller ones are scanned in turn, as goroutines would cost more
// than the scan.
const scanAlone = 64 << 10

// scanWeights computes the statistics of every float32 weight (the
// initializers and constants of every graph) against the target type,
// several large tensors at a time, and returns the weights that overflow
// it. A model may have millions of small weights: they are not listed.
func scanWeights(a *analysis, f half.Format) ([]weight, error) {
	m := a.m
	var over, large []weight
	for gi, gc := range a.graphs {
		for i := range gc.g.Inits {
			t := &gc.g.Inits[i]
			if t.DataType != int32(onnxpb.TensorProto_FLOAT) {
				continue
			}
			size, err := checkSize(m, t)
			if err != nil {
				return nil, err
			}
			w := weight{v: gc.initValues[i], g: int32(gi), init: int32(i)}
			if size >= scanAlone {
				large = append(large, w)
				continue
			}
			// In memory (data left in files is larger): one chunk.
			if err := m.ReadData(t, func(c []byte) error { w.setStats(f.Scan(c)); return nil }); err != nil {
				return nil, err
			}
			if w.overflow > 0 {
				over = append(over, w)
			}
		}
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			outs := a.outs(n)
			if !a.has(n, flagWeight) || len(outs) == 0 || outs[0] < 0 || !a.vfloat(outs[0]) {
				continue
			}
			w := weight{v: outs[0], init: -1}
			if t := a.value(n); t != nil {
				if t.DataType != int32(onnxpb.TensorProto_FLOAT) {
					continue // not a float32 tensor: not converted
				}
				if _, err := checkSize(m, t); err != nil {
					return nil, err
				}
				var s half.Stats
				if err := m.ReadData(t, func(c []byte) error { s.Add(f.Scan(c)); return nil }); err != nil {
					return nil, err
				}
				w.setStats(s)
				if w.overflow > 0 {
					over = append(over, w)
				}
				continue
			}
			switch at := constantTensor(a.proto(n)); {
			case at != nil && at.T != nil:
				if err := checkProtoSize(at.T); err != nil {
					return nil, err
				}
				var s half.Stats
				if err := modelio.ReadProtoData(at.T, func(c []byte) error { s.Add(f.Scan(c)); return nil }); err != nil {
					return nil, err
				}
				w.setStats(s)
			case at != nil: // value_float(s); none is ConstantOfShape's default zero
				w.setStats(scanAttrFloats(at, f))
			}
			if w.overflow > 0 {
				over = append(over, w)
			}
		}
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range large {
		w := &large[i]
		t := &a.graphs[w.g].g.Inits[w.init]
		g.Go(func() error {
			var s half.Stats
			err := m.ReadData(t, func(c []byte) error { s.Add(f.Scan(c)); return nil })
			w.setStats(s)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, w := range large {
		if w.overflow > 0 {
			over = append(over, w)
		}
	}
	return over, nil
}

func scanAttrFloats(at *onnxpb.AttributeProto, f half.Format) half.Stats {
	vals := at.Floats
	if at.GetName() == "value_float" {
		vals = []float32{at.GetF()}
	}
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return f.Scan(b)
}

// convertChunk converts one chunk of float32 data using all processors.
func convertChunk(f half.Format, dst, src []byte) {
	n := len(src) / 4
	parts := runtime.GOMAXPROCS(0)
	if n < 1<<16 || parts == 1 {
		f.ConvertSlice(dst, src)
		return
	}
	per := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.ConvertSlice(dst[2*lo:2*hi], src[4*lo:4*hi])
		}()
	}
	wg.Wait()
}

// lowerProtoTensor converts a float32 tensor held in memory (a
// constant's) to the target type now.
func lowerProtoTensor(t *onnxpb.TensorProto, target Target) error {
	f := target.format()
	size, err := modelio.ProtoDataSize(t)
	if err != nil {
		return err
	}
	out := make([]byte, 0, size/2)
	err = modelio.ReadProtoData(t, func(c []byte) error {
		n := len(out)
		out = out[:n+len(c)/2]
		convertChunk(f, out[n:], c)
		return nil
	})
	if err != nil {
		return err
	}
	t.RawData, t.FloatData = out, nil
	t.DataType = int32(target.dataType())
	return nil
}

// lowerAttrFloats turns a Constant's value_float or value_floats attribute
// into a value tensor of the target type.
func lowerAttrFloats(at *onnxpb.AttributeProto, target Target) {
	vals, dims := at.Floats, []int64{int64(len(at.Floats))}
	if at.GetName() == "value_float" {
		vals, dims = []float32{at.GetF()}, nil
	}
	raw := make([]byte, 2*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint16(raw[2*i:], target.format().Convert(v))
	}
	at.Name, at.Type, at.F, at.Floats = "value", onnxpb.AttributeProto_TENSOR, 0, nil
	at.T = &onnxpb.TensorProto{Dims: dims, DataType: int32(target.dataType()), RawData: raw}
}
