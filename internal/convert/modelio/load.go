package modelio

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// Load reads the ONNX model at path. The data of the main graph's
// initializers of 4 KiB or more stays in the model file, or in the external
// data file it names, until ReadData or Write needs it. External data of
// other tensors (in subgraphs or node attributes) is read into memory.
//
// The file is read once, front to back, with package onnx's Walker, so a
// damaged file gets the same one-line *onnx.FormatError as inspect and
// preflight give. External data is opened with onnx.OpenExternal: a
// location that is absolute, contains "..", or leads out of the model's
// folder through a symbolic link is refused, since a model could otherwise
// read any file, and so is anything but a regular file.
func Load(path string) (*Model, error) {
	f, st, err := onnx.OpenModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := FromProto(nil)
	m.Path, m.Dir, m.FileSize = path, filepath.Dir(path), st.Size()
	w := onnx.NewWalker(f, st.Size(), path)
	l := &loader{w: w, path: path, m: m}
	if st.Size() == 0 {
		return nil, &onnx.FormatError{Path: path, Offset: -1, Reason: "the file is empty"}
	}
	if m.Proto, err = l.model(); err != nil {
		return nil, w.Error(err)
	}
	if err := l.resolveExternal(); err != nil {
		return nil, err
	}
	return m, nil
}

// loader takes a model file apart with an onnx.Walker: it keeps the
// payloads of large main-graph initializers in the file (as spans) and
// decodes everything else with proto.Unmarshal.
type loader struct {
	w    *onnx.Walker
	path string
	m    *Model
}

func (l *loader) unmarshal(b []byte, m proto.Message, what string, off int64) error {
	if err := proto.Unmarshal(b, m); err != nil {
		return l.w.Corrupt(off, "%s cannot be decoded (%v)", what, err)
	}
	return nil
}

func (l *loader) model() (*onnxpb.ModelProto, error) {
	w := l.w
	var rest []byte
	var graph *onnxpb.GraphProto
	err := w.Message(w.Size(), 0, "the model", func(f onnx.Field) (bool, error) {
		var err error
		if f.Num == onnx.FieldModelGraph && f.Type == protowire.BytesType {
			if graph != nil {
				return true, w.Corrupt(f.Start, "the model has two graphs")
			}
			graph, err = l.graph(f.End)
			return true, err
		}
		rest, err = w.AppendField(rest, f)
		return true, err
	})
	if err != nil {
		return nil, err
	}
	m := &onnxpb.ModelProto{}
	if err := l.unmarshal(rest, m, "the model", 0); err != nil {
		return nil, err
	}
	if graph == nil {
		return nil, w.NoGraph()
	}
	m.Graph = graph
	return m, nil
}

func (l *loader) graph(end int64) (*onnxpb.GraphProto, error) {
	w := l.w
	start := w.Pos()
	var rest []byte
	// An initializer too short to hold a payload that stays in the file
	// is decoded with the rest of the graph, in one call; the others are
	// taken apart by tensor. alone says which is which, in file order.
	var large []*onnxpb.TensorProto
	var alone []bool
	err := w.Message(end, 1, "the graph", func(f onnx.Field) (bool, error) {
		var err error
		if f.Num == onnx.FieldGraphInitializer && f.Type == protowire.BytesType {
			if f.End-f.Start < lazyMin {
				alone = append(alone, false)
				rest, err = w.AppendField(rest, f)
				return true, err
			}
			var t *onnxpb.TensorProto
			t, err = l.tensor(f.End)
			large = append(large, t)
			alone = append(alone, true)
			return true, err
		}
		rest, err = w.AppendField(rest, f)
		return true, err
	})
	if err != nil {
		return nil, err
	}
	g := &onnxpb.GraphProto{}
	if err := l.unmarshal(rest, g, "the graph", start); err != nil {
		return nil, err
	}
	if len(large) > 0 {
		small := g.Initializer
		if len(small)+len(large) != len(alone) {
			return nil, w.Corrupt(start, "the graph's initializers cannot be decoded")
		}
		g.Initializer = make([]*onnxpb.TensorProto, 0, len(alone))
		for _, a := range alone {
			if a {
				g.Initializer, large = append(g.Initializer, large[0]), large[1:]
			} else {
				g.Initializer, small = append(g.Initializer, small[0]), small[1:]
			}
		}
	}
	return g, nil
}

