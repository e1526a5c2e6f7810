// Package convert reduces the precision of an ONNX model: it converts
// float32 values to float16 or bfloat16 in the graph itself, as NVIDIA's
// ModelOpt AutoCast and onnxconverter-common's float16 converter do, so
// that TensorRT 11, which builds strongly typed networks only, builds a
// reduced-precision engine.
//
// Float32 initializers, constants and value types become the target type;
// Cast nodes that made float32 make the target type; a default list of
// numerically sensitive operators (DefaultKeepOps), operators whose schema
// has no target-type version, nodes that read weights too large for the
// target type, and nodes the caller names stay in float32, with Cast nodes
// at the boundaries. The main graph's inputs and outputs keep their types
// unless Options.ConvertIO is set. Subgraphs of If, Loop and Scan are
// converted with the same rules. docs/convert.md has the full semantics.
//
// The conversion works on the graph's types alone: it does not run the
// model. Every converted model is analysed again before it is returned, so
// an inconsistent result is an error, never a file.
package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/convert/opschema"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/outpath"
)

// Convert converts the model in place and returns what it did. Data of
// initializers still in their files (see modelio.Load) is converted when
// the model is written; everything else is converted now. On error the
// model may be partly changed and must not be written.
func Convert(m *modelio.Model, opts Options) (Summary, error) {
	if !opts.Target.valid() {
		return Summary{}, fmt.Errorf("no target type: set Options.Target to fp16 or bf16")
	}
	defer tightGC()()
	table := opschema.Default()
	a, err := analyse(m, opts.Target, table)
	if err != nil {
		return Summary{}, err
	}
	if err := checkTypes(a); err != nil {
		return Summary{}, fmt.Errorf("the model's types are inconsistent, so it is not valid ONNX (%w); check it with onnx.checker.check_model(model, full_check=True)", err)
	}
	c, err := newClassifier(a, opts)
	if err != nil {
		return Summary{}, err
	}
	f := opts.Target.format()
	ws, err := scanWeights(a, f)
	if err != nil {
		return Summary{}, err
	}
	for _, w := range ws {
		if w.overflow > 0 {
			a.notes(w.v).overflow = fmt.Sprintf("whose values reach %.4g, beyond %s's largest %.6g", w.maxAbs, f, f.MaxFinite())
		}
	}
	c.graph(a.main, "")
	c.decide()

	s := &Summary{Target: opts.Target, KeepIOTypes: !opts.ConvertIO, KeptNodes: []KeptNode{}, KeptWeights: []KeptWeight{},
		InsertedCasts: []InsertedCast{}, RetargetedCasts: []string{}, Inputs: []IOType{}, Outputs: []IOType{}, Warnings: []string{}}
	r := &rewriter{a: a, c: c, m: m, used: &names{a: a}, sum: s}
	if err := r.graph(a.main); err != nil {
		return Summary{}, err
	}
	if err := convertInitializers(m, a, s); err != nil {
		return Summary{}, err
	}
	summarize(a, c, ws, s)
	s.AlreadyTarget = unchanged(a, s)
	// The analysis is done with: its memory goes to the check.
	reuse := a.release()
	c, r, ws = nil, nil, nil
	if err := verify(m, opts.Target, table, reuse); err != nil {
		return Summary{}, err
	}
	return *s, nil
}

// unchanged reports whether the conversion left the model as it was with
// nothing kept in float32: no value changed type, no Cast was added or
// changed, no weight was converted or kept. Such a model is already in the
// target type.
func unchanged(a *analysis, s *Summary) bool {
	if len(s.InsertedCasts) > 0 || len(s.RetargetedCasts) > 0 || s.Nodes.Kept > 0 ||
		s.Initializers.Converted+s.Initializers.Kept+s.Constants.Converted+s.Constants.Kept > 0 {
		return false
	}
	for i := range a.values {
		if a.values[i].lowered {
			return false
		}
	}
	return true
}

func convertInitializers(m *modelio.Model, a *analysis, s *Summary) error {
	f := a.target.format()
	m.SetLowering(modelio.Lowering{DataType: int32(a.target.dataType()), Convert: func(dst, src []byte) { convertChunk(f, dst, src) }})
	for _, gc := range a.graphs {
		for i := range gc.g.Inits {
			t := &gc.g.Inits[i]
			v := gc.initValues[i]
			if v < 0 || !a.vfloat(v) {
				continue
			}
			size, err := m.DataSize(t)
			if err != nil {
				return err
			}
			s.Initializers.BytesBefore += size
			if !a.values[v].lowered {
				s.Initializers.Kept++
				s.Initializers.BytesAfter += size
				reason, detail := a.kept(v)
				s.KeptWeights = append(s.KeptWeights, KeptWeight{Name: a.vname(v), Graph: a.gpath(gc), Reason: reason, Detail: detail})
				continue
			}
			if t.DataType != int32(onnxpb.TensorProto_FLOAT) {
				return fmt.Errorf("%w: initializer %q of type %s would be converted", ErrInternal, a.vname(v), a.vtyp(v))
			}
			t.Lower = true // converted as it is written
			s.Initializers.Converted++
			s.Initializers.BytesAfter += size / 2
		}
	}
	return nil
}

