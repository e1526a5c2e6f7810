package convert

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/convert/opschema"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// The analysis works on the compact form of package modelio: values and
// nodes are integer ids into flat slices of small records without
// pointers, names are views into the model's buffers, and each graph has
// one table from names to value ids. Rare data (why a node stays, a
// value's overflow, a renamed value) lives in side tables keyed by id.

type valueKind uint8

const (
	kindInput    valueKind = iota // an input of the main graph
	kindInit                      // an initializer (also when listed as an input)
	kindNode                      // an output of a node
	kindSubInput                  // an input of a subgraph
)

// typeID is an interned vtype (analysis.types); 0 is the unknown type "".
type typeID uint16

// value is one named value of a graph.
type value struct {
	name modelio.Str
	// src is the producer for kindNode, the initializer's index in its
	// graph for kindInit (-1 for a sparse one), -1 otherwise.
	src     int32
	g       int32 // the graph
	typ     typeID
	kind    valueKind
	lowered bool // its type in the converted model is typ.lower(target)
}

// valueNote holds what few values have, keyed by value id.
type valueNote struct {
	overflow string // why its data does not fit the target type; "" if it does
	keep     string // for a float32 initializer that stays: a Reason* code
	detail   string
	cur      string // the name that holds it in its decided type, when not its own
}

// use is one place a value is read: input in of node n, or, when n is
// negative, output in of graph ^n.
type use struct {
	n, in int32
}

// useGraph returns the graph of a use.
func (a *analysis) useGraph(u use) *graphCtx {
	if u.n < 0 {
		return a.graphs[^u.n]
	}
	return a.gcOf(u.n)
}

// Node flags.
const (
	flagFloat  = 1 << iota // it reads or makes float32 values
	flagWeight             // Constant or ConstantOfShape: decided by its consumers
	flagLow                // converted: runs in the target type
	// flagFollow is set on a Cast to the target type: it reads its input
	// in the input's decided type (see classifier.cast).
	flagFollow
	flagCF // If, Loop or Scan
)

// nodeInfo is the analysis of one node.
type nodeInfo struct {
	g      int32  // the graph
	idx    int32  // its index in the graph's nodes
	schema uint16 // index in analysis.schemas; 0 for none
	op     uint16 // the op type's id in the model (modelio.Model.Sym)
	flags  uint8
}

// keepNote says why a node stays in float32.
type keepNote struct {
	reason string // a Reason* code
	detail string
}

// graphCtx is one graph, the main one or a subgraph, under analysis.
type graphCtx struct {
	g      *modelio.Graph
	parent *graphCtx
	owner  int32 // the node whose subgraph it is; -1 for the main graph
	attr   string
	idx    int32 // its index in analysis.graphs
	// pending are values defined but not yet in the table (see flush);
	// dupErr is set when a name is found defined twice.
	pending []int32
	dupErr  error
	next    int32 // the value local guesses a lookup wants (see local)
	n0      int32 // the id of its first node: its nodes are n0 ... n0+nn-1
	nn      int32 // the number of its nodes when analysed (the rewrite adds some)
	table   nameTable
	// ids are the value ids of the nodes' inputs and outputs, index for
	// index with g.Names; -1 where one is omitted. flags are wantIn (for
	// inputs) and outLow (for outputs), set by the classifier.
	ids   []int32
	flags []bool
	// inputs, outputs are value ids; initValues the value of each
	// initializer, index for index with g.Inits.
	inputs, outputs, initValues []int32
	casts                       map[castKey]string
	// subs are the subgraphs of the graph's control-flow nodes, by node id.
	subs map[int32][]*graphCtx
}

type castKey struct {
	v       int32
	lowered bool
}

// analysis holds a model under analysis.
type analysis struct {
	m    *modelio.Model
	path string // the model file, for messages; "" when unknown
	// typesOnly skips what only the conversion needs (each value's uses),
	// for verify, which checks types; it also takes the nodes in the order
	// the rewrite left (Graph.Order) and the initializers' new types.
	typesOnly bool
	values    []value
	nodes     []nodeInfo
	// useStart and uses hold the uses of every value: those of value v
	// are uses[useStart[v]:useStart[v+1]].
	useStart []int32
	uses     []use
	vnotes   map[int32]*valueNote
	knotes   map[int32]*keepNote

	types   []vtype
	typeIDs map[vtype]typeID
	isFloat []bool // by typeID
	// lastType, lastTypeID cache typeID's last answer: values come in runs
	// of one type.
	lastType   vtype
	lastTypeID typeID
	schemas    []*opschema.Schema
	// schemaOf caches the schema (index+1, 0 for none) and whether the
	// operator is a model-local function, by operator and domain (their
	// ids in the model: op<<16 | domain).
	schemaOf map[uint32]schemaRef
	seed     maphash.Seed
	outTypes []vtype // outputTypes' scratch
	// hashes and sorted are flush's scratch.
	hashes, sorted []hashed
	// reuse is the memory of a finished analysis (see release).
	reuse *reusable
	// Memos by node signature (sigKey): the output types outputTypes
	// binds, the classifier's decisions, the signatures checkSchema passed.
	boundMemo map[sigKey][8]typeID
	classMemo map[sigKey]classResult
	checked   map[sigKey]bool

	target Target
	table  *opschema.Table
	opsets map[string]int
	main   *graphCtx
	graphs []*graphCtx // all graphs, parents before children
	funcs  map[[2]string]bool
}

// reusable is the memory of a finished analysis, for the check of the
// converted model to reuse instead of adding to.
type reusable struct {
	values []value
	nodes  []nodeInfo
	graphs map[*modelio.Graph]graphMem
}

type graphMem struct {
	ids   []int32
	slots []uint64
}

// release hands over the analysis' large slices for another analysis to
// reuse. The analysis must not be used after.
func (a *analysis) release() *reusable {
	r := &reusable{values: a.values[:0], nodes: a.nodes[:0], graphs: make(map[*modelio.Graph]graphMem, len(a.graphs))}
	for _, gc := range a.graphs {
		r.graphs[gc.g] = graphMem{ids: gc.ids[:0], slots: gc.table.slots}
	}
	*a = analysis{}
	return r
}

