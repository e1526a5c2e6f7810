package convert

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/trtbuild/trtbuild/internal/convert/opschema"
)

// Reasons a node or a weight stays in float32, as the summary names them.
const (
	ReasonKeepNodes  = "keep-fp32-nodes"  // named by Options.KeepNodes
	ReasonKeepOps    = "keep-fp32-ops"    // its operator is in Options.KeepOps
	ReasonKeep       = "keep-fp32"        // its name or operator is in Options.Keep
	ReasonDefault    = "default-list"     // its operator is on the default list
	ReasonOverflow   = "overflow"         // it reads, or is, a weight whose values overflow the target type
	ReasonTypes      = "type-restricted"  // the operator's schema accepts no target-type values
	ReasonNoSchema   = "no-schema"        // a custom operator, function or training operator
	ReasonKeptParent = "inside-kept-node" // inside the subgraph of a kept If, Loop or Scan
	ReasonConsumers  = "float32-readers"  // a weight read by nodes that stay in float32
)

// fixedConstraints are type constraints set by an attribute rather than by
// the inputs; conversion leaves them as they are.
var fixedConstraints = map[string]string{
	"LayerNormalization": "U", // stash_type
}

type classifier struct {
	a         *analysis
	opts      Options
	keepOps   map[string]bool
	keepNodes map[string]bool
	// keep holds the names and operator types of Options.Keep.
	keep map[string]bool
	// conv is constraints' scratch list of the type constraints a node
	// converts, reused from node to node.
	conv []string
}

