package convert

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/convert/opschema"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

type valueKind uint8

const (
	kindInput    valueKind = iota // an input of the main graph
	kindInit                      // an initializer (also when listed as an input)
	kindNode                      // an output of a node
	kindSubInput                  // an input of a subgraph
)

// value is one named value of a graph.
type value struct {
	name    string
	typ     vtype     // in the original model
	kind    valueKind // beside lowered: no padding in a struct a model has millions of
	lowered bool      // its type in the converted model is typ.lower(target)
	g       *graphCtx
	node    *nodeInfo // the producer, for kindNode
	init    *onnxpb.TensorProto
	uses    []use
	note    *valueNote // nil for the many values that need none
}

// valueNote holds what few values have: kept apart so that value, of which
// a model has millions, stays small.
type valueNote struct {
	overflow string // why its data does not fit the target type; "" if it does
	keep     string // for a float32 initializer that stays: a Reason* code
	detail   string
	cur      string // the name that holds it in its decided type, when not its own
}

// cur returns the name that holds the value in its decided type: its own,
// unless the rewrite renamed it (see setCur).
func (v *value) cur() string {
	if v.note == nil || v.note.cur == "" {
		return v.name
	}
	return v.note.cur
}

// setCur records that name holds the value in its decided type.
func (v *value) setCur(name string) { v.notes().cur = name }

// overflow says why the value's data does not fit the target type; "" if
// it does.
func (v *value) overflow() string {
	if v.note == nil {
		return ""
	}
	return v.note.overflow
}

// kept returns the Reason* code and detail of a float32 initializer that
// stays; "" if it does not.
func (v *value) kept() (reason, detail string) {
	if v.note == nil {
		return "", ""
	}
	return v.note.keep, v.note.detail
}

// notes returns the value's note, made on first use.
func (v *value) notes() *valueNote {
	if v.note == nil {
		v.note = &valueNote{}
	}
	return v.note
}

// use is one place a value is read: input in of node n, or output out of
// graph g when n is nil.
type use struct {
	n       *nodeInfo
	g       *graphCtx
	in, out int32
}

// nodeInfo is the analysis of one node.
type nodeInfo struct {
	n      *onnxpb.NodeProto
	g      *graphCtx
	schema *opschema.Schema
	ins    []*value // nil where an optional input is omitted
	outs   []*value // nil where an optional output is omitted

	// The small fields together, so that the struct, of which a model has
	// one per node, has no padding between them.
	index  int32
	float  bool // it reads or makes float32 values
	weight bool // Constant or ConstantOfShape: decided by its consumers
	low    bool // converted: runs in the target type
	// follow is set on a Cast to the target type: it reads its input in
	// the input's decided type (see classifier.cast).
	follow bool

	kept *keepNote // nil unless kept in float32
	// flags are wantIn and outLow in one slice (see those).
	flags []bool
}

// keepNote says why a node stays in float32.
type keepNote struct {
	reason string // a Reason* code
	detail string
}

// keep returns the Reason* code of a node kept in float32; "" if it
// converts.
func (ni *nodeInfo) keep() string {
	if ni.kept == nil {
		return ""
	}
	return ni.kept.reason
}

// detail returns what keep's reason says of this node.
func (ni *nodeInfo) detail() string {
	if ni.kept == nil {
		return ""
	}
	return ni.kept.detail
}

// wantIn says, input by input, whether the node reads it in the target
// type (set by the classifier).
func (ni *nodeInfo) wantIn() []bool {
	if ni.flags == nil {
		return nil
	}
	return ni.flags[:len(ni.ins):len(ni.ins)]
}

// outLow says, output by output, whether the node makes it in the target
// type (set by the classifier).
func (ni *nodeInfo) outLow() []bool {
	if ni.flags == nil {
		return nil
	}
	return ni.flags[len(ni.ins):]
}

// subs returns the subgraphs of a control-flow node: If's then and else,
// the body of Loop and Scan.
func (ni *nodeInfo) subs() []*graphCtx { return ni.g.subs[ni] }