func (l *loader) tensor(end int64) (*onnxpb.TensorProto, error) {
	w := l.w
	start := w.Pos()
	var rest []byte
	var sp *span
	err := w.Message(end, 2, "an initializer", func(f onnx.Field) (bool, error) {
		lazy := f.Type == protowire.BytesType && f.End-f.Start >= lazyMin &&
			(f.Num == onnx.FieldTensorRawData || f.Num == onnx.FieldTensorFloatData)
		if lazy {
			if sp != nil {
				return true, w.Corrupt(f.Start, "an initializer holds its data twice")
			}
			sp = &span{path: l.path, offset: f.Start, length: f.End - f.Start}
			return true, w.SkipPayload(f)
		}
		var err error
		rest, err = w.AppendField(rest, f)
		return true, err
	})
	if err != nil {
		return nil, err
	}
	t := &onnxpb.TensorProto{}
	if err := l.unmarshal(rest, t, "an initializer", start); err != nil {
		return nil, err
	}
	if sp != nil {
		if len(t.RawData) > 0 || len(t.FloatData) > 0 || t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
			return nil, w.Corrupt(start, "initializer %q holds its data twice", t.GetName())
		}
		l.m.spans[t] = *sp
	}
	return t, nil
}

// resolveExternal turns the external data references of main-graph
// initializers into spans and reads those of all other tensors into memory.
func (l *loader) resolveExternal() error {
	g := l.m.Proto.Graph
	for _, t := range g.Initializer {
		if t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			continue
		}
		s, err := l.externalSpan(t)
		if err != nil {
			return err
		}
		t.ExternalData, t.DataLocation = nil, onnxpb.TensorProto_DEFAULT
		l.m.spans[t] = s
		l.m.External = true
	}
	var err error
	walkTensors(l.m.Proto, func(t *onnxpb.TensorProto, mainInit bool) {
		if err != nil || mainInit || t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			return
		}
		var s span
		if s, err = l.externalSpan(t); err != nil {
			return
		}
		l.m.External = true
		data := make([]byte, 0, s.length)
		if err = readSpan(s, t.GetName(), func(c []byte) error { data = append(data, c...); return nil }); err != nil {
			return
		}
		t.RawData, t.ExternalData, t.DataLocation = data, nil, onnxpb.TensorProto_DEFAULT
	})
	return err
}

func (l *loader) externalSpan(t *onnxpb.TensorProto) (span, error) {
	var loc string
	offset, length := int64(0), int64(-1)
	for _, kv := range t.ExternalData {
		var err error
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || offset < 0 {
			return span{}, fmt.Errorf("tensor %q in %s: external data %s %q is not a byte count; export the model again", t.GetName(), l.path, kv.GetKey(), kv.GetValue())
		}
	}
	st, err := onnx.StatExternal(l.m.Dir, loc)
	if err != nil {
		return span{}, fmt.Errorf("tensor %q in %s: %w", t.GetName(), l.path, externalError(loc, err))
	}
	if length < 0 {
		length = st.Size() - offset
	}
	if length < 0 || offset+length > st.Size() {
		return span{}, fmt.Errorf("tensor %q in %s: external data file %s is %d bytes, but the tensor needs bytes %d to %d; the data file does not belong to this model or is truncated",
			t.GetName(), l.path, loc, st.Size(), offset, offset+length)
	}
	return span{path: filepath.Join(l.m.Dir, filepath.FromSlash(loc)), dir: l.m.Dir, loc: loc, offset: offset, length: length}, nil
}