func newClassifier(a *analysis, opts Options) (*classifier, error) {
	c := &classifier{a: a, opts: opts, keepOps: map[string]bool{}, keepNodes: map[string]bool{}, keep: map[string]bool{}}
	if len(opts.KeepOps)+len(opts.KeepNodes)+len(opts.Keep) == 0 {
		return c, nil // no sets of every name and operator to build
	}
	used := map[string]bool{}
	nodes := map[string]bool{}
	for n := range a.nodes {
		used[a.opOf(int32(n))] = true
		if name := a.nameOf(int32(n)); name != "" {
			nodes[name] = true
		}
	}
	for _, op := range opts.KeepOps {
		op = strings.TrimSpace(op)
		if op == "" {
			continue
		}
		if !used[op] && !a.table.Known(op) {
			return nil, fmt.Errorf("--keep-fp32-ops: %q is not an ONNX operator and no node of the model uses it; operator names are case-sensitive (Softmax, LayerNormalization)", op)
		}
		c.keepOps[op] = true
	}
	var missing []string
	for _, n := range opts.KeepNodes {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !nodes[n] {
			missing = append(missing, n)
		}
		c.keepNodes[n] = true
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("--keep-fp32-nodes: the model has no node named %s; list node names with trtbuild inspect", quoteList(missing))
	}
	for _, k := range opts.Keep {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if !nodes[k] && !used[k] && !a.table.Known(k) {
			missing = append(missing, k)
		}
		c.keep[k] = true
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("--keep-fp32: %s is neither the name of a node of the model nor an operator type; names and operators are case-sensitive (Softmax, /head/MatMul): list them with trtbuild inspect --json", quoteList(missing))
	}
	return c, nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

func (c *classifier) graph(gc *graphCtx, forced string) {
	for n := gc.n0; n < gc.n0+gc.nn; n++ {
		c.node(n, forced)
	}
}

// node decides whether a node runs in the target type and which of its
// inputs and outputs change type.
func (c *classifier) node(n int32, forced string) {
	a := c.a
	ins, outs := a.ins(n), a.outs(n)
	for _, vs := range [2][]int32{ins, outs} {
		for _, v := range vs {
			if v >= 0 && a.vfloat(v) {
				a.nodes[n].flags |= flagFloat
			}
		}
	}
	op := a.opOf(n)
	s := a.schema(n)
	std := s != nil && s.Domain == ""
	// The name is needed only when a list names nodes.
	name := ""
	if len(c.keepNodes)+len(c.keep) > 0 {
		name = a.nameOf(n)
	}
	switch {
	case forced != "":
		a.setKeep(n, ReasonKeptParent, forced)
	case len(c.keepNodes) > 0 && c.keepNodes[name]:
		a.setKeep(n, ReasonKeepNodes, "named in --keep-fp32-nodes")
	case c.keepOps[op]:
		a.setKeep(n, ReasonKeepOps, "operator named in --keep-fp32-ops")
	case name != "" && c.keep[name]:
		a.setKeep(n, ReasonKeep, "node named in --keep-fp32")
	case c.keep[op]:
		a.setKeep(n, ReasonKeep, "operator named in --keep-fp32")
	case std && !c.opts.NoDefaultKeepOps && DefaultKeepReason(op) != "":
		a.setKeep(n, ReasonDefault, DefaultKeepReason(op))
	}
	if len(a.vnotes) > 0 {
		for _, v := range ins {
			if v >= 0 && a.overflow(v) != "" {
				a.setKeep(n, ReasonOverflow, fmt.Sprintf("reads %q, %s", a.vname(v), a.overflow(v)))
			}
		}
	}
	if a.isControlFlow(n) {
		c.controlFlow(n)
		return
	}
	if !a.has(n, flagFloat) {
		return
	}
	switch {
	case s == nil:
		a.setKeep(n, ReasonNoSchema, "custom operator or model-local function: its accepted types are unknown")
	case s.Domain == "ai.onnx.preview.training":
		a.setKeep(n, ReasonNoSchema, "training operator")
	}
	if a.keep(n) != "" {
		return
	}
	c.constraints(n)
	if std && op == "Cast" && a.has(n, flagLow) {
		c.cast(n)
	}
}

// cast keeps a converted Cast from becoming a cast of the target type to
// itself, and from adding a second Cast beside it. A Cast to the target
// type reads its input as it comes: it converts a float32 input itself,
// and becomes an Identity when its input is converted too. A
// Cast from the target type to float32 that makes a float32 output of the
// graph stays as it is: it is the model's own boundary, as in a model
// already converted with its inputs and outputs kept. (A Cast whose input
// arrives in the target type and whose output is converted becomes an
// Identity when the model is rewritten; see rewriter.edit.)
func (c *classifier) cast(n int32) {
	a := c.a
	target := tensorType(int32(a.target.dataType()))
	if tensorType(dtypeAttr(a.proto(n), "to", 0)) == target {
		// It reads its input in the type the input ends up with, and
		// becomes an Identity if that is the target type.
		a.set(n, flagFollow, true)
		w := a.wantIn(n)
		for i := range w {
			w[i] = false
		}
	}
	ins, outs := a.ins(n), a.outs(n)
	if len(ins) == 0 || ins[0] < 0 || a.vtyp(ins[0]) != target || len(outs) == 0 || outs[0] < 0 || !a.vfloat(outs[0]) {
		return
	}
	for _, u := range a.usesOf(outs[0]) {
		if u.n < 0 && !c.required(a.useGraph(u), outs[0]) {
			a.outLow(n)[0] = false
			return
		}
	}
}

func (c *classifier) controlFlow(n int32) {
	a := c.a
	if a.keep(n) != "" {
		for _, sub := range a.subs(n) {
			c.graph(sub, fmt.Sprintf("inside %s, which stays in float32", a.label(n)))
		}
	} else {
		a.set(n, flagLow, true)
		for _, sub := range a.subs(n) {
			c.graph(sub, "")
		}
	}
	ins, outs := a.ins(n), a.outs(n)
	first := 0
	switch a.opOf(n) {
	case "Loop":
		first = 2
	case "Scan":
		_, first, _ = a.scanStates(n)
	case "If":
		first = len(ins)
	}
	low := a.has(n, flagLow)
	for i, v := range ins {
		a.wantIn(n)[i] = low && i >= first && v >= 0 && a.vfloat(v)
	}
	for j, v := range outs {
		a.outLow(n)[j] = low && v >= 0 && a.vfloat(v)
	}
}

// classResult is what constraints decides for a node signature.
type classResult struct {
	wantIn, outLow uint8 // bit i: input (output) i
	low            bool
	why            string
}

// constraints decides a node by its schema: a type constraint bound to a
// float32 type converts when it admits the target type.
func (c *classifier) constraints(n int32) {
	a := c.a
	// The decision depends on the schema and the types alone (the op type
	// is the schema's): nodes alike share it.
	key, memo := a.sig(n, true)
	if memo {
		if r, ok := a.classMemo[key]; ok {
			wantIn, outLow := a.wantIn(n), a.outLow(n)
			for i := range wantIn {
				wantIn[i] = r.wantIn&(1<<i) != 0
			}
			for j := range outLow {
				outLow[j] = r.outLow&(1<<j) != 0
			}
			if r.low {
				a.set(n, flagLow, true)
			} else {
				a.setKeep(n, ReasonTypes, r.why)
			}
			return
		}
		defer func() {
			var r classResult
			for i, w := range a.wantIn(n) {
				if w {
					r.wantIn |= 1 << i
				}
			}
			for j, w := range a.outLow(n) {
				if w {
					r.outLow |= 1 << j
				}
			}
			r.low = a.has(n, flagLow)
			if !r.low {
				r.why = a.detail(n)
			}
			a.classMemo[key] = r
		}()
	}
	s, target := a.schema(n), a.target
	ins, outs := a.ins(n), a.outs(n)
	// A node binds a handful of type constraints: slices, kept sorted by
	// name, cost less than a map per node.
	type bound struct {
		name string
		typ  vtype
	}
	var bindingArr [4]bound
	binding := bindingArr[:0]
	bind := func(p opschema.Param, ok bool, v int32) {
		if !ok || v < 0 || !s.IsConstraint(p.Type) || (p.Option == opschema.Variadic && !p.Homogeneous) {
			return
		}
		i := 0
		for i < len(binding) && binding[i].name < p.Type {
			i++
		}
		if i < len(binding) && binding[i].name == p.Type {
			return
		}
		binding = slices.Insert(binding, i, bound{p.Type, a.vtyp(v)})
	}
	for i, v := range ins {
		p, ok := s.Input(i)
		bind(p, ok, v)
	}
	for j, v := range outs {
		p, ok := s.Output(j)
		bind(p, ok, v)
	}
	conv := c.conv[:0]
	defer func() { c.conv = conv[:0] }()
	var why []string
	for _, bd := range binding {
		name, b := bd.name, bd.typ
		if !b.isFloat() {
			continue
		}
		switch {
		case fixedConstraints[a.opOf(n)] == name && s.Domain == "":
			why = append(why, fmt.Sprintf("%s of %s is set by an attribute", name, s))
		case s.Admits(name, string(b.lower(target))):
			conv = append(conv, name)
		default:
			why = append(why, fmt.Sprintf("%s has no %s for %s", s, b.lower(target), name))
		}
	}
	lit := func(p opschema.Param, ok bool, v int32, kind string) {
		if ok && v >= 0 && a.vfloat(v) && !s.IsConstraint(p.Type) {
			why = append(why, fmt.Sprintf("%s %q of %s is %s only", kind, p.Name, s, p.Type))
		}
	}
	wantIn, outLow := a.wantIn(n), a.outLow(n)
	for i, v := range ins {
		p, ok := s.Input(i)
		lit(p, ok, v, "input")
		wantIn[i] = ok && v >= 0 && a.vfloat(v) && slices.Contains(conv, p.Type)
	}
	for j, v := range outs {
		p, ok := s.Output(j)
		lit(p, ok, v, "output")
		outLow[j] = ok && v >= 0 && a.vfloat(v) && slices.Contains(conv, p.Type)
	}
	if len(conv) == 0 {
		a.setKeep(n, ReasonTypes, strings.Join(why, "; "))
		return
	}
	a.set(n, flagLow, true)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// required reports whether a graph output must have the target type: the
// main graph's with Options.ConvertIO, a subgraph's when its node converts.
func (c *classifier) required(gc *graphCtx, v int32) bool {
	if !c.a.vfloat(v) {
		return false
	}
	if gc.owner < 0 {
		return c.opts.ConvertIO
	}
	return c.a.has(gc.owner, flagLow)
}

func (c *classifier) wants(u use, v int32) bool {
	if u.n < 0 {
		return c.required(c.a.useGraph(u), v)
	}
	return c.a.wantIn(u.n)[u.in]
}

// weightLowered decides a weight: it converts unless its values overflow,
// it is kept by the lists, or some reader needs float32. It returns the
// reason when it stays. keptNode is the Constant node making it, or -1.
func (c *classifier) weightLowered(v int32, keptNode int32) (bool, string, string) {
	a := c.a
	if a.overflow(v) != "" {
		return false, ReasonOverflow, a.overflow(v)
	}
	if keptNode >= 0 && a.keep(keptNode) != "" {
		return false, a.keep(keptNode), a.detail(keptNode)
	}
	var readers []string
	for _, u := range a.usesOf(v) {
		if c.wants(u, v) {
			continue
		}
		switch {
		case u.n >= 0:
			readers = append(readers, a.label(u.n))
		default:
			readers = append(readers, fmt.Sprintf("output %q of the %s", a.vname(v), a.where(a.useGraph(u))))
		}
	}
	if len(readers) > 0 {
		sort.Strings(readers)
		readers = compact(readers)
		if len(readers) > 3 {
			readers = append(readers[:3], fmt.Sprintf("%d more", len(readers)-3))
		}
		return false, ReasonConsumers, "read in float32 by " + strings.Join(readers, ", ")
	}
	return true, "", ""
}

func compact(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// decide sets every value's new type after all nodes are classified.
func (c *classifier) decide() {
	a := c.a
	for _, gc := range a.graphs {
		for _, v := range gc.inputs {
			switch a.values[v].kind {
			case kindInput:
				a.values[v].lowered = c.opts.ConvertIO && a.vfloat(v)
			case kindSubInput:
				a.values[v].lowered = a.has(gc.owner, flagLow) && a.vfloat(v)
			}
		}
		// In file order: sorting every name of a large graph costs more
		// than the decisions, which do not depend on order.
		for i, v := range gc.initValues {
			if v >= 0 && a.values[v].kind == kindInit && a.values[v].src == int32(i) && a.vfloat(v) {
				low, reason, detail := c.weightLowered(v, -1)
				a.values[v].lowered = low
				if reason != "" || detail != "" || a.vnotes[v] != nil {
					nt := a.notes(v)
					nt.keep, nt.detail = reason, detail
				}
			}
		}
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			outs := a.outs(n)
			if a.has(n, flagWeight) {
				if len(outs) == 1 && outs[0] >= 0 && a.vfloat(outs[0]) {
					low, reason, detail := c.weightLowered(outs[0], n)
					a.set(n, flagLow, low)
					a.outLow(n)[0] = low
					if !low {
						a.knotes[n] = &keepNote{reason: reason, detail: detail}
					}
				}
			}
			outLow := a.outLow(n)
			for j, v := range outs {
				if v >= 0 {
					a.values[v].lowered = outLow[j]
				}
			}
		}
	}
}