// graphCtx is one graph, the main one or a subgraph, under analysis.
type graphCtx struct {
	g       *onnxpb.GraphProto
	parent  *graphCtx
	owner   *nodeInfo // nil for the main graph
	attr    string
	values  map[string]*value
	inputs  []*value
	outputs []*value
	nodes   []*nodeInfo
	// initValues are the values of g.Initializer, index for index, so
	// that passes over the initializers need no lookup by name.
	initValues []*value
	casts      map[castKey]string
	// subs are the subgraphs of the graph's control-flow nodes (few, so
	// not a field of every node).
	subs map[*nodeInfo][]*graphCtx
}

type castKey struct {
	v       *value
	lowered bool
}

// where names the graph for messages: "main graph" or "body of Loop 'l'".
func (gc *graphCtx) where() string {
	if gc.owner == nil {
		return "main graph"
	}
	return fmt.Sprintf("%s of %s", gc.attr, gc.owner.label())
}

// path is where() for the summary: "" for the main graph.
func (gc *graphCtx) path() string {
	if gc.owner == nil {
		return ""
	}
	return gc.where()
}

func (ni *nodeInfo) label() string {
	if ni.n.GetName() != "" {
		return fmt.Sprintf("%s %q", ni.n.GetOpType(), ni.n.GetName())
	}
	return fmt.Sprintf("%s node #%d", ni.n.GetOpType(), ni.index)
}

func (gc *graphCtx) lookup(name string) *value {
	for g := gc; g != nil; g = g.parent {
		if v, ok := g.values[name]; ok {
			return v
		}
	}
	return nil
}

// analysis holds a model under analysis.
type analysis struct {
	path string // the model file, for messages; "" when unknown
	// typesOnly skips what only the conversion needs (each value's uses),
	// for verify, which checks types.
	typesOnly bool
	// Slabs the analysis allocates its many small objects from: one
	// allocation per thousand values instead of one each.
	values []value
	infos  []nodeInfo
	ptrs   []*value
	// useSlab holds the first use of each value (most have one): the
	// second and later uses grow the value's own slice.
	useSlab []use
	// used are the slab chunks this analysis took; free are chunks of an
	// earlier, finished analysis to take before allocating (see release).
	used, free slabs
	target     Target
	table      *opschema.Table
	opsets     map[string]int
	main       *graphCtx
	graphs     []*graphCtx // all graphs, parents before children
	funcs      map[[2]string]bool
}

const slab = 1024

// slabs are the chunks of records an analysis allocates from. An analysis
// of the converted model (verify's) takes those of the conversion's, which
// is finished by then: its memory is reused instead of added to, and
// reusing it costs less than fresh pages.
type slabs struct {
	values [][]value
	infos  [][]nodeInfo
	ptrs   [][]*value
	// maps are the graphs' maps of values, the main graph's last.
	maps []map[string]*value
}

// release hands over the analysis' slab chunks for another analysis to
// reuse. The analysis and everything it returned must not be used after.
func (a *analysis) release() slabs {
	s := a.used
	a.used, a.values, a.infos, a.ptrs = slabs{}, nil, nil, nil
	for i := len(a.graphs) - 1; i >= 0; i-- {
		s.maps = append(s.maps, a.graphs[i].values)
		a.graphs[i].values = nil
	}
	return s
}

// valueMap returns an empty map for about n values: a map of a released
// analysis (see release) when there is one, or a new one.
func (a *analysis) valueMap(n int) map[string]*value {
	if k := len(a.free.maps); k > 0 {
		m := a.free.maps[k-1]
		a.free.maps = a.free.maps[:k-1]
		clear(m)
		return m
	}
	return make(map[string]*value, n)
}

// addUse records that u reads v. A value's first use comes from the
// analysis' slab.
func (a *analysis) addUse(v *value, u use) {
	if v.uses == nil {
		if len(a.useSlab) == cap(a.useSlab) {
			a.useSlab = make([]use, 0, slab)
		}
		k := len(a.useSlab)
		a.useSlab = a.useSlab[:k+1]
		v.uses = a.useSlab[k : k : k+1]
	}
	v.uses = append(v.uses, u)
}