// int32s returns a slice of n int32s: reused when r has one large enough.
func int32s(r []int32, n int) []int32 {
	if cap(r) >= n {
		r = r[:n]
		clear(r)
		return r
	}
	return make([]int32, n)
}

type schemaRef struct {
	schema uint16
	isFunc bool
}

// str returns a string of the model.
func (a *analysis) str(s modelio.Str) string { return a.m.String(s) }

func (a *analysis) vname(v int32) string { return a.m.String(a.values[v].name) }

func (a *analysis) vtyp(v int32) vtype { return a.types[a.values[v].typ] }

func (a *analysis) vfloat(v int32) bool { return a.isFloat[a.values[v].typ] }

// typeID interns a type.
func (a *analysis) typeID(t vtype) typeID {
	if t == a.lastType {
		return a.lastTypeID
	}
	id, ok := a.typeIDs[t]
	if !ok {
		id = typeID(len(a.types))
		a.types = append(a.types, t)
		a.isFloat = append(a.isFloat, t.isFloat())
		a.typeIDs[t] = id
	}
	a.lastType, a.lastTypeID = t, id
	return id
}

// initType returns an initializer's data type: for the check of the
// converted model, the type it is written with.
func (a *analysis) initType(t *modelio.Tensor) int32 {
	if a.typesOnly {
		return a.m.TypeOf(t)
	}
	return t.DataType
}

// node helpers

func (a *analysis) gcOf(n int32) *graphCtx { return a.graphs[a.nodes[n].g] }

func (a *analysis) mnode(n int32) *modelio.Node {
	ni := &a.nodes[n]
	return &a.graphs[ni.g].g.Nodes[ni.idx]
}

func (a *analysis) opOf(n int32) string { return a.m.Sym(a.nodes[n].op) }

func (a *analysis) nameOf(n int32) string { return a.str(a.mnode(n).Name) }

func (a *analysis) schema(n int32) *opschema.Schema {
	if s := a.nodes[n].schema; s != 0 {
		return a.schemas[s-1]
	}
	return nil
}

func (a *analysis) has(n int32, f uint8) bool { return a.nodes[n].flags&f != 0 }

func (a *analysis) set(n int32, f uint8, on bool) {
	if on {
		a.nodes[n].flags |= f
	} else {
		a.nodes[n].flags &^= f
	}
}

// ports returns node n's graph and where its inputs ([in, out)) and outputs ([out, end)) lie
// in the graph's per-port slices (ids, flags).
func (a *analysis) ports(n int32) (gc *graphCtx, in, out, end int32) {
	ni := &a.nodes[n]
	gc = a.graphs[ni.g]
	mn := &gc.g.Nodes[ni.idx]
	return gc, mn.In, mn.Out(), mn.Out() + mn.NOut
}

// ins returns the value ids of a node's inputs (-1 where omitted).
func (a *analysis) ins(n int32) []int32 {
	gc, in, out, _ := a.ports(n)
	return gc.ids[in:out:out]
}

// outs returns the value ids of a node's outputs (-1 where omitted).
func (a *analysis) outs(n int32) []int32 {
	gc, _, out, end := a.ports(n)
	return gc.ids[out:end:end]
}

// wantIn says, input by input, whether the node reads it in the target
// type (set by the classifier).
func (a *analysis) wantIn(n int32) []bool {
	gc, in, out, _ := a.ports(n)
	return gc.flags[in:out:out]
}

// outLow says, output by output, whether the node makes it in the target
// type (set by the classifier).
func (a *analysis) outLow(n int32) []bool {
	gc, _, out, end := a.ports(n)
	return gc.flags[out:end:end]
}

// proto returns node n decoded, for its attributes.
func (a *analysis) proto(n int32) *onnxpb.NodeProto {
	ni := &a.nodes[n]
	np, err := a.graphs[ni.g].g.NodeProto(int(ni.idx))
	if err != nil {
		// analysis.node decoded every node whose attributes are read.
		panic(fmt.Sprintf("%v: node %d: %v", ErrInternal, ni.idx, err))
	}
	return np
}

// value returns the value tensor of a Constant or ConstantOfShape node
// when it is a view of the node's bytes; nil when the node is decoded
// (a.proto) instead.
func (a *analysis) value(n int32) *modelio.Tensor {
	ni := &a.nodes[n]
	return a.graphs[ni.g].g.Value(int(ni.idx))
}

// keep returns the Reason* code of a node kept in float32; "" if it
// converts.
func (a *analysis) keep(n int32) string {
	if k := a.knotes[n]; k != nil {
		return k.reason
	}
	return ""
}

// detail returns what keep's reason says of this node.
func (a *analysis) detail(n int32) string {
	if k := a.knotes[n]; k != nil {
		return k.detail
	}
	return ""
}

func (a *analysis) setKeep(n int32, reason, detail string) {
	if a.keep(n) == "" {
		a.knotes[n] = &keepNote{reason: reason, detail: detail}
	}
}

// subs returns the subgraphs of a control-flow node: If's then and else,
// the body of Loop and Scan.
func (a *analysis) subs(n int32) []*graphCtx { return a.gcOf(n).subs[n] }

// value notes

func (a *analysis) notes(v int32) *valueNote {
	n := a.vnotes[v]
	if n == nil {
		n = &valueNote{}
		a.vnotes[v] = n
	}
	return n
}

// cur returns the name that holds the value in its decided type: its own,
// unless the rewrite renamed it (a main graph output whose type changes, see
// rewriter.graph).
func (a *analysis) cur(v int32) string {
	if n := a.vnotes[v]; n != nil && n.cur != "" {
		return n.cur
	}
	return a.vname(v)
}

// overflow says why the value's data does not fit the target type; "" if
// it does.
func (a *analysis) overflow(v int32) string {
	if n := a.vnotes[v]; n != nil {
		return n.overflow
	}
	return ""
}