func summarize(a *analysis, c *classifier, ws []weight, s *Summary) {
	for _, gc := range a.graphs {
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			outs := a.outs(n)
			switch {
			case a.has(n, flagWeight):
				if len(outs) == 0 || outs[0] < 0 || !a.vfloat(outs[0]) {
					continue
				}
				if a.has(n, flagLow) {
					s.Constants.Converted++
					continue
				}
				s.Constants.Kept++
				s.KeptWeights = append(s.KeptWeights, KeptWeight{Name: a.vname(outs[0]), Graph: a.gpath(gc), Reason: a.keep(n), Detail: a.detail(n)})
			case !a.has(n, flagFloat):
			case a.has(n, flagLow):
				s.Nodes.Converted++
			default:
				s.Nodes.Kept++
				s.KeptNodes = append(s.KeptNodes, KeptNode{Name: a.nameOf(n), Op: a.opOf(n), Graph: a.gpath(gc), Reason: a.keep(n), Detail: a.detail(n)})
			}
		}
	}
	for _, v := range a.main.inputs {
		if a.values[v].kind == kindInput && a.vfloat(v) {
			s.Inputs = append(s.Inputs, IOType{Name: a.vname(v), Before: "float", After: typeWord(a.values[v].lowered, a.target)})
		}
	}
	for _, v := range a.main.outputs {
		if a.vfloat(v) {
			s.Outputs = append(s.Outputs, IOType{Name: a.vname(v), Before: "float", After: typeWord(c.required(a.main, v), a.target)})
		}
	}
	if short, w := newerOpsetWarning(a, a.path); short != nil {
		s.OpsetShortfall = short
		s.Warnings = append(s.Warnings, w)
	}
	for _, w := range ws {
		if w.overflow == 0 {
			continue
		}
		var readers []string
		for _, u := range a.usesOf(w.v) {
			if u.n >= 0 {
				readers = append(readers, a.label(u.n))
			}
		}
		sort.Strings(readers)
		readers = compact(readers)
		what := "initializer"
		if a.values[w.v].kind == kindNode {
			what = a.opOf(a.values[w.v].src) + " value"
		}
		msg := fmt.Sprintf("%s %q has %d values beyond %s's range (up to %.4g); it stays in float32", what, a.vname(w.v), w.overflow, a.target.format(), w.maxAbs)
		if len(readers) > 0 {
			if len(readers) > 5 {
				readers = append(readers[:5], fmt.Sprintf("%d more", len(readers)-5))
			}
			msg += ", and so do its readers: " + strings.Join(readers, ", ")
		}
		s.Warnings = append(s.Warnings, msg)
	}
	sort.Strings(s.Warnings)
}

// admitsLowered reports whether schema s accepts the node's float32 inputs
// and outputs in the target type.
func admitsLowered(a *analysis, s *opschema.Schema, n int32) bool {
	for i, v := range a.ins(n) {
		if v >= 0 && a.vfloat(v) {
			if p, ok := s.Input(i); !ok || !s.Admits(p.Type, string(a.vtyp(v).lower(a.target))) {
				return false
			}
		}
	}
	for j, v := range a.outs(n) {
		if v >= 0 && a.vfloat(v) {
			if p, ok := s.Output(j); !ok || !s.Admits(p.Type, string(a.vtyp(v).lower(a.target))) {
				return false
			}
		}
	}
	return true
}