// chunk returns a cleared chunk from free, or a new one, and records it in
// used.
func chunk[T any](free, used *[][]T) []T {
	var c []T
	if n := len(*free); n > 0 {
		c = (*free)[n-1][:0]
		*free = (*free)[:n-1]
		clear(c[:cap(c)])
	} else {
		c = make([]T, 0, slab)
	}
	*used = append(*used, c)
	return c
}

// newValue returns a new value, a copy of v, from the slab.
func (a *analysis) newValue(v value) *value {
	if len(a.values) == cap(a.values) {
		a.values = chunk(&a.free.values, &a.used.values)
	}
	a.values = append(a.values, v)
	return &a.values[len(a.values)-1]
}

// newNodeInfo returns a new nodeInfo, a copy of ni, from the slab.
func (a *analysis) newNodeInfo(ni nodeInfo) *nodeInfo {
	if len(a.infos) == cap(a.infos) {
		a.infos = chunk(&a.free.infos, &a.used.infos)
	}
	a.infos = append(a.infos, ni)
	return &a.infos[len(a.infos)-1]
}

// valueSlice returns an empty slice with room for n values, from the slab.
func (a *analysis) valueSlice(n int) []*value {
	if n > slab/8 {
		return make([]*value, 0, n)
	}
	if cap(a.ptrs)-len(a.ptrs) < n {
		a.ptrs = chunk(&a.free.ptrs, &a.used.ptrs)
	}
	start := len(a.ptrs)
	a.ptrs = a.ptrs[:start+n]
	return a.ptrs[start : start : start+n]
}

func (a *analysis) define(gc *graphCtx, v *value) error {
	if v.name == "" {
		if v.kind == kindInit {
			return fmt.Errorf("%s: an initializer has no name; the model is not valid ONNX", gc.where())
		}
		return nil
	}
	dup := func() error {
		return fmt.Errorf("%s: the name %q is defined twice; the model is not valid ONNX (values must be named once)", gc.where(), v.name)
	}
	if gc.parent != nil && gc.parent.lookup(v.name) != nil {
		return dup()
	}
	// One map operation: a name already there leaves the map's size as it
	// was (the analysis is dropped on this error anyway).
	n := len(gc.values)
	v.g = gc
	gc.values[v.name] = v
	if len(gc.values) == n {
		return dup()
	}
	return nil
}