// kept returns the Reason* code and detail of a float32 initializer that
// stays; "" if it does not.
func (a *analysis) kept(v int32) (reason, detail string) {
	if n := a.vnotes[v]; n != nil {
		return n.keep, n.detail
	}
	return "", ""
}

// usesOf returns the uses of value v.
func (a *analysis) usesOf(v int32) []use {
	if a.useStart == nil {
		return nil
	}
	return a.uses[a.useStart[v]:a.useStart[v+1]]
}

// where names the graph for messages: "main graph" or "body of Loop 'l'".
func (a *analysis) where(gc *graphCtx) string {
	if gc.owner < 0 {
		return "main graph"
	}
	return fmt.Sprintf("%s of %s", gc.attr, a.label(gc.owner))
}

// gpath is where for the summary: "" for the main graph.
func (a *analysis) gpath(gc *graphCtx) string {
	if gc.owner < 0 {
		return ""
	}
	return a.where(gc)
}

func (a *analysis) label(n int32) string {
	if name := a.nameOf(n); name != "" {
		return fmt.Sprintf("%s %q", a.opOf(n), name)
	}
	return fmt.Sprintf("%s node #%d", a.opOf(n), n-a.gcOf(n).n0)
}

// nameTable maps names to value ids (or node ids) by open addressing:
// one slice, no pointers, sized once. A slot holds the upper half of the
// name's hash and the id+1 (0 is empty), so that probing past other names
// compares no strings.
type nameTable struct {
	slots []uint64
	n     int
}

// tableSize is the number of slots for n names: at most four fifths full
// (the tags keep long probes cheap: they compare no strings, and run
// through adjacent slots).
func tableSize(n int) int {
	size := 16
	for 4*size < 5*n {
		size *= 2
	}
	return size
}

// newNameTable returns a table for n names, in reuse when it is large
// enough.
func newNameTable(n int, reuse []uint64) nameTable {
	size := tableSize(n)
	if len(reuse) >= size {
		clear(reuse)
		return nameTable{slots: reuse}
	}
	return nameTable{slots: make([]uint64, size)}
}

// find returns the id of name (or -1) and the slot where it is or would be.
func (t *nameTable) find(seed maphash.Seed, name string, key func(int32) string) (int32, int) {
	return t.findHash(maphash.String(seed, name), name, key)
}

func (t *nameTable) findHash(h uint64, name string, key func(int32) string) (int32, int) {
	tag := h >> 32
	mask := len(t.slots) - 1
	i := int(h) & mask
	for {
		s := t.slots[i]
		if s == 0 {
			return -1, i
		}
		if s>>32 == tag && key(int32(uint32(s))-1) == name {
			return int32(uint32(s)) - 1, i
		}
		i = (i + 1) & mask
	}
}

// insert adds id under name; false if the name is there already.
func (t *nameTable) insert(seed maphash.Seed, name string, id int32, key func(int32) string) bool {
	if 5*(t.n+1) > 4*len(t.slots) {
		t.grow(seed, key)
	}
	return t.insertHash(maphash.String(seed, name), name, id, key)
}

// insertID is insertHash for id, whose name key gives only when a slot's
// tag matches: the name is not read otherwise.
func (t *nameTable) insertID(h uint64, id int32, key func(int32) string) bool {
	tag := h >> 32
	mask := len(t.slots) - 1
	i := int(h) & mask
	for {
		s := t.slots[i]
		if s == 0 {
			t.slots[i] = tag<<32 | uint64(uint32(id+1))
			t.n++
			return true
		}
		if s>>32 == tag && key(int32(uint32(s))-1) == key(id) {
			return false
		}
		i = (i + 1) & mask
	}
}

