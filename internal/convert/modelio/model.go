// Package modelio reads and writes ONNX model files for the precision
// converter without holding the weights in memory.
//
// Load decodes a model into the generated onnxpb types but leaves the data
// of the main graph's large initializers where it is: in the model file or
// in an external data file next to it. ReadData streams that data when the
// converter needs it, and Write streams it, or a replacement, into the new
// files. Everything else (nodes, small tensors, subgraphs, fields this
// program does not know) is decoded and written back as usual.
//
// A Model is not safe for concurrent mutation; ReadData may be called from
// several goroutines at once.
package modelio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// lazyMin is the smallest payload Load leaves in its file.
const lazyMin = 4 << 10

// chunkSize is how much ReadData hands to its callback at a time; a
// multiple of 8, so chunks never split a value.
const chunkSize = 4 << 20

// span is a byte range of a file holding a tensor's data as little-endian
// fixed-width values (raw_data, a packed float_data field, or external data).
type span struct {
	path string // the file, for messages and SourceFiles
	// dir and loc are the model's folder and the external data location
	// for external data; loc is "" for data in the model file.
	dir, loc string
	offset   int64
	length   int64
}

// open opens the span's file with the checks of package onnx: the model
// file with OpenModel, external data with OpenExternal, so that no read of
// data can leave the model's folder or block on a FIFO.
func (s span) open() (*os.File, error) {
	var f *os.File
	var err error
	if s.loc == "" {
		f, _, err = onnx.OpenModel(s.path)
	} else {
		f, _, err = onnx.OpenExternal(s.dir, s.loc)
	}
	return f, err
}

// Replacement is new data for a tensor, written by Write in place of the
// tensor's own: Size bytes that WriteTo produces.
type Replacement struct {
	Size    int64
	WriteTo func(w io.Writer) error
}

// Model is an ONNX model whose large main-graph initializers may still be
// in their files.
type Model struct {
	// Proto is the decoded model. Tensors with data in a file have no
	// raw_data, float_data or external_data here; use ReadData.
	Proto *onnxpb.ModelProto
	// Path is the file the model was read from ("" for FromProto).
	Path string
	// Dir is the folder external data locations are relative to.
	Dir string
	// FileSize is the size of the model file.
	FileSize int64
	// External tells whether any tensor's data was in an external file.
	External bool

	spans    map[*onnxpb.TensorProto]span
	replaced map[*onnxpb.TensorProto]Replacement
}

// FromProto wraps an in-memory model, all of whose data is inline.
func FromProto(m *onnxpb.ModelProto) *Model {
	return &Model{Proto: m, spans: map[*onnxpb.TensorProto]span{}, replaced: map[*onnxpb.TensorProto]Replacement{}}
}

// InFile reports whether t's data is still in a file.
func (m *Model) InFile(t *onnxpb.TensorProto) bool {
	_, ok := m.spans[t]
	return ok
}

// SourceFiles returns the files the model's data is read from: the model
// file and the external data files of tensors still in files.
func (m *Model) SourceFiles() []string {
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	add(m.Path)
	for _, t := range m.Proto.GetGraph().GetInitializer() {
		if s, ok := m.spans[t]; ok {
			add(s.path)
		}
	}
	return files
}

// Replace makes Write use r as t's data. t must be a main-graph initializer.
func (m *Model) Replace(t *onnxpb.TensorProto, r Replacement) {
	m.replaced[t] = r
}

// DataSize returns the number of bytes of t's data in its fixed-width
// little-endian form, or an error for types without one (strings).
func (m *Model) DataSize(t *onnxpb.TensorProto) (int64, error) {
	if s, ok := m.spans[t]; ok {
		return s.length, nil
	}
	switch {
	case len(t.RawData) > 0:
		return int64(len(t.RawData)), nil
	case t.GetDataType() == int32(onnxpb.TensorProto_FLOAT):
		return 4 * int64(len(t.FloatData)), nil
	case len(t.FloatData) > 0:
		return 0, fmt.Errorf("tensor %q: float_data holds %s values, not float", t.GetName(), dataTypeName(t.GetDataType()))
	default:
		// Types whose values live in other typed fields are read through
		// their raw form only when they are float; the converter asks for no others.
		return 0, fmt.Errorf("tensor %q: data type %s is not stored as raw bytes", t.GetName(), dataTypeName(t.GetDataType()))
	}
}

// ReadData calls fn with t's data in its fixed-width little-endian form, in
// chunks of at most 4 MiB, each a whole number of values. fn must not keep
// the chunk. It works for data in files, raw_data and float_data.
func (m *Model) ReadData(t *onnxpb.TensorProto, fn func(chunk []byte) error) error {
	if s, ok := m.spans[t]; ok {
		return readSpan(s, t.GetName(), fn)
	}
	if len(t.RawData) > 0 {
		for b := t.RawData; len(b) > 0; {
			n := min(len(b), chunkSize)
			if err := fn(b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	if t.GetDataType() != int32(onnxpb.TensorProto_FLOAT) {
		if _, err := m.DataSize(t); err != nil {
			return err
		}
		return nil
	}
	buf := make([]byte, 0, min(4*len(t.FloatData), chunkSize))
	for i, v := range t.FloatData {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) || i == len(t.FloatData)-1 {
			if err := fn(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}

// chunks recycles ReadData's buffers.
var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// readSpan calls fn with the span's bytes, chunk by chunk. A goroutine
// reads the next chunk while fn works on the current one.
func readSpan(s span, name string, fn func([]byte) error) error {
	f, err := s.open()
	if err != nil {
		return fmt.Errorf("reading data of tensor %q: %w", name, err)
	}
	defer f.Close()
	type chunk struct {
		buf *[]byte
		n   int64
		err error
	}
	ready := make(chan chunk, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		for off := int64(0); off < s.length; {
			buf := chunks.Get().(*[]byte)
			n := min(int64(len(*buf)), s.length-off)
			_, err := f.ReadAt((*buf)[:n], s.offset+off)
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			select {
			case ready <- chunk{buf, n, err}:
			case <-stop:
				chunks.Put(buf)
				return
			}
			if err != nil {
				return
			}
			off += n
		}
	}()
	defer wg.Wait()
	defer close(stop)
	for c := range ready {
		if c.err != nil {
			chunks.Put(c.buf)
			return fmt.Errorf("reading data of tensor %q from %s: %w", name, s.path, c.err)
		}
		err := fn((*c.buf)[:c.n])
		chunks.Put(c.buf)
		if err != nil {
			return err
		}
	}
	return nil
}

func dataTypeName(dt int32) string {
	if n, ok := onnxpb.TensorProto_DataType_name[dt]; ok {
		return n
	}
	return fmt.Sprintf("%d", dt)
}
