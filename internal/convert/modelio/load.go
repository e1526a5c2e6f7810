package modelio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// Field numbers of the messages Load takes apart.
const (
	modelGraph       = 7 // ModelProto.graph
	graphInitializer = 5 // GraphProto.initializer
	tensorFloatData  = 4 // TensorProto.float_data (packed)
	tensorRawData    = 9 // TensorProto.raw_data
)

// FormatError says that a file is not a well-formed ONNX model.
type FormatError struct {
	Path   string
	Offset int64
	Reason string
}

// Error says what is wrong and that the model must be exported again.
func (e *FormatError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s is not a valid ONNX model (at byte %d: %s); export it again", e.Path, e.Offset, e.Reason)
	}
	return fmt.Sprintf("%s is not a valid ONNX model (%s); export it again", e.Path, e.Reason)
}

// Load reads the ONNX model at path. The data of the main graph's
// initializers of 4 KiB or more stays in the model file, or in the external
// data file it names, until ReadData or Write needs it. External data of
// other tensors (in subgraphs or node attributes) is read into memory.
//
// External data locations are relative to the model's folder; a location
// that is absolute, contains "..", or leads out of the folder through a
// symbolic link is refused, since a model could otherwise read any file.
func Load(path string) (*Model, error) {
	f, st, err := onnx.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := FromProto(nil)
	m.Path, m.Dir, m.FileSize = path, filepath.Dir(path), st.Size()
	l := &loader{r: f, path: path, m: m}
	if m.Proto, err = l.model(0, st.Size()); err != nil {
		return nil, err
	}
	if err := l.resolveExternal(); err != nil {
		return nil, err
	}
	return m, nil
}

type loader struct {
	r    io.ReaderAt
	path string
	m    *Model
	win  [2 * binary64Len]byte
}

const binary64Len = 10 // the longest varint