// grow doubles the table.
func (t *nameTable) grow(seed maphash.Seed, key func(int32) string) {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	mask := len(t.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := int(maphash.String(seed, key(int32(uint32(s))-1))) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// insertHash is insert for a name whose hash is h, in a table sized for it.
func (t *nameTable) insertHash(h uint64, name string, id int32, key func(int32) string) bool {
	found, i := t.findHash(h, name, key)
	if found >= 0 {
		return false
	}
	t.slots[i] = h>>32<<32 | uint64(uint32(id+1))
	t.n++
	return true
}

// local returns the value named name in gc itself (not its parents); -1 if none.
func (a *analysis) local(gc *graphCtx, name string) int32 {
	// Guesses first, which cost no cache misses in the table: a node most
	// often reads what the nodes just before it made, or the value after
	// the one the last lookup in the table found (weights are read in the
	// order they are stored). A guess is checked by name and graph, and names are
	// unique in a graph, so a right guess is the table's answer.
	for k, v := range [3]int32{gc.next, int32(len(a.values)) - 1, int32(len(a.values)) - 2} {
		if v >= 0 && int(v) < len(a.values) && a.values[v].g == gc.idx && a.vname(v) == name && name != "" {
			if k == 0 {
				gc.next = v + 1 // the run goes on
			}
			return v
		}
	}
	a.flush(gc)
	id, _ := gc.table.find(a.seed, name, a.vname)
	if id >= 0 {
		gc.next = id + 1
	}
	return id
}

func (a *analysis) lookup(gc *graphCtx, name string) int32 {
	for g := gc; g != nil; g = g.parent {
		if v := a.local(g, name); v >= 0 {
			return v
		}
	}
	return -1
}

// newValue adds a value and returns its id.
func (a *analysis) newValue(v value) int32 {
	a.values = append(a.values, v)
	return int32(len(a.values) - 1)
}

func (a *analysis) define(gc *graphCtx, v int32) error {
	name := a.vname(v)
	if name == "" {
		if a.values[v].kind == kindInit {
			return fmt.Errorf("%s: an initializer has no name; the model is not valid ONNX", a.where(gc))
		}
		return nil
	}
	dup := func() error {
		return fmt.Errorf("%s: the name %q is defined twice; the model is not valid ONNX (values must be named once)", a.where(gc), name)
	}
	if gc.parent != nil && a.lookup(gc.parent, name) >= 0 {
		return dup()
	}
	// Into the table later, in a batch (see flush); a name defined twice
	// is found then.
	gc.pending = append(gc.pending, v)
	if len(gc.pending) >= maxPending {
		a.flush(gc)
		return gc.dupErr
	}
	return nil
}

// maxPending is the most values a graph defines before flush puts them in
// its table.
const maxPending = 1 << 16

// hashed is a pending value with its name's hash, for flush.
type hashed struct {
	h uint64
	v int32
}

// flush puts the graph's pending values into its table. A large batch goes
// in in the order of the slots it lands in: the table is written from one
// end to the other, not at random, which in a table larger than the
// processor's caches saves a wait for memory per value. A name defined
// twice sets gc.dupErr (for the first value, in definition order, whose
// name was taken).
func (a *analysis) flush(gc *graphCtx) {
	p := gc.pending
	if len(p) == 0 {
		return
	}
	gc.pending = p[:0]
	dup := int32(-1)
	t := &gc.table
	for 5*(t.n+len(p)) > 4*len(t.slots) { // never, for a table sized for the graph
		t.grow(a.seed, a.vname)
	}
	if len(p) < 512 || len(t.slots) < 1<<16 {
		for _, v := range p {
			if !t.insert(a.seed, a.vname(v), v, a.vname) && (dup < 0 || v < dup) {
				dup = v
			}
		}
	} else {
		// A radix sort on the slot's upper 16 bits, in two passes of 8
		// (stable, so that of two values of one name the first goes in
		// first): the inserts then walk the table in order.
		mask := uint64(len(t.slots) - 1)
		shift := 0
		for len(t.slots)>>(shift+16) > 1 {
			shift++
		}
		hs := slices.Grow(a.hashes[:0], len(p))[:len(p)]
		for i, v := range p {
			hs[i] = hashed{maphash.String(a.seed, a.vname(v)), v}
		}
		sorted := slices.Grow(a.sorted[:0], len(p))[:len(p)]
		src, dst := hs, sorted
		for pass := 0; pass < 2; pass++ {
			sh := shift + 8*pass
			var start [257]int32
			for _, x := range src {
				start[((x.h&mask)>>sh)&255+1]++
			}
			for i := 1; i < len(start); i++ {
				start[i] += start[i-1]
			}
			for _, x := range src {
				b := ((x.h & mask) >> sh) & 255
				dst[start[b]] = x
				start[b]++
			}
			src, dst = dst, src
		}
		for _, x := range src {
			if !t.insertID(x.h, x.v, a.vname) && (dup < 0 || x.v < dup) {
				dup = x.v
			}
		}
		a.hashes, a.sorted = hs, sorted
	}
	if dup >= 0 && gc.dupErr == nil {
		gc.dupErr = fmt.Errorf("%s: the name %q is defined twice; the model is not valid ONNX (values must be named once)", a.where(gc), a.vname(dup))
	}
}

// build analyses graph g. inTypes give subgraph input types the graph does
// not declare.
func (a *analysis) build(g *modelio.Graph, parent *graphCtx, owner int32, attr string, inTypes []vtype) (_ *graphCtx, err error) {
	m := a.m
	nvalues := len(g.Inputs) + len(g.Inits) + len(g.Sparse)
	for i := range g.Nodes {
		nvalues += int(g.Nodes[i].NOut)
	}
	var mem graphMem
	if a.reuse != nil {
		mem = a.reuse.graphs[g]
	}
	gc := &graphCtx{g: g, parent: parent, owner: owner, attr: attr, table: newNameTable(nvalues, mem.slots),
		casts: map[castKey]string{}, ids: int32s(mem.ids, len(g.Names))}
	if !a.typesOnly {
		gc.flags = make([]bool, len(g.Names)) // the classifier's
	}
	gi := int32(len(a.graphs))
	gc.idx = gi
	a.graphs = append(a.graphs, gc)
	// A name defined twice is found when the pending values go into the
	// table: it is the error whatever else failed after it.
	defer func() {
		if err != nil {
			a.flush(gc)
			if gc.dupErr != nil {
				err = gc.dupErr
			}
		}
	}()
	// Its nodes' records first, so that they are contiguous whatever
	// subgraphs add.
	gc.n0 = int32(len(a.nodes))
	if a.typesOnly && g.Order != nil {
		for _, i := range g.Order {
			a.nodes = append(a.nodes, nodeInfo{g: gi, idx: i, op: g.Nodes[i].Op})
		}
	} else {
		for i := range g.Nodes {
			a.nodes = append(a.nodes, nodeInfo{g: gi, idx: int32(i), op: g.Nodes[i].Op})
		}
	}
	gc.nn = int32(len(a.nodes)) - gc.n0
	// inits maps the inputs that are also initializers (IR version 3
	// lists every initializer as an input) to the initializer: a map of the
	// inputs, which are few in current models, not of every initializer.
	inits := make(map[string]int32, len(g.Inputs))
	for _, vi := range g.Inputs {
		inits[vi.GetName()] = -1
	}
	if len(inits) > 0 {
		for i := range g.Inits {
			if j, ok := inits[m.String(g.Inits[i].Name)]; ok && j < 0 {
				inits[m.String(g.Inits[i].Name)] = int32(i)
			}
		}
	}
	for _, st := range g.Sparse {
		if st.GetValues().GetDataType() == int32(onnxpb.TensorProto_FLOAT) {
			return nil, fmt.Errorf("%s: sparse initializer %q holds float32 values, which conversion does not support; store it as a dense initializer",
				a.where(gc), st.GetValues().GetName())
		}
		v := a.newValue(value{name: m.NewStr(st.GetValues().GetName()), typ: a.typeID(tensorType(st.GetValues().GetDataType())), kind: kindInit, g: gi, src: -1})
		if err := a.define(gc, v); err != nil {
			return nil, err
		}
	}
	gc.initValues = make([]int32, len(g.Inits))
	for i := range gc.initValues {
		gc.initValues[i] = -1
	}
	for i, vi := range g.Inputs {
		typ := typeOf(vi.Type)
		if typ == "" && i < len(inTypes) {
			typ = inTypes[i]
		}
		kind := kindInput
		if owner >= 0 {
			kind = kindSubInput
		}
		val := value{name: m.NewStr(vi.GetName()), kind: kind, g: gi, src: -1}
		if t := inits[vi.GetName()]; t >= 0 {
			it := tensorType(a.initType(&g.Inits[t]))
			val.kind, val.src = kindInit, t
			if typ != "" && it != typ {
				return nil, fmt.Errorf("%s: input %q is declared %s but its initializer is %s; the model is not valid ONNX", a.where(gc), vi.GetName(), typ, it)
			}
			typ = it
		}
		if typ == "" {
			return nil, fmt.Errorf("%s: input %q has no type; the model is not valid ONNX", a.where(gc), vi.GetName())
		}
		val.typ = a.typeID(typ)
		v := a.newValue(val)
		if err := a.define(gc, v); err != nil {
			return nil, err
		}
		if val.kind == kindInit {
			gc.initValues[val.src] = v // listed as an input too
		}
		gc.inputs = append(gc.inputs, v)
	}
	for i := range g.Inits {
		t := &g.Inits[i]
		if gc.initValues[i] >= 0 {
			continue
		}
		typ := tensorType(a.initType(t))
		v := a.newValue(value{name: t.Name, typ: a.typeID(typ), kind: kindInit, g: gi, src: int32(i)})
		if typ == "" {
			return nil, fmt.Errorf("%s: initializer %q has no valid data type", a.where(gc), a.vname(v))
		}
		if err := a.define(gc, v); err != nil {
			return nil, err
		}
		gc.initValues[i] = v
	}
	d := &declared{a: a, gc: gc}
	for n := gc.n0; n < gc.n0+gc.nn; n++ {
		if err := a.node(gc, n, d); err != nil {
			return nil, err
		}
		if gc.dupErr != nil {
			return nil, gc.dupErr
		}
	}
	a.flush(gc)
	if gc.dupErr != nil {
		return nil, gc.dupErr
	}
	for _, vi := range g.Outputs {
		v := a.lookup(gc, vi.GetName())
		if v < 0 {
			return nil, fmt.Errorf("%s: output %q is not produced by any node, input or initializer; the model is not valid ONNX", a.where(gc), vi.GetName())
		}
		gc.outputs = append(gc.outputs, v)
	}
	// The declared types are few; the values may be millions.
	for _, vis := range [2][]*onnxpb.ValueInfoProto{g.ValueInfo, g.Outputs} {
		for _, vi := range vis {
			if vi.Type == nil {
				continue
			}
			v := a.local(gc, vi.GetName())
			if v < 0 {
				continue
			}
			if k := a.values[v].kind; k == kindNode || k == kindInit {
				if dt := typeOf(vi.Type); dt != "" && dt != a.vtyp(v) {
					return nil, fmt.Errorf("%s: %q is declared %s but its producer makes %s; the model is not valid ONNX", a.where(gc), vi.GetName(), dt, a.vtyp(v))
				}
			}
		}
	}
	return gc, nil
}

// declared finds the types the graph's value_info and outputs declare for
// a name, with a map of them made on first use (custom operators need it;
// most graphs never do).
type declared struct {
	a     *analysis
	gc    *graphCtx
	types map[string][]vtype
}

func (d *declared) of(name string) vtype {
	if d.types == nil {
		g := d.gc.g
		d.types = make(map[string][]vtype, len(g.ValueInfo)+len(g.Outputs))
		for _, vis := range [2][]*onnxpb.ValueInfoProto{g.ValueInfo, g.Outputs} {
			for _, vi := range vis {
				if vi.Type != nil {
					d.types[vi.GetName()] = append(d.types[vi.GetName()], typeOf(vi.Type))
				}
			}
		}
	}
	for _, t := range d.types[name] {
		if t != "" {
			return t
		}
	}
	return ""
}

// lookupSchema returns the schema of an operator at the model's opsets and
// whether it is a model-local function, computed once per operator.
func (a *analysis) lookupSchema(opID, domainID uint16) schemaRef {
	k := uint32(opID)<<16 | uint32(domainID)
	if r, ok := a.schemaOf[k]; ok {
		return r
	}
	op, domain := a.m.Sym(opID), a.m.Sym(domainID)
	var r schemaRef
	nd := opschema.NormalizeDomain(domain)
	// Most models define no functions: no lookup then.
	r.isFunc = len(a.funcs) > 0 && a.funcs[[2]string{domain, op}]
	if opset, ok := a.opsets[nd]; ok && !r.isFunc {
		if s, _ := a.table.Lookup(nd, op, opset); s != nil {
			a.schemas = append(a.schemas, s)
			r.schema = uint16(len(a.schemas))
		}
	}
	a.schemaOf[k] = r
	return r
}

// node analyses one node: its inputs, subgraphs and output types.
func (a *analysis) node(gc *graphCtx, n int32, d *declared) error {
	m := a.m
	ni := &a.nodes[n]
	mn := &gc.g.Nodes[ni.idx]
	gi := ni.g
	for k, name := range gc.g.NodeInputs(int(ni.idx)) {
		slot := mn.In + int32(k)
		if name.Len() == 0 {
			gc.ids[slot] = -1
			continue
		}
		v := a.lookup(gc, m.String(name))
		if v < 0 {
			return fmt.Errorf("%s: %s reads %q, which no input, initializer or earlier node defines; the model is not valid ONNX or its nodes are not in order",
				a.where(gc), a.label(n), m.String(name))
		}
		gc.ids[slot] = v
	}
	domain := m.Sym(mn.Domain)
	ref := a.lookupSchema(mn.Op, mn.Domain)
	ni.schema = ref.schema
	s := a.schema(n)
	if s == nil && opschema.NormalizeDomain(domain) == "" && !ref.isFunc {
		return fmt.Errorf("%s: %s is not an ONNX operator at opset %d; the model is not valid ONNX", a.where(gc), a.label(n), a.opsets[""])
	}
	op := a.opOf(n)
	if s != nil && s.Domain == "" && (op == "Constant" || op == "ConstantOfShape") {
		ni.flags |= flagWeight
	}
	// The nodes whose attributes the conversion reads are decoded now,
	// so that a damaged one is an error here, not later.
	// A constant whose value tensor is a view (modelio.Graph.Value) was
	// checked when the model was read.
	if std := opschema.NormalizeDomain(domain) == ""; std && (attrOps[op] || op == "If" || op == "Loop" || op == "Scan") && gc.g.Value(int(ni.idx)) == nil {
		if _, err := gc.g.NodeProto(int(ni.idx)); err != nil {
			return fmt.Errorf("%s: %s: %w; the model is damaged", a.where(gc), a.label(n), err)
		}
	}
	var outTypes []vtype
	var err error
	if opschema.NormalizeDomain(domain) == "" && (op == "If" || op == "Loop" || op == "Scan") {
		ni.flags |= flagCF
		outTypes, err = a.controlFlow(gc, n)
	} else {
		if len(gc.g.Subgraphs[ni.idx]) > 0 {
			return fmt.Errorf("%s: %s has a subgraph; conversion supports subgraphs of If, Loop and Scan only", a.where(gc), a.label(n))
		}
		outTypes, err = a.outputTypes(n)
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", a.where(gc), a.label(n), err)
	}
	for j, name := range gc.g.NodeOutputs(int(ni.idx)) {
		slot := mn.Out() + int32(j)
		if name.Len() == 0 {
			gc.ids[slot] = -1
			continue
		}
		var typ vtype
		if j < len(outTypes) {
			typ = outTypes[j]
		}
		if typ == "" {
			typ = d.of(m.String(name))
		}
		if typ == "" && s == nil {
			return fmt.Errorf("%s: cannot tell the type of %q, output of %s, a custom operator of domain %q; add %q with its type to the graph's value_info (onnx.helper.make_tensor_value_info) and convert again",
				a.where(gc), m.String(name), a.label(n), domain, m.String(name))
		}
		if typ == "" {
			return fmt.Errorf("%s: cannot tell the type of %q, output of %s; record it in the model's value_info (onnx.shape_inference.infer_shapes) and convert again",
				a.where(gc), m.String(name), a.label(n))
		}
		v := a.newValue(value{name: name, typ: a.typeID(typ), kind: kindNode, g: gi, src: n})
		if err := a.define(gc, v); err != nil {
			return err
		}
		gc.ids[slot] = v
	}
	return nil
}

func (a *analysis) isControlFlow(n int32) bool { return a.has(n, flagCF) }

func attrOf(n *onnxpb.NodeProto, name string) *onnxpb.AttributeProto {
	for _, at := range n.Attribute {
		if at.GetName() == name {
			return at
		}
	}
	return nil
}

func (a *analysis) typeAt(vs []int32, i int) vtype {
	if i < len(vs) && vs[i] >= 0 {
		return a.vtyp(vs[i])
	}
	return ""
}

// scanStates returns the number of state values of a Scan node and the
// index of its first state input (1 for Scan-8, whose first input is
// sequence_lens).
func (a *analysis) scanStates(n int32) (states, first int, err error) {
	first = 0
	if s := a.schema(n); s != nil && s.Since < 9 {
		first = 1
	}
	at := attrOf(a.proto(n), "num_scan_inputs")
	if at == nil {
		return 0, 0, fmt.Errorf("Scan has no num_scan_inputs attribute")
	}
	nin := len(a.ins(n))
	states = nin - first - int(at.GetI())
	if states < 0 {
		return 0, 0, fmt.Errorf("Scan has %d inputs but num_scan_inputs is %d", nin, at.GetI())
	}
	return states, first, nil
}

// controlFlow analyses the subgraphs of an If, Loop or Scan node and
// returns its output types.
func (a *analysis) controlFlow(gc *graphCtx, n int32) ([]vtype, error) {
	idx := a.nodes[n].idx
	sub := func(name string, in []vtype) (*graphCtx, error) {
		var sg *modelio.Graph
		for _, s := range gc.g.Subgraphs[idx] {
			if s.Attr == name && s.G != nil {
				sg = s.G
				break
			}
		}
		if sg == nil {
			return nil, fmt.Errorf("it has no %s graph", name)
		}
		s, err := a.build(sg, gc, n, name, in)
		if err != nil {
			return nil, err
		}
		if gc.subs == nil {
			gc.subs = map[int32][]*graphCtx{}
		}
		gc.subs[n] = append(gc.subs[n], s)
		return s, nil
	}
	ins := a.ins(n)
	nout := len(a.outs(n))
	outs := make([]vtype, nout)
	switch a.opOf(n) {
	case "If":
		th, err := sub("then_branch", nil)
		if err != nil {
			return nil, err
		}
		el, err := sub("else_branch", nil)
		if err != nil {
			return nil, err
		}
		if len(th.outputs) != nout || len(el.outputs) != nout {
			return nil, fmt.Errorf("its branches have %d and %d outputs, the node %d", len(th.outputs), len(el.outputs), nout)
		}
		for i := range outs {
			t, e := a.vtyp(th.outputs[i]), a.vtyp(el.outputs[i])
			if t != e {
				return nil, fmt.Errorf("output %d is %s in then_branch but %s in else_branch", i, t, e)
			}
			outs[i] = t
		}
	case "Loop":
		carried := max(len(ins)-2, 0)
		in := []vtype{"tensor(int64)", "tensor(bool)"}
		for i := 0; i < carried; i++ {
			in = append(in, a.typeAt(ins, 2+i))
		}
		body, err := sub("body", in)
		if err != nil {
			return nil, err
		}
		if len(body.inputs) != 2+carried || len(body.outputs) < 1+carried || len(body.outputs)-1 != nout {
			return nil, fmt.Errorf("its body has %d inputs and %d outputs, which do not match the node's %d inputs and %d outputs",
				len(body.inputs), len(body.outputs), len(ins), nout)
		}
		for i := range outs {
			outs[i] = a.vtyp(body.outputs[1+i])
		}
	case "Scan":
		states, first, err := a.scanStates(n)
		if err != nil {
			return nil, err
		}
		var in []vtype
		for i := first; i < len(ins); i++ {
			in = append(in, a.typeAt(ins, i))
		}
		body, err := sub("body", in)
		if err != nil {
			return nil, err
		}
		if len(body.inputs) != len(ins)-first || len(body.outputs) != nout || len(body.outputs) < states {
			return nil, fmt.Errorf("its body has %d inputs and %d outputs, which do not match the node's %d inputs and %d outputs",
				len(body.inputs), len(body.outputs), len(ins), nout)
		}
		for i := range outs {
			outs[i] = a.vtyp(body.outputs[i])
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

// attrOps are the operators whose output types depend on attributes.
var attrOps = map[string]bool{"Cast": true, "Constant": true, "ConstantOfShape": true, "EyeLike": true, "RandomNormalLike": true,
	"RandomUniformLike": true, "Bernoulli": true, "RandomNormal": true, "RandomUniform": true, "Multinomial": true,
	"HannWindow": true, "HammingWindow": true, "BlackmanWindow": true, "MelWeightMatrix": true, "SequenceEmpty": true,
	"Optional": true, "QuantizeLinear": true, "LayerNormalization": true, "DequantizeLinear": true}

// outputTypes infers a node's output types from its inputs, attributes and
// schema. Entries it cannot infer are "", to be taken from value_info.
func (a *analysis) outputTypes(n int32) ([]vtype, error) {
	s := a.schema(n)
	nout := len(a.outs(n))
	// The slice is the analysis' scratch, valid until the next call.
	outs := slices.Grow(a.outTypes[:0], nout)[:nout]
	clear(outs)
	a.outTypes = outs
	if s == nil || nout == 0 {
		return outs, nil // a custom operator or a model-local function: value_info says
	}
	ins := a.ins(n)
	in0 := a.typeAt(ins, 0)
	const undefined = int32(onnxpb.TensorProto_UNDEFINED)
	float := int32(onnxpb.TensorProto_FLOAT)
	op := a.opOf(n)
	if s.Domain == "" && (op == "Constant" || op == "ConstantOfShape") {
		if t := a.value(n); t != nil {
			outs[0] = tensorType(a.initType(t))
			return outs, nil
		}
	}
	if s.Domain == "" && attrOps[op] {
		np := a.proto(n)
		switch op {
		case "Cast":
			dt := dtypeAttr(np, "to", undefined)
			if tensorType(dt) == "" {
				return nil, fmt.Errorf("its 'to' attribute names no known type")
			}
			outs[0] = tensorType(dt)
			return outs, nil
		case "Constant":
			t, err := constantType(np)
			if err != nil {
				return nil, err
			}
			outs[0] = t
			return outs, nil
		case "ConstantOfShape":
			outs[0] = "tensor(float)"
			if at := attrOf(np, "value"); at != nil && at.T != nil {
				outs[0] = tensorType(at.T.GetDataType())
			}
			return outs, nil
		case "EyeLike", "RandomNormalLike", "RandomUniformLike", "Bernoulli":
			if dt := dtypeAttr(np, "dtype", undefined); dt != undefined {
				outs[0] = tensorType(dt)
			} else {
				outs[0] = in0
			}
			return outs, nil
		case "RandomNormal", "RandomUniform":
			outs[0] = tensorType(dtypeAttr(np, "dtype", float))
			return outs, nil
		case "Multinomial":
			outs[0] = tensorType(dtypeAttr(np, "dtype", int32(onnxpb.TensorProto_INT32)))
			return outs, nil
		case "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix":
			outs[0] = tensorType(dtypeAttr(np, "output_datatype", float))
			return outs, nil
		case "SequenceEmpty":
			outs[0] = "seq(" + tensorType(dtypeAttr(np, "dtype", float)) + ")"
			return outs, nil
		case "Optional":
			if in0 != "" {
				outs[0] = "optional(" + in0 + ")"
			} else if at := attrOf(np, "type"); at != nil && typeOf(at.Tp) != "" {
				outs[0] = "optional(" + typeOf(at.Tp) + ")"
			}
			return outs, nil
		case "QuantizeLinear":
			if t := a.typeAt(ins, 2); t != "" {
				outs[0] = t
			} else {
				outs[0] = tensorType(dtypeAttr(np, "output_dtype", int32(onnxpb.TensorProto_UINT8)))
				if outs[0] == "" {
					outs[0] = "tensor(uint8)"
				}
			}
			return outs, nil
		case "LayerNormalization":
			outs[0] = in0
			stash := tensorType(dtypeAttr(np, "stash_type", float))
			for j := 1; j < len(outs); j++ {
				outs[j] = stash
			}
			return outs, nil
		case "DequantizeLinear":
			if dt := dtypeAttr(np, "output_dtype", undefined); dt != undefined {
				outs[0] = tensorType(dt)
				return outs, nil
			}
		}
	}
	if s.Domain == "" {
		switch op {
		case "SequenceConstruct", "SplitToSequence":
			if in0 != "" {
				outs[0] = "seq(" + in0 + ")"
			}
			return outs, nil
		case "SequenceAt", "ConcatFromSequence":
			outs[0] = in0.elem()
			return outs, nil
		case "OptionalGetElement":
			if strings.HasPrefix(string(in0), "optional(") {
				outs[0] = in0.elem()
			} else {
				outs[0] = in0
			}
			return outs, nil
		}
	}
	// The types depend on the schema and the input types alone: nodes
	// alike share one answer.
	key, memo := a.sig(n, false)
	if memo {
		if r, ok := a.boundMemo[key]; ok {
			for j := range outs {
				outs[j] = a.types[r[j]]
			}
			return outs, nil
		}
	}
	for j := range outs {
		p, ok := s.Output(j)
		if !ok {
			return nil, fmt.Errorf("it has %d outputs, more than %s allows", nout, s)
		}
		outs[j] = a.bound(n, p)
	}
	if memo && nout <= len(sigKey{}.t) {
		var r [len(sigKey{}.t)]typeID
		for j := range outs {
			r[j] = a.typeID(outs[j])
		}
		a.boundMemo[key] = r
	}
	return outs, nil
}

// sigKey is a node's signature: its schema and the types of its inputs
// (and, with outputs, of its outputs), for memos of what depends on those
// alone.
type sigKey struct {
	schema    uint16
	nin, nout uint8
	t         [8]typeID
}

// omitted stands for an omitted input or output in a sigKey.
const omitted = typeID(1<<16 - 1)

// sig returns node n's signature; false when it has too many inputs and
// outputs for one.
func (a *analysis) sig(n int32, outputs bool) (sigKey, bool) {
	ins := a.ins(n)
	k := sigKey{schema: a.nodes[n].schema, nin: uint8(len(ins))}
	var outs []int32
	if outputs {
		outs = a.outs(n)
		k.nout = uint8(len(outs))
	} else {
		k.nout = uint8(len(a.outs(n)))
	}
	if len(ins)+len(outs) > len(k.t) {
		return k, false
	}
	for i, v := range ins {
		k.t[i] = omitted
		if v >= 0 {
			k.t[i] = a.values[v].typ
		}
	}
	for j, v := range outs {
		k.t[len(ins)+j] = omitted
		if v >= 0 {
			k.t[len(ins)+j] = a.values[v].typ
		}
	}
	return k, true
}

// bound returns the type a formal output parameter gets from the node's
// inputs: a literal type, the type of an input bound to the same
// constraint, or the constraint's only allowed type.
func (a *analysis) bound(n int32, p opschema.Param) vtype {
	s := a.schema(n)
	if !s.IsConstraint(p.Type) {
		return vtype(p.Type)
	}
	for i, v := range a.ins(n) {
		if v < 0 || a.values[v].typ == 0 {
			continue
		}
		if q, ok := s.Input(i); ok && q.Type == p.Type && (q.Homogeneous || q.Option != opschema.Variadic) {
			return a.vtyp(v)
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

func newAnalysis(m *modelio.Model, target Target, table *opschema.Table, typesOnly bool) *analysis {
	return &analysis{m: m, path: m.Path, target: target, table: table, typesOnly: typesOnly,
		vnotes: map[int32]*valueNote{}, knotes: map[int32]*keepNote{},
		types: []vtype{""}, isFloat: []bool{false}, typeIDs: map[vtype]typeID{"": 0},
		schemaOf: map[uint32]schemaRef{}, seed: maphash.MakeSeed(),
		boundMemo: map[sigKey][8]typeID{}, classMemo: map[sigKey]classResult{}, checked: map[sigKey]bool{}}
}

// analyse builds the analysis of a model: every value with its original
// type, and where each is read.
func analyse(m *modelio.Model, target Target, table *opschema.Table) (*analysis, error) {
	a := newAnalysis(m, target, table, false)
	if err := a.run(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *analysis) run() error {
	if err := a.opsetOf(a.m.Meta); err != nil {
		return err
	}
	if a.m.Graph == nil {
		return fmt.Errorf("the model has no graph")
	}
	nodes := 0
	for i := range a.m.Graph.Nodes {
		nodes += int(a.m.Graph.Nodes[i].NOut)
	}
	// With room for the Casts the rewrite adds, for the check to reuse.
	nv := len(a.m.Graph.Inits) + len(a.m.Graph.Inputs) + nodes
	nn := len(a.m.Graph.Nodes)
	if r := a.reuse; r != nil && cap(r.values) >= nv && cap(r.nodes) >= nn {
		a.values, a.nodes = r.values[:0], r.nodes[:0]
	} else {
		a.values = make([]value, 0, nv+nv/32+64)
		a.nodes = make([]nodeInfo, 0, nn+nn/32+64)
	}
	var err error
	a.main, err = a.build(a.m.Graph, nil, -1, "", nil)
	if err != nil {
		return err
	}
	if !a.typesOnly {
		a.buildUses()
	}
	return nil
}

// buildUses records where each value is read, in one flat slice.
func (a *analysis) buildUses() {
	count := make([]int32, len(a.values)+1)
	for _, gc := range a.graphs {
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			for _, v := range a.ins(n) {
				if v >= 0 {
					count[v+1]++
				}
			}
		}
		for _, v := range gc.outputs {
			count[v+1]++
		}
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	a.uses = make([]use, count[len(count)-1])
	next := make([]int32, len(a.values))
	copy(next, count[:len(a.values)])
	for gi, gc := range a.graphs {
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			for k, v := range a.ins(n) {
				if v >= 0 {
					a.uses[next[v]] = use{n: n, in: int32(k)}
					next[v]++
				}
			}
		}
		for k, v := range gc.outputs {
			a.uses[next[v]] = use{n: ^int32(gi), in: int32(k)}
			next[v]++
		}
	}
	a.useStart = count
}

// names hands out names no value or node of the model has. The value names
// are the analysis' tables; node names are put in a table of node ids on
// first use, and value_info names into the set that then holds the names
// handed out.
type names struct {
	a     *analysis
	nodes nameTable
	other map[string]bool
}

func (n *names) taken(name string) bool {
	a := n.a
	if n.other == nil {
		n.nodes = newNameTable(len(a.nodes), nil)
		size := 0
		for _, gc := range a.graphs {
			size += len(gc.g.ValueInfo)
		}
		n.other = make(map[string]bool, size)
		for _, gc := range a.graphs {
			for _, vi := range gc.g.ValueInfo {
				n.other[vi.GetName()] = true
			}
		}
		for id := range a.nodes {
			n.nodes.insert(a.seed, a.nameOf(int32(id)), int32(id), a.nameOf)
		}
	}
	if n.other[name] {
		return true
	}
	if id, _ := n.nodes.find(a.seed, name, a.nameOf); id >= 0 {
		return true
	}
	for _, gc := range a.graphs {
		if a.local(gc, name) >= 0 {
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