// build analyses graph g. inTypes give subgraph input types the graph does
// not declare.
func (a *analysis) build(g *onnxpb.GraphProto, parent *graphCtx, owner *nodeInfo, attr string, inTypes []vtype) (*graphCtx, error) {
	// Maps are sized up front: growing a map of 10^5 names rehashes it
	// over and over.
	nvalues := len(g.Input) + len(g.Initializer) + len(g.SparseInitializer)
	for _, n := range g.Node {
		nvalues += len(n.Output)
	}
	gc := &graphCtx{g: g, parent: parent, owner: owner, attr: attr, values: a.valueMap(nvalues), casts: map[castKey]string{},
		nodes: make([]*nodeInfo, 0, len(g.Node))}
	a.graphs = append(a.graphs, gc)
	declared := make(map[string][]*onnxpb.TypeProto, len(g.ValueInfo)+len(g.Output))
	for _, vi := range g.ValueInfo {
		if vi.Type != nil {
			declared[vi.GetName()] = append(declared[vi.GetName()], vi.Type)
		}
	}
	for _, vi := range g.Output {
		if vi.Type != nil {
			declared[vi.GetName()] = append(declared[vi.GetName()], vi.Type)
		}
	}
	// inits maps the inputs that are also initializers (IR version 3
	// lists every initializer as an input) to the initializer: a map of the
	// inputs, which are few in current models, not of every initializer.
	inits := make(map[string]*onnxpb.TensorProto, len(g.Input))
	for _, vi := range g.Input {
		inits[vi.GetName()] = nil
	}
	for _, t := range g.Initializer {
		if _, ok := inits[t.GetName()]; ok {
			inits[t.GetName()] = t
		}
	}
	for _, st := range g.SparseInitializer {
		if st.GetValues().GetDataType() == int32(onnxpb.TensorProto_FLOAT) {
			return nil, fmt.Errorf("%s: sparse initializer %q holds float32 values, which conversion does not support; store it as a dense initializer",
				gc.where(), st.GetValues().GetName())
		}
		v := &value{name: st.GetValues().GetName(), typ: tensorType(st.GetValues().GetDataType()), kind: kindInit}
		if err := a.define(gc, v); err != nil {
			return nil, err
		}
	}
	for i, vi := range g.Input {
		typ := typeOf(vi.Type)
		if typ == "" && i < len(inTypes) {
			typ = inTypes[i]
		}
		kind := kindInput
		if owner != nil {
			kind = kindSubInput
		}
		v := &value{name: vi.GetName(), typ: typ, kind: kind}
		if t := inits[vi.GetName()]; t != nil {
			v.kind, v.init = kindInit, t
			if it := tensorType(t.GetDataType()); typ != "" && it != typ {
				return nil, fmt.Errorf("%s: input %q is declared %s but its initializer is %s; the model is not valid ONNX", gc.where(), v.name, typ, it)
			}
			v.typ = tensorType(t.GetDataType())
		}
		if v.typ == "" {
			return nil, fmt.Errorf("%s: input %q has no type; the model is not valid ONNX", gc.where(), v.name)
		}
		if err := a.define(gc, v); err != nil {
			return nil, err
		}
		gc.inputs = append(gc.inputs, v)
	}
	gc.initValues = make([]*value, len(g.Initializer))
	for i, t := range g.Initializer {
		if inits[t.GetName()] == t {
			gc.initValues[i] = gc.values[t.GetName()] // listed as an input too
			continue
		}
		v := a.newValue(value{name: t.GetName(), typ: tensorType(t.GetDataType()), kind: kindInit, init: t})
		if v.typ == "" {
			return nil, fmt.Errorf("%s: initializer %q has no valid data type", gc.where(), v.name)
		}
		if err := a.define(gc, v); err != nil {
			return nil, err
		}
		gc.initValues[i] = v
	}
	for i, n := range g.Node {
		ni := a.newNodeInfo(nodeInfo{n: n, g: gc, index: int32(i)})
		gc.nodes = append(gc.nodes, ni)
		if err := a.node(gc, ni, declared); err != nil {
			return nil, err
		}
	}
	for i, vi := range g.Output {
		v := gc.lookup(vi.GetName())
		if v == nil {
			return nil, fmt.Errorf("%s: output %q is not produced by any node, input or initializer; the model is not valid ONNX", gc.where(), vi.GetName())
		}
		if !a.typesOnly {
			a.addUse(v, use{g: gc, out: int32(i)})
		}
		gc.outputs = append(gc.outputs, v)
	}
	// The declared types are few; the values may be millions.
	for name, tps := range declared {
		v := gc.values[name]
		if v == nil {
			continue
		}
		for _, tp := range tps {
			if v.kind == kindNode || v.kind == kindInit {
				if d := typeOf(tp); d != "" && d != v.typ {
					return nil, fmt.Errorf("%s: %q is declared %s but its producer makes %s; the model is not valid ONNX", gc.where(), v.name, d, v.typ)
				}
			}
		}
	}
	return gc, nil
}

