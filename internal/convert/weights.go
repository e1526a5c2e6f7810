package convert

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/trtbuild/trtbuild/internal/convert/half"
	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// weight is a float32 tensor whose data is part of the model: an
// initializer, or the value of a Constant or ConstantOfShape node.
type weight struct {
	v     *value
	t     *onnxpb.TensorProto // nil for value_float(s) attributes
	attr  *onnxpb.AttributeProto
	stats half.Stats
}

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

// collectWeights lists the float32 weights of every graph.
func collectWeights(a *analysis) []*weight {
	var ws []*weight
	for _, gc := range a.graphs {
		for i, t := range gc.g.Initializer {
			if t.GetDataType() == int32(onnxpb.TensorProto_FLOAT) {
				ws = append(ws, &weight{v: gc.initValues[i], t: t})
			}
		}
		for _, ni := range gc.nodes {
			if !ni.weight || len(ni.outs) == 0 || ni.outs[0] == nil || !ni.outs[0].typ.isFloat() {
				continue
			}
			w := &weight{v: ni.outs[0], attr: constantTensor(ni.n)}
			if w.attr != nil {
				w.t = w.attr.T
			}
			ws = append(ws, w)
		}
	}
	return ws
}

func elements(t *onnxpb.TensorProto) (int64, error) {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return 0, fmt.Errorf("tensor %q has a negative dimension", t.GetName())
		}
		if d > 0 && n > math.MaxInt64/4/d {
			return 0, fmt.Errorf("tensor %q is too large", t.GetName())
		}
		n *= d
	}
	return n, nil
}

// checkSize verifies that a float32 tensor's data matches its shape.
func checkSize(m *modelio.Model, t *onnxpb.TensorProto) error {
	if t.Segment != nil {
		return fmt.Errorf("tensor %q is stored in segments, which conversion does not support", t.GetName())
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL && !m.InFile(t) {
		return fmt.Errorf("tensor %q keeps its data in an external file; convert the model file with ConvertFile, which reads it", t.GetName())
	}
	n, err := elements(t)
	if err != nil {
		return err
	}
	size, err := m.DataSize(t)
	if err != nil {
		return err
	}
	if size != 4*n {
		return fmt.Errorf("tensor %q has %d bytes of data, but its shape %v needs %d; the model is damaged", t.GetName(), size, t.Dims, 4*n)
	}
	return nil
}

// scanWeights computes each weight's statistics against the target type,
// several tensors at a time.
func scanWeights(m *modelio.Model, ws []*weight, f half.Format) error {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, w := range ws {
		if w.t == nil {
			if w.attr != nil { // value_float(s); none is ConstantOfShape's default zero
				w.stats = scanAttrFloats(w.attr, f)
			}
			continue
		}
		if err := checkSize(m, w.t); err != nil {
			return err
		}
		g.Go(func() error {
			var s half.Stats
			err := m.ReadData(w.t, func(c []byte) error { s.Add(f.Scan(c)); return nil })
			w.stats = s
			return err
		})
	}
	return g.Wait()
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

// halves recycles the buffers converted chunks are written from.
var halves = sync.Pool{New: func() any { return new([]byte) }}

// lowerTensor converts a float32 tensor to the target type. Data still in
// a file is converted while the model is written; other data now.
func lowerTensor(m *modelio.Model, t *onnxpb.TensorProto, target Target, mainInit bool) error {
	f := target.format()
	size, err := m.DataSize(t)
	if err != nil {
		return err
	}
	if mainInit && m.InFile(t) {
		m.Replace(t, modelio.Replacement{Size: size / 2, WriteTo: func(w io.Writer) error {
			return m.ReadData(t, func(c []byte) error {
				buf := halves.Get().(*[]byte)
				defer halves.Put(buf)
				if cap(*buf) < len(c)/2 {
					*buf = make([]byte, len(c)/2)
				}
				out := (*buf)[:len(c)/2]
				convertChunk(f, out, c)
				_, err := w.Write(out)
				return err
			})
		}})
	} else {
		out := make([]byte, 0, size/2)
		err := m.ReadData(t, func(c []byte) error {
			n := len(out)
			out = out[:n+len(c)/2]
			convertChunk(f, out[n:], c)
			return nil
		})
		if err != nil {
			return err
		}
		t.RawData = out
	}
	t.FloatData = nil
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
