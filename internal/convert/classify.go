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
}

func newClassifier(a *analysis, opts Options) (*classifier, error) {
	c := &classifier{a: a, opts: opts, keepOps: map[string]bool{}, keepNodes: map[string]bool{}, keep: map[string]bool{}}
	if len(opts.KeepOps)+len(opts.KeepNodes)+len(opts.Keep) == 0 {
		return c, nil // no sets of every name and operator to build
	}
	used := map[string]bool{}
	nodes := map[string]bool{}
	for _, gc := range a.graphs {
		for _, ni := range gc.nodes {
			used[ni.n.GetOpType()] = true
			if ni.n.GetName() != "" {
				nodes[ni.n.GetName()] = true
			}
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

func isWeightNode(ni *nodeInfo) bool {
	if ni.schema == nil || ni.schema.Domain != "" {
		return false
	}
	op := ni.n.GetOpType()
	return op == "Constant" || op == "ConstantOfShape"
}

func (c *classifier) graph(gc *graphCtx, forced string) {
	for _, ni := range gc.nodes {
		c.node(ni, forced)
	}
}

func (ni *nodeInfo) setKeep(reason, detail string) {
	if ni.keep == "" {
		ni.keep, ni.detail = reason, detail
	}
}

// node decides whether a node runs in the target type and which of its
// inputs and outputs change type.
func (c *classifier) node(ni *nodeInfo, forced string) {
	flags := make([]bool, len(ni.ins)+len(ni.outs))
	ni.wantIn, ni.outLow = flags[:len(ni.ins):len(ni.ins)], flags[len(ni.ins):]
	for _, vs := range [2][]*value{ni.ins, ni.outs} {
		for _, v := range vs {
			if v != nil && v.typ.isFloat() {
				ni.float = true
			}
		}
	}
	op := ni.n.GetOpType()
	std := ni.schema != nil && ni.schema.Domain == ""
	switch {
	case forced != "":
		ni.setKeep(ReasonKeptParent, forced)
	case c.keepNodes[ni.n.GetName()]:
		ni.setKeep(ReasonKeepNodes, "named in --keep-fp32-nodes")
	case c.keepOps[op]:
		ni.setKeep(ReasonKeepOps, "operator named in --keep-fp32-ops")
	case c.keep[ni.n.GetName()] && ni.n.GetName() != "":
		ni.setKeep(ReasonKeep, "node named in --keep-fp32")
	case c.keep[op]:
		ni.setKeep(ReasonKeep, "operator named in --keep-fp32")
	case std && !c.opts.NoDefaultKeepOps && DefaultKeepReason(op) != "":
		ni.setKeep(ReasonDefault, DefaultKeepReason(op))
	}
	for _, v := range ni.ins {
		if v != nil && v.overflow != "" {
			ni.setKeep(ReasonOverflow, fmt.Sprintf("reads %q, %s", v.name, v.overflow))
		}
	}
	if isControlFlow(ni) {
		c.controlFlow(ni)
		return
	}
	if !ni.float {
		return
	}
	switch {
	case ni.schema == nil:
		ni.setKeep(ReasonNoSchema, "custom operator or model-local function: its accepted types are unknown")
	case ni.schema.Domain == "ai.onnx.preview.training":
		ni.setKeep(ReasonNoSchema, "training operator")
	}
	if ni.keep != "" {
		return
	}
	c.constraints(ni)
	if std && op == "Cast" && ni.low {
		c.cast(ni)
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
func (c *classifier) cast(ni *nodeInfo) {
	target := tensorType(int32(c.a.target.dataType()))
	if tensorType(dtypeAttr(ni.n, "to", 0)) == target {
		// It reads its input in the type the input ends up with, and
		// becomes an Identity if that is the target type.
		ni.follow = true
		for i := range ni.wantIn {
			ni.wantIn[i] = false
		}
	}
	if len(ni.ins) == 0 || ni.ins[0] == nil || ni.ins[0].typ != target || len(ni.outs) == 0 || ni.outs[0] == nil || !ni.outs[0].typ.isFloat() {
		return
	}
	for _, u := range ni.outs[0].uses {
		if u.n == nil && !c.required(u.g, ni.outs[0]) {
			ni.outLow[0] = false
			return
		}
	}
}

func (c *classifier) controlFlow(ni *nodeInfo) {
	if ni.keep != "" {
		for _, sub := range ni.subs {
			c.graph(sub, fmt.Sprintf("inside %s, which stays in float32", ni.label()))
		}
	} else {
		ni.low = true
		for _, sub := range ni.subs {
			c.graph(sub, "")
		}
	}
	first := 0
	switch ni.n.GetOpType() {
	case "Loop":
		first = 2
	case "Scan":
		_, first, _ = scanStates(ni)
	case "If":
		first = len(ni.ins)
	}
	for i, v := range ni.ins {
		ni.wantIn[i] = ni.low && i >= first && v != nil && v.typ.isFloat()
	}
	for j, v := range ni.outs {
		ni.outLow[j] = ni.low && v != nil && v.typ.isFloat()
	}
}

// constraints decides a node by its schema: a type constraint bound to a
// float32 type converts when it admits the target type.
func (c *classifier) constraints(ni *nodeInfo) {
	s, target := ni.schema, c.a.target
	// A node binds a handful of type constraints: slices, kept sorted by
	// name, cost less than a map per node.
	type bound struct {
		name string
		typ  vtype
	}
	var bindingArr [4]bound
	binding := bindingArr[:0]
	bind := func(p opschema.Param, ok bool, v *value) {
		if !ok || v == nil || !s.IsConstraint(p.Type) || (p.Option == opschema.Variadic && !p.Homogeneous) {
			return
		}
		i := 0
		for i < len(binding) && binding[i].name < p.Type {
			i++
		}
		if i < len(binding) && binding[i].name == p.Type {
			return
		}
		binding = slices.Insert(binding, i, bound{p.Type, v.typ})
	}
	for i, v := range ni.ins {
		p, ok := s.Input(i)
		bind(p, ok, v)
	}
	for j, v := range ni.outs {
		p, ok := s.Output(j)
		bind(p, ok, v)
	}
	ni.conv = ni.conv[:0]
	var why []string
	for _, bd := range binding {
		name, b := bd.name, bd.typ
		if !b.isFloat() {
			continue
		}
		switch {
		case fixedConstraints[ni.n.GetOpType()] == name && s.Domain == "":
			why = append(why, fmt.Sprintf("%s of %s is set by an attribute", name, s))
		case s.Admits(name, string(b.lower(target))):
			ni.conv = append(ni.conv, name)
		default:
			why = append(why, fmt.Sprintf("%s has no %s for %s", s, b.lower(target), name))
		}
	}
	lit := func(p opschema.Param, ok bool, v *value, kind string) {
		if ok && v != nil && v.typ.isFloat() && !s.IsConstraint(p.Type) {
			why = append(why, fmt.Sprintf("%s %q of %s is %s only", kind, p.Name, s, p.Type))
		}
	}
	for i, v := range ni.ins {
		p, ok := s.Input(i)
		lit(p, ok, v, "input")
		ni.wantIn[i] = ok && v != nil && v.typ.isFloat() && slices.Contains(ni.conv, p.Type)
	}
	for j, v := range ni.outs {
		p, ok := s.Output(j)
		lit(p, ok, v, "output")
		ni.outLow[j] = ok && v != nil && v.typ.isFloat() && slices.Contains(ni.conv, p.Type)
	}
	if len(ni.conv) == 0 {
		ni.setKeep(ReasonTypes, strings.Join(why, "; "))
		return
	}
	ni.low = true
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
func (c *classifier) required(gc *graphCtx, v *value) bool {
	if !v.typ.isFloat() {
		return false
	}
	if gc.owner == nil {
		return c.opts.ConvertIO
	}
	return gc.owner.low
}

func (c *classifier) wants(u use, v *value) bool {
	if u.n == nil {
		return c.required(u.g, v)
	}
	return u.n.wantIn[u.in]
}

// weightLowered decides a weight: it converts unless its values overflow,
// it is kept by the lists, or some reader needs float32. It returns the
// reason when it stays.
func (c *classifier) weightLowered(v *value, keptNode *nodeInfo) (bool, string, string) {
	if v.overflow != "" {
		return false, ReasonOverflow, v.overflow
	}
	if keptNode != nil && keptNode.keep != "" {
		return false, keptNode.keep, keptNode.detail
	}
	var readers []string
	for _, u := range v.uses {
		if c.wants(u, v) {
			continue
		}
		switch {
		case u.n != nil:
			readers = append(readers, u.n.label())
		default:
			readers = append(readers, fmt.Sprintf("output %q of the %s", v.name, u.g.where()))
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
	for _, gc := range c.a.graphs {
		for _, v := range gc.inputs {
			switch v.kind {
			case kindInput:
				v.lowered = c.opts.ConvertIO && v.typ.isFloat()
			case kindSubInput:
				v.lowered = gc.owner.low && v.typ.isFloat()
			}
		}
		// In file order: sorting every name of a large graph costs more
		// than the decisions, which do not depend on order.
		for i, t := range gc.g.Initializer {
			if v := gc.initValues[i]; v != nil && v.kind == kindInit && v.init == t && v.typ.isFloat() {
				v.lowered, v.keep, v.detail = c.weightLowered(v, nil)
			}
		}
		for _, ni := range gc.nodes {
			if ni.weight {
				if len(ni.outs) == 1 && ni.outs[0] != nil && ni.outs[0].typ.isFloat() {
					low, reason, detail := c.weightLowered(ni.outs[0], ni)
					ni.low, ni.outLow[0] = low, low
					if !low {
						ni.keep, ni.detail = reason, detail
					}
				}
			}
			for j, v := range ni.outs {
				if v != nil {
					v.lowered = ni.outLow[j]
				}
			}
		}
	}
}