// node analyses one node: its inputs, subgraphs and output types.
func (a *analysis) node(gc *graphCtx, ni *nodeInfo, declared map[string][]*onnxpb.TypeProto) error {
	n := ni.n
	ni.ins, ni.outs = a.valueSlice(len(n.Input)), a.valueSlice(len(n.Output))
	for i, name := range n.Input {
		if name == "" {
			ni.ins = append(ni.ins, nil)
			continue
		}
		v := gc.lookup(name)
		if v == nil {
			return fmt.Errorf("%s: %s reads %q, which no input, initializer or earlier node defines; the model is not valid ONNX or its nodes are not in order",
				gc.where(), ni.label(), name)
		}
		if !a.typesOnly {
			a.addUse(v, use{n: ni, in: int32(i), g: gc})
		}
		ni.ins = append(ni.ins, v)
	}
	domain := opschema.NormalizeDomain(n.GetDomain())
	// Most models define no functions: no lookup (and no hashing of two
	// strings) per node then.
	isFunc := len(a.funcs) > 0 && a.funcs[[2]string{n.GetDomain(), n.GetOpType()}]
	if opset, ok := a.opsets[domain]; ok && !isFunc {
		ni.schema, _ = a.table.Lookup(domain, n.GetOpType(), opset)
	}
	if ni.schema == nil && domain == "" && !isFunc {
		return fmt.Errorf("%s: %s is not an ONNX operator at opset %d; the model is not valid ONNX", gc.where(), ni.label(), a.opsets[""])
	}
	ni.weight = isWeightNode(ni)
	var outTypes []vtype
	var err error
	if isControlFlow(ni) {
		outTypes, err = a.controlFlow(gc, ni)
	} else {
		for _, at := range n.Attribute {
			if at.G != nil || len(at.Graphs) > 0 {
				return fmt.Errorf("%s: %s has a subgraph; conversion supports subgraphs of If, Loop and Scan only", gc.where(), ni.label())
			}
		}
		outTypes, err = a.outputTypes(ni)
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", gc.where(), ni.label(), err)
	}
	for j, name := range n.Output {
		if name == "" {
			ni.outs = append(ni.outs, nil)
			continue
		}
		var typ vtype
		if j < len(outTypes) {
			typ = outTypes[j]
		}
		if typ == "" {
			for _, tp := range declared[name] {
				if typ = typeOf(tp); typ != "" {
					break
				}
			}
		}
		if typ == "" && ni.schema == nil {
			return fmt.Errorf("%s: cannot tell the type of %q, output of %s, a custom operator of domain %q; add %q with its type to the graph's value_info (onnx.helper.make_tensor_value_info) and convert again",
				gc.where(), name, ni.label(), n.GetDomain(), name)
		}
		if typ == "" {
			return fmt.Errorf("%s: cannot tell the type of %q, output of %s; record it in the model's value_info (onnx.shape_inference.infer_shapes) and convert again",
				gc.where(), name, ni.label())
		}
		v := a.newValue(value{name: name, typ: typ, kind: kindNode, node: ni})
		if err := a.define(gc, v); err != nil {
			return err
		}
		ni.outs = append(ni.outs, v)
	}
	return nil
}

func isControlFlow(ni *nodeInfo) bool {
	if opschema.NormalizeDomain(ni.n.GetDomain()) != "" {
		return false
	}
	switch ni.n.GetOpType() {
	case "If", "Loop", "Scan":
		return true
	}
	return false
}

func attrOf(n *onnxpb.NodeProto, name string) *onnxpb.AttributeProto {
	for _, at := range n.Attribute {
		if at.GetName() == name {
			return at
		}
	}
	return nil
}

func typeAt(vs []*value, i int) vtype {
	if i < len(vs) && vs[i] != nil {
		return vs[i].typ
	}
	return ""
}

// scanStates returns the number of state values of a Scan node and the
// index of its first state input (1 for Scan-8, whose first input is
// sequence_lens).
func scanStates(ni *nodeInfo) (states, first int, err error) {
	first = 0
	if ni.schema != nil && ni.schema.Since < 9 {
		first = 1
	}
	at := attrOf(ni.n, "num_scan_inputs")
	if at == nil {
		return 0, 0, fmt.Errorf("Scan has no num_scan_inputs attribute")
	}
	states = len(ni.n.Input) - first - int(at.GetI())
	if states < 0 {
		return 0, 0, fmt.Errorf("Scan has %d inputs but num_scan_inputs is %d", len(ni.n.Input), at.GetI())
	}
	return states, first, nil
}