func (l *loader) bad(off int64, format string, args ...any) error {
	return &FormatError{Path: l.path, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// field is one protobuf field found by fields: the whole field is
// [start, end); a length-delimited value is [valStart, end).
type field struct {
	num             protowire.Number
	typ             protowire.Type
	start, valStart int64
	end             int64
}

// fields calls fn for each field in [start, end) without reading
// length-delimited values.
func (l *loader) fields(start, end int64, fn func(field) error) error {
	for pos := start; pos < end; {
		n, err := l.r.ReadAt(l.win[:min(int64(len(l.win)), end-pos)], pos)
		if n == 0 && err != nil {
			return fmt.Errorf("reading model %s: %w", l.path, err)
		}
		w := l.win[:n]
		num, typ, tn := protowire.ConsumeTag(w)
		if tn < 0 {
			return l.bad(pos, "bad field tag")
		}
		fd := field{num: num, typ: typ, start: pos}
		w = w[tn:]
		switch typ {
		case protowire.VarintType:
			_, vn := protowire.ConsumeVarint(w)
			if vn < 0 {
				return l.bad(pos, "bad varint")
			}
			fd.end = pos + int64(tn+vn)
		case protowire.Fixed32Type:
			fd.end = pos + int64(tn) + 4
		case protowire.Fixed64Type:
			fd.end = pos + int64(tn) + 8
		case protowire.BytesType:
			ln, vn := protowire.ConsumeVarint(w)
			if vn < 0 {
				return l.bad(pos, "bad length")
			}
			fd.valStart = pos + int64(tn+vn)
			if ln > uint64(end-fd.valStart) {
				return l.bad(pos, "field %d is %d bytes long but only %d remain", num, ln, end-fd.valStart)
			}
			fd.end = fd.valStart + int64(ln)
		default:
			return l.bad(pos, "unexpected wire type %d", typ)
		}
		if fd.end > end {
			return l.bad(pos, "field %d runs past the end of its message", num)
		}
		if err := fn(fd); err != nil {
			return err
		}
		pos = fd.end
	}
	return nil
}

func (l *loader) read(start, end int64, dst []byte) ([]byte, error) {
	n := len(dst)
	dst = append(dst, make([]byte, end-start)...)
	if _, err := l.r.ReadAt(dst[n:], start); err != nil {
		return nil, fmt.Errorf("reading model %s: %w", l.path, err)
	}
	return dst, nil
}

func (l *loader) unmarshal(b []byte, m proto.Message, what string, off int64) error {
	if err := proto.Unmarshal(b, m); err != nil {
		return l.bad(off, "%s: %v", what, err)
	}
	return nil
}

func (l *loader) model(start, end int64) (*onnxpb.ModelProto, error) {
	var rest []byte
	var graph *onnxpb.GraphProto
	err := l.fields(start, end, func(fd field) error {
		if fd.num == modelGraph && fd.typ == protowire.BytesType {
			if graph != nil {
				return l.bad(fd.start, "the model has two graphs")
			}
			var err error
			graph, err = l.graph(fd.valStart, fd.end)
			return err
		}
		var err error
		rest, err = l.read(fd.start, fd.end, rest)
		return err
	})
	if err != nil {
		return nil, err
	}
	m := &onnxpb.ModelProto{}
	if err := l.unmarshal(rest, m, "model fields", start); err != nil {
		return nil, err
	}
	if graph == nil {
		return nil, l.bad(-1, "it has no graph")
	}
	m.Graph = graph
	return m, nil
}

func (l *loader) graph(start, end int64) (*onnxpb.GraphProto, error) {
	var rest []byte
	var inits []*onnxpb.TensorProto
	err := l.fields(start, end, func(fd field) error {
		if fd.num == graphInitializer && fd.typ == protowire.BytesType {
			t, err := l.tensor(fd.valStart, fd.end)
			if err != nil {
				return err
			}
			inits = append(inits, t)
			return nil
		}
		var err error
		rest, err = l.read(fd.start, fd.end, rest)
		return err
	})
	if err != nil {
		return nil, err
	}
	g := &onnxpb.GraphProto{}
	if err := l.unmarshal(rest, g, "graph", start); err != nil {
		return nil, err
	}
	g.Initializer = inits
	return g, nil
}

func (l *loader) tensor(start, end int64) (*onnxpb.TensorProto, error) {
	var rest []byte
	var sp *span
	err := l.fields(start, end, func(fd field) error {
		lazy := fd.typ == protowire.BytesType && fd.end-fd.valStart >= lazyMin &&
			(fd.num == tensorRawData || fd.num == tensorFloatData)
		if lazy {
			if sp != nil {
				return l.bad(fd.start, "a tensor holds its data twice")
			}
			sp = &span{path: l.path, offset: fd.valStart, length: fd.end - fd.valStart}
			return nil
		}
		var err error
		rest, err = l.read(fd.start, fd.end, rest)
		return err
	})
	if err != nil {
		return nil, err
	}
	t := &onnxpb.TensorProto{}
	if err := l.unmarshal(rest, t, "initializer", start); err != nil {
		return nil, err
	}
	if sp != nil {
		if len(t.RawData) > 0 || len(t.FloatData) > 0 || t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
			return nil, l.bad(start, "initializer %q holds its data twice", t.GetName())
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
	path, err := SafeJoin(l.m.Dir, loc)
	if err != nil {
		return span{}, fmt.Errorf("tensor %q in %s: %w", t.GetName(), l.path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return span{}, fmt.Errorf("tensor %q in %s: its external data file %s does not exist; keep the data file next to the model", t.GetName(), l.path, loc)
		}
		return span{}, fmt.Errorf("tensor %q: external data: %w", t.GetName(), err)
	}
	if length < 0 {
		length = st.Size() - offset
	}
	if length < 0 || offset+length > st.Size() {
		return span{}, fmt.Errorf("tensor %q in %s: external data file %s is %d bytes, but the tensor needs bytes %d to %d; the data file does not belong to this model or is truncated",
			t.GetName(), l.path, loc, st.Size(), offset, offset+length)
	}
	return span{path: path, offset: offset, length: length}, nil
}

// SafeJoin joins an external data location to the model's folder. It
// refuses empty and absolute locations, locations with a ".." element, and
// locations that a symbolic link leads out of dir.
func SafeJoin(dir, loc string) (string, error) {
	switch {
	case loc == "":
		return "", fmt.Errorf("external data has no location; export the model again")
	case filepath.IsAbs(loc) || strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, `\`) || filepath.VolumeName(loc) != "":
		return "", fmt.Errorf("external data location %q is absolute; trtbuild reads external data only from the model's folder: move the file there and give its name", loc)
	}
	for _, el := range strings.FieldsFunc(loc, func(r rune) bool { return r == '/' || r == '\\' }) {
		if el == ".." {
			return "", fmt.Errorf("external data location %q leaves the model's folder; trtbuild reads external data only from the model's folder: move the file there and give its name", loc)
		}
	}
	path := filepath.Join(dir, filepath.FromSlash(loc))
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("external data: %w", err)
	}
	realPath, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return path, nil // reported by the caller, which knows the tensor
		}
		return "", fmt.Errorf("external data: %w", err)
	}
	if rel, err := filepath.Rel(realDir, realPath); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("external data location %q is a link that leads out of the model's folder; copy the data file into the folder instead", loc)
	}
	return path, nil
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