// externalError says what is wrong with an external data location and what
// to do about it.
func externalError(loc string, err error) error {
	var ee *onnx.ExternalError
	if !errors.As(err, &ee) {
		return fmt.Errorf("external data: %w", err)
	}
	switch {
	case ee.Problem == onnx.ExternalUnsafe && ee.Reason == "it is empty":
		return fmt.Errorf("external data has no location; export the model again")
	case ee.Problem == onnx.ExternalUnsafe && ee.Reason == "it is an absolute path":
		return fmt.Errorf("external data location %q is absolute; trtbuild reads external data only from the model's folder: move the file there and give its name", loc)
	case ee.Problem == onnx.ExternalUnsafe && strings.Contains(ee.Reason, "link"):
		return fmt.Errorf("external data location %q is a link that leads out of the model's folder; copy the data file into the folder instead", loc)
	case ee.Problem == onnx.ExternalUnsafe:
		return fmt.Errorf("external data location %q leaves the model's folder (%s); trtbuild reads external data only from the model's folder: move the file there and give its name", loc, ee.Reason)
	case ee.Problem == onnx.ExternalMissing:
		return fmt.Errorf("its external data file %s does not exist; keep the data file next to the model", loc)
	case ee.Problem == onnx.ExternalNotRegular:
		return fmt.Errorf("its external data %s is not a regular file (%s); replace it with the data file the model was exported with", loc, ee.Reason)
	default:
		return fmt.Errorf("its external data file %s cannot be read (%s); check its permissions", loc, ee.Reason)
	}
}

// SafeJoin joins an external data location to the model's folder dir with
// the checks of onnx.StatExternal: it refuses empty and absolute locations,
// locations with a ".." element, and locations that a symbolic link leads
// out of dir. A location that does not exist yet is accepted (Write uses it
// for the file it creates).
func SafeJoin(dir, loc string) (string, error) {
	if _, err := onnx.StatExternal(dir, loc); err != nil {
		var ee *onnx.ExternalError
		if !errors.As(err, &ee) || ee.Problem != onnx.ExternalMissing {
			return "", externalError(loc, err)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(loc)), nil
}

// walkTensors calls fn for every tensor of the model: initializers of all
// graphs, tensors in node attributes, sparse initializer parts, function
// bodies. mainInit is true for the main graph's initializers.
func walkTensors(m *onnxpb.ModelProto, fn func(t *onnxpb.TensorProto, mainInit bool)) {
	var graph func(g *onnxpb.GraphProto, main bool)
	var nodes func(ns []*onnxpb.NodeProto)
	attr := func(a *onnxpb.AttributeProto) {
		if a.T != nil {
			fn(a.T, false)
		}
		for _, t := range a.Tensors {
			fn(t, false)
		}
		for _, st := range append([]*onnxpb.SparseTensorProto{a.SparseTensor}, a.SparseTensors...) {
			if st != nil {
				if st.Values != nil {
					fn(st.Values, false)
				}
				if st.Indices != nil {
					fn(st.Indices, false)
				}
			}
		}
		if a.G != nil {
			graph(a.G, false)
		}
		for _, g := range a.Graphs {
			graph(g, false)
		}
	}
	nodes = func(ns []*onnxpb.NodeProto) {
		for _, n := range ns {
			for _, a := range n.Attribute {
				attr(a)
			}
		}
	}
	graph = func(g *onnxpb.GraphProto, main bool) {
		if g == nil {
			return
		}
		for _, t := range g.Initializer {
			fn(t, main)
		}
		for _, st := range g.SparseInitializer {
			if st.Values != nil {
				fn(st.Values, false)
			}
			if st.Indices != nil {
				fn(st.Indices, false)
			}
		}
		nodes(g.Node)
	}
	graph(m.Graph, true)
	for _, f := range m.Functions {
		nodes(f.Node)
		for _, a := range f.AttributeProto {
			attr(a)
		}
	}
	for _, ti := range m.TrainingInfo {
		graph(ti.Initialization, false)
		graph(ti.Algorithm, false)
	}
}