// controlFlow analyses the subgraphs of an If, Loop or Scan node and
// returns its output types.
func (a *analysis) controlFlow(gc *graphCtx, ni *nodeInfo) ([]vtype, error) {
	n := ni.n
	sub := func(name string, in []vtype) (*graphCtx, error) {
		at := attrOf(n, name)
		if at == nil || at.G == nil {
			return nil, fmt.Errorf("it has no %s graph", name)
		}
		s, err := a.build(at.G, gc, ni, name, in)
		if err != nil {
			return nil, err
		}
		if gc.subs == nil {
			gc.subs = map[*nodeInfo][]*graphCtx{}
		}
		gc.subs[ni] = append(gc.subs[ni], s)
		return s, nil
	}
	outs := make([]vtype, len(n.Output))
	switch n.GetOpType() {
	case "If":
		th, err := sub("then_branch", nil)
		if err != nil {
			return nil, err
		}
		el, err := sub("else_branch", nil)
		if err != nil {
			return nil, err
		}
		if len(th.outputs) != len(n.Output) || len(el.outputs) != len(n.Output) {
			return nil, fmt.Errorf("its branches have %d and %d outputs, the node %d", len(th.outputs), len(el.outputs), len(n.Output))
		}
		for i := range outs {
			t, e := th.outputs[i].typ, el.outputs[i].typ
			if t != e {
				return nil, fmt.Errorf("output %d is %s in then_branch but %s in else_branch", i, t, e)
			}
			outs[i] = t
		}
	case "Loop":
		carried := max(len(n.Input)-2, 0)
		in := []vtype{"tensor(int64)", "tensor(bool)"}
		for i := 0; i < carried; i++ {
			in = append(in, typeAt(ni.ins, 2+i))
		}
		body, err := sub("body", in)
		if err != nil {
			return nil, err
		}
		if len(body.inputs) != 2+carried || len(body.outputs) < 1+carried || len(body.outputs)-1 != len(n.Output) {
			return nil, fmt.Errorf("its body has %d inputs and %d outputs, which do not match the node's %d inputs and %d outputs",
				len(body.inputs), len(body.outputs), len(n.Input), len(n.Output))
		}
		for i := range outs {
			outs[i] = body.outputs[1+i].typ
		}
	case "Scan":
		states, first, err := scanStates(ni)
		if err != nil {
			return nil, err
		}
		var in []vtype
		for i := first; i < len(n.Input); i++ {
			in = append(in, typeAt(ni.ins, i))
		}
		body, err := sub("body", in)
		if err != nil {
			return nil, err
		}
		if len(body.inputs) != len(n.Input)-first || len(body.outputs) != len(n.Output) || len(body.outputs) < states {
			return nil, fmt.Errorf("its body has %d inputs and %d outputs, which do not match the node's %d inputs and %d outputs",
				len(body.inputs), len(body.outputs), len(n.Input), len(n.Output))
		}
		for i := range outs {
			outs[i] = body.outputs[i].typ
		}
	}
	return outs, nil
}

// dtypeAttr returns the data type an attribute names, or def when the
// attribute is absent.
func dtypeAttr(n *onnxpb.NodeProto, name string, def int32) int32 {
	at := attrOf(n, name)
	if at == nil {
		return def
	}
	if at.GetType() == onnxpb.AttributeProto_STRING || (len(at.S) > 0 && at.GetI() == 0) {
		if v, ok := onnxpb.TensorProto_DataType_value[strings.ToUpper(string(at.S))]; ok {
			return v
		}
		return 0
	}
	return int32(at.GetI())
}