// newerOpsetWarning says which operators stayed in float32 only because
// the model's opset has no target-type version of them (as Conv and the
// pooling operators have no bfloat16 version before opset 22), how many
// nodes each, and exactly how to convert them too: export at the newer
// opset, or upgrade the opset with onnx's version converter and convert
// that file. trtbuild does not change a model's opset itself: operators
// change meaning between opsets (the Reduce operators' axes, GridSample's
// modes, GroupNormalization's scale), which a type table cannot check.
// model is the model file's name for the command ("" when unknown).
func newerOpsetWarning(a *analysis, model string) (*OpsetShortfall, string) {
	opset := a.opsets[""]
	count, need := 0, 0
	ops := map[string]int{}
	for _, gc := range a.graphs {
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			if a.keep(n) != ReasonTypes || a.schema(n) == nil || a.schema(n).Domain != "" {
				continue
			}
			for _, s := range a.table.Versions("", a.opOf(n)) {
				if s.Since > opset && s.Since <= a.table.Newest[""] && admitsLowered(a, s, n) {
					count++
					ops[a.opOf(n)]++
					need = max(need, s.Since)
					break
				}
			}
		}
	}
	if count == 0 {
		return nil, ""
	}
	short := &OpsetShortfall{Opset: int(opset), Need: need, Nodes: count, Ops: []OpNodes{}}
	var list []string
	for _, op := range sortedKeys(ops) {
		list = append(list, fmt.Sprintf("%s (%s)", op, plural(ops[op], "node")))
		short.Ops = append(short.Ops, OpNodes{Op: op, Nodes: ops[op]})
	}
	verb := "stay"
	if count == 1 {
		verb = "stays"
	}
	if model == "" {
		model = "MODEL.onnx"
	}
	base := filepath.Base(model)
	upgraded := strings.TrimSuffix(base, filepath.Ext(base)) + fmt.Sprintf(".opset%d.onnx", need)
	return short, fmt.Sprintf("opset %d has no %s version of %s, so %s %s in float32 with Cast nodes around them; to convert them too, export the model at opset %d or newer "+
		"(torch.onnx.export(..., opset_version=%d)), or upgrade it with an onnx package that knows opset %d (onnx.defs.onnx_opset_version() >= %d): "+
		"python3 -c \"import onnx, onnx.version_converter as vc; onnx.save(vc.convert_version(onnx.load('%s'), %d), '%s')\", check it with onnx.checker.check_model, and convert %s",
		opset, a.target.elemName(), strings.Join(list, ", "), plural(count, "node"), verb, need, need, need, need, base, need, upgraded, upgraded)
}

// plural returns "1 node" or "n nodes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func typeWord(lowered bool, t Target) string {
	if lowered {
		return t.elemName()
	}
	return "float"
}

// OutputName returns the default name of the converted copy of model:
// "resnet.onnx" becomes "resnet.fp16.onnx".
func OutputName(model string, t Target) string {
	base := filepath.Base(model)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	return stem + "." + string(t) + ".onnx"
}

// ErrWouldOverwrite is wrapped by errors that refuse to write over an input file.
var ErrWouldOverwrite = errors.New("output would overwrite an input file")

// Write writes a converted model to out, used as use: outpath.WholeFile for
// a path the user named, outpath.Own for one trtbuild chose (OutputName
// beside the model), which follows no link. The weights go to an external
// data file named out + ".data", a name trtbuild chooses, when the source
// model had external data or when the model would not fit in one 2 GiB
// protobuf file. Both files are written atomically. Write refuses to
// replace the source model or any of its data files.
func Write(m *modelio.Model, out string, use outpath.Use) (*Files, error) {
	defer tightGC()()
	external := m.External
	if !external {
		size, err := m.InlineSize()
		if err != nil {
			return nil, err
		}
		external = size > modelio.MaxInline
	}
	dataName := filepath.Base(out) + ".data"
	targets := []string{out}
	if external {
		targets = append(targets, filepath.Join(filepath.Dir(out), dataName))
	}
	for _, src := range m.SourceFiles() {
		for _, dst := range targets {
			if samePath(src, dst) {
				return nil, fmt.Errorf("%w: %s is read by the conversion; choose another output name", ErrWouldOverwrite, dst)
			}
		}
	}
	w, err := m.Write(out, modelio.WriteOptions{External: external, DataName: dataName, Use: use})
	if err != nil {
		return nil, err
	}
	return &Files{Model: w.ModelPath, ModelSize: w.ModelSize, Data: w.DataPath, DataSize: w.DataSize}, nil
}

func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// Analyze reads the model at path and converts it in memory without writing anything, for a
// summary of what ConvertFile would do: a simulated --fp16/--bf16 build says from it what a
// TensorRT 11 build's conversion would keep in float32.
func Analyze(path string, opts Options) (Summary, error) {
	defer tightGC()()
	m, err := modelio.Load(path)
	if err != nil {
		return Summary{}, err
	}
	return Convert(m, opts)
}

// ConvertFile converts the model at in and writes the result into the
// folder outDir, which must exist, under the name OutputName gives, with
// its external data file next to it when it has one. It returns the
// converted model's path, or in itself when the model is already in the
// target type (Summary.AlreadyTarget). The build worker calls it with a temporary
// folder before it hands the model to TensorRT's parser.
func ConvertFile(in, outDir string, opts Options) (outPath string, summary Summary, err error) {
	defer tightGC()()
	m, err := modelio.Load(in)
	if err != nil {
		return "", Summary{}, err
	}
	s, err := Convert(m, opts)
	if err != nil {
		return "", Summary{}, fmt.Errorf("converting %s to %s: %w", in, opts.Target, err)
	}
	if s.AlreadyTarget {
		return in, s, nil // nothing to convert: the model itself will do
	}
	out := filepath.Join(outDir, OutputName(in, opts.Target))
	files, err := Write(m, out, outpath.Own)
	if err != nil {
		return "", Summary{}, err
	}
	s.Files = files
	return out, s, nil
}