// outputTypes infers a node's output types from its inputs, attributes and
// schema. Entries it cannot infer are "", to be taken from value_info.
func (a *analysis) outputTypes(ni *nodeInfo) ([]vtype, error) {
	n, s := ni.n, ni.schema
	outs := make([]vtype, len(n.Output))
	if s == nil || len(outs) == 0 {
		return outs, nil // a custom operator or a model-local function: value_info says
	}
	in0 := typeAt(ni.ins, 0)
	const undefined = int32(onnxpb.TensorProto_UNDEFINED)
	float := int32(onnxpb.TensorProto_FLOAT)
	if s.Domain == "" {
		switch n.GetOpType() {
		case "Cast":
			dt := dtypeAttr(n, "to", undefined)
			if tensorType(dt) == "" {
				return nil, fmt.Errorf("its 'to' attribute names no known type")
			}
			outs[0] = tensorType(dt)
			return outs, nil
		case "Constant":
			t, err := constantType(n)
			if err != nil {
				return nil, err
			}
			outs[0] = t
			return outs, nil
		case "ConstantOfShape":
			outs[0] = "tensor(float)"
			if at := attrOf(n, "value"); at != nil && at.T != nil {
				outs[0] = tensorType(at.T.GetDataType())
			}
			return outs, nil
		case "EyeLike", "RandomNormalLike", "RandomUniformLike", "Bernoulli":
			if dt := dtypeAttr(n, "dtype", undefined); dt != undefined {
				outs[0] = tensorType(dt)
			} else {
				outs[0] = in0
			}
			return outs, nil
		case "RandomNormal", "RandomUniform":
			outs[0] = tensorType(dtypeAttr(n, "dtype", float))
			return outs, nil
		case "Multinomial":
			outs[0] = tensorType(dtypeAttr(n, "dtype", int32(onnxpb.TensorProto_INT32)))
			return outs, nil
		case "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix":
			outs[0] = tensorType(dtypeAttr(n, "output_datatype", float))
			return outs, nil
		case "SequenceEmpty":
			outs[0] = "seq(" + tensorType(dtypeAttr(n, "dtype", float)) + ")"
			return outs, nil
		case "SequenceConstruct", "SplitToSequence":
			if in0 != "" {
				outs[0] = "seq(" + in0 + ")"
			}
			return outs, nil
		case "SequenceAt", "ConcatFromSequence":
			outs[0] = in0.elem()
			return outs, nil
		case "Optional":
			if in0 != "" {
				outs[0] = "optional(" + in0 + ")"
			} else if at := attrOf(n, "type"); at != nil && typeOf(at.Tp) != "" {
				outs[0] = "optional(" + typeOf(at.Tp) + ")"
			}
			return outs, nil
		case "OptionalGetElement":
			if strings.HasPrefix(string(in0), "optional(") {
				outs[0] = in0.elem()
			} else {
				outs[0] = in0
			}
			return outs, nil
		case "QuantizeLinear":
			if t := typeAt(ni.ins, 2); t != "" {
				outs[0] = t
			} else {
				outs[0] = tensorType(dtypeAttr(n, "output_dtype", int32(onnxpb.TensorProto_UINT8)))
				if outs[0] == "" {
					outs[0] = "tensor(uint8)"
				}
			}
			return outs, nil
		case "LayerNormalization":
			outs[0] = in0
			stash := tensorType(dtypeAttr(n, "stash_type", float))
			for j := 1; j < len(outs); j++ {
				outs[j] = stash
			}
			return outs, nil
		}
		if n.GetOpType() == "DequantizeLinear" {
			if dt := dtypeAttr(n, "output_dtype", undefined); dt != undefined {
				outs[0] = tensorType(dt)
				return outs, nil
			}
		}
	}
	for j := range outs {
		p, ok := s.Output(j)
		if !ok {
			return nil, fmt.Errorf("it has %d outputs, more than %s allows", len(n.Output), s)
		}
		outs[j] = a.bound(ni, p)
	}
	return outs, nil
}

// bound returns the type a formal output parameter gets from the node's
// inputs: a literal type, the type of an input bound to the same
// constraint, or the constraint's only allowed type.
func (a *analysis) bound(ni *nodeInfo, p opschema.Param) vtype {
	s := ni.schema
	if !s.IsConstraint(p.Type) {
		return vtype(p.Type)
	}
	for i, v := range ni.ins {
		if v == nil || v.typ == "" {
			continue
		}
		if q, ok := s.Input(i); ok && q.Type == p.Type && (q.Homogeneous || q.Option != opschema.Variadic) {
			return v.typ
		}
	}
	if allowed := s.Allowed(p.Type); len(allowed) == 1 {
		return vtype(allowed[0])
	}
	return ""
}

// constantType returns the type of a Constant node's value.
func constantType(n *onnxpb.NodeProto) (vtype, error) {
	for _, at := range n.Attribute {
		switch at.GetName() {
		case "value":
			if at.T == nil {
				return "", fmt.Errorf("its value attribute holds no tensor")
			}
			return tensorType(at.T.GetDataType()), nil
		case "sparse_value":
			if at.SparseTensor == nil || at.SparseTensor.Values == nil {
				return "", fmt.Errorf("its sparse_value attribute holds no tensor")
			}
			if at.SparseTensor.Values.GetDataType() == int32(onnxpb.TensorProto_FLOAT) {
				return "", fmt.Errorf("its value is a sparse float32 tensor, which conversion does not support")
			}
			return vtype("sparse_tensor(" + elemName(at.SparseTensor.Values.GetDataType()) + ")"), nil
		case "value_float", "value_floats":
			return "tensor(float)", nil
		case "value_int", "value_ints":
			return "tensor(int64)", nil
		case "value_string", "value_strings":
			return "tensor(string)", nil
		}
	}
	return "", fmt.Errorf("it has no value attribute")
}

func (a *analysis) opsetOf(m *onnxpb.ModelProto) error {
	a.opsets = map[string]int{}
	for _, o := range m.OpsetImport {
		a.opsets[opschema.NormalizeDomain(o.GetDomain())] = int(o.GetVersion())
	}
	a.funcs = map[[2]string]bool{}
	for _, f := range m.Functions {
		a.funcs[[2]string{f.GetDomain(), f.GetName()}] = true
	}
	v, ok := a.opsets[""]
	switch {
	case !ok:
		return fmt.Errorf("the model imports no ai.onnx opset; the model is not valid ONNX")
	case v > a.table.Newest[""]:
		return fmt.Errorf("the model uses ai.onnx opset %d, newer than the %d this trtbuild knows; convert it with a newer trtbuild or export it at opset %d",
			v, a.table.Newest[""], a.table.Newest[""])
	case v < a.target.minOpset():
		return fmt.Errorf("converting to %s needs ai.onnx opset %d or newer and the model uses opset %d; upgrade it first (onnx.version_converter.convert_version(model, %d))",
			a.target.elemName(), a.target.minOpset(), v, a.target.minOpset())
	}
	return nil
}

// analyse builds the analysis of a model: every value with its original type.
func analyse(m *onnxpb.ModelProto, target Target, table *opschema.Table) (*analysis, error) {
	return analyseWith(&analysis{target: target, table: table}, m)
}

// analyseTypes is analyse without the uses of values, for checking types.
// It allocates from reuse, the slabs of a finished analysis, first.
func analyseTypes(m *onnxpb.ModelProto, target Target, table *opschema.Table, reuse slabs) (*analysis, error) {
	return analyseWith(&analysis{target: target, table: table, typesOnly: true, free: reuse}, m)
}

func analyseWith(a *analysis, m *onnxpb.ModelProto) (*analysis, error) {
	if err := a.opsetOf(m); err != nil {
		return nil, err
	}
	if m.Graph == nil {
		return nil, fmt.Errorf("the model has no graph")
	}
	var err error
	a.main, err = a.build(m.Graph, nil, nil, "", nil)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// names hands out names no value or node of the model has. The value names
// are the analysis' own maps; node names and value_info names are collected
// on first use, into the set that then holds the names handed out.
type names struct {
	a     *analysis
	other map[string]bool
}

func (n *names) taken(name string) bool {
	if n.other == nil {
		// Sized up front: growing a map of 10^6 node names rehashes it
		// over and over.
		size := 0
		for _, gc := range n.a.graphs {
			size += len(gc.g.ValueInfo) + len(gc.nodes)
		}
		n.other = make(map[string]bool, size)
		for _, gc := range n.a.graphs {
			for _, vi := range gc.g.ValueInfo {
				n.other[vi.GetName()] = true
			}
			for _, ni := range gc.nodes {
				n.other[ni.n.GetName()] = true
			}
		}
	}
	if n.other[name] {
		return true
	}
	for _, gc := range n.a.graphs {
		if _, ok := gc.values[name]; ok {
			return true
		}
	}
	return false
}

// fresh returns base, or base_1, base_2 ..., the first that no value or
// node has, and reserves it.
func (n *names) fresh(base string) string {
	name := base
	for i := 1; n.taken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	n.other[name] = true
	return name
}
