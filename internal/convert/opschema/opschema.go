// Package opschema holds the type signatures of the standard ONNX operators:
// for every version of every operator in the ai.onnx, ai.onnx.ml and
// ai.onnx.preview.training domains, its formal inputs and outputs and the
// types each type constraint allows.
//
// The table is generated from the onnx Python package's operator schemas by
// gen_schemas.py and embedded in the binary; it is read-only.
package opschema

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

//go:generate python3 gen_schemas.py -o schemas.json

//go:embed schemas.json
var schemasJSON []byte

// Option says how many actual arguments a formal parameter takes.
type Option int

// The options of a formal parameter, with the values ONNX's FormalParameterOption has.
const (
	Single   Option = 0 // exactly one
	Optional Option = 1 // zero or one; an empty name means "not given"
	Variadic Option = 2 // one or more; only the last parameter may be variadic
)

// Param is one formal input or output of an operator.
type Param struct {
	Name string
	// Type is a type constraint name ("T") or a literal type ("tensor(float)").
	Type   string
	Option Option
	// Homogeneous applies to variadic parameters: all actual arguments share one type.
	Homogeneous bool
}

// Schema is the type signature of one operator version.
type Schema struct {
	Domain     string // "" for ai.onnx
	Name       string
	Since      int // the opset version that introduced this signature
	Deprecated bool
	Inputs     []Param
	Outputs    []Param
	// Constraints maps each type constraint name to the types it allows, as
	// ONNX writes them ("tensor(float16)", "seq(tensor(float))").
	Constraints map[string][]string
}

// Allowed returns the types a formal parameter's Type admits: the
// constraint's list, or the literal type alone.
func (s *Schema) Allowed(paramType string) []string {
	if types, ok := s.Constraints[paramType]; ok {
		return types
	}
	return []string{paramType}
}

// IsConstraint reports whether paramType names one of the schema's type
// constraints rather than a literal type.
func (s *Schema) IsConstraint(paramType string) bool {
	_, ok := s.Constraints[paramType]
	return ok
}

// Admits reports whether a formal parameter's Type admits the type t.
func (s *Schema) Admits(paramType, t string) bool {
	for _, a := range s.Allowed(paramType) {
		if a == t {
			return true
		}
	}
	return false
}

// Input returns the formal input that actual input i binds to, following a
// trailing variadic parameter; ok is false past the last formal input.
func (s *Schema) Input(i int) (p Param, ok bool) {
	return formal(s.Inputs, i)
}

// Output is Input for outputs.
func (s *Schema) Output(i int) (p Param, ok bool) {
	return formal(s.Outputs, i)
}

func formal(ps []Param, i int) (Param, bool) {
	switch {
	case i < 0 || len(ps) == 0:
		return Param{}, false
	case i < len(ps):
		return ps[i], true
	case ps[len(ps)-1].Option == Variadic:
		return ps[len(ps)-1], true
	default:
		return Param{}, false
	}
}

// String names the schema as "Op-v13" or "domain.Op-v1".
func (s *Schema) String() string {
	if s.Domain == "" {
		return fmt.Sprintf("%s-v%d", s.Name, s.Since)
	}
	return fmt.Sprintf("%s.%s-v%d", s.Domain, s.Name, s.Since)
}

// Table is the set of operator schemas. Its methods may be called from any
// goroutine.
type Table struct {
	// ONNX is the onnx release the table was generated from.
	ONNX string
	// Newest maps each domain to the newest opset version the table knows.
	Newest map[string]int
	byOp   map[opKey][]*Schema // ascending Since
	names  map[string]bool     // operator names in any domain
}

type opKey struct{ domain, name string }

// NormalizeDomain maps "ai.onnx" to "", the spelling ONNX files use for the
// default domain.
func NormalizeDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// Lookup returns the version of domain's operator op in effect at the given
// opset version: the one with the greatest Since not above opset.
func (t *Table) Lookup(domain, op string, opset int) (*Schema, bool) {
	versions := t.byOp[opKey{NormalizeDomain(domain), op}]
	i := sort.Search(len(versions), func(i int) bool { return versions[i].Since > opset })
	if i == 0 {
		return nil, false
	}
	return versions[i-1], true
}

// Versions returns every version of domain's operator op, oldest first.
// The slice belongs to the table and must not be changed.
func (t *Table) Versions(domain, op string) []*Schema {
	return t.byOp[opKey{NormalizeDomain(domain), op}]
}

// Known reports whether any domain defines an operator named op.
func (t *Table) Known(op string) bool { return t.names[op] }

// Default returns the embedded table, parsed on first use.
func Default() *Table {
	t, err := loadDefault()
	if err != nil {
		// The table is embedded at build time and checked by this package's tests.
		panic(fmt.Sprintf("opschema: embedded table is damaged: %v", err))
	}
	return t
}

var loadDefault = sync.OnceValues(func() (*Table, error) { return Parse(schemasJSON) })

// Parse reads a table in the format gen_schemas.py writes.
func Parse(data []byte) (*Table, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("parsing operator table: empty")
	}
	var head struct {
		ONNX  string         `json:"onnx"`
		Opset map[string]int `json:"opset"`
	}
	if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
		return nil, fmt.Errorf("parsing operator table header: %w", err)
	}
	t := &Table{ONNX: head.ONNX, Newest: head.Opset, byOp: map[opKey][]*Schema{}, names: map[string]bool{}}
	line := 1
	for sc.Scan() {
		line++
		var row struct {
			D string              `json:"d"`
			N string              `json:"n"`
			V int                 `json:"v"`
			X int                 `json:"x"`
			I [][]json.RawMessage `json:"i"`
			O [][]json.RawMessage `json:"o"`
			C map[string][]string `json:"c"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("parsing operator table line %d: %w", line, err)
		}
		in, err := params(row.I)
		if err != nil {
			return nil, fmt.Errorf("parsing operator table line %d (%s): %w", line, row.N, err)
		}
		out, err := params(row.O)
		if err != nil {
			return nil, fmt.Errorf("parsing operator table line %d (%s): %w", line, row.N, err)
		}
		s := &Schema{Domain: row.D, Name: row.N, Since: row.V, Deprecated: row.X != 0, Inputs: in, Outputs: out, Constraints: row.C}
		for _, p := range append(append([]Param(nil), in...), out...) {
			if !s.IsConstraint(p.Type) && !strings.Contains(p.Type, "(") {
				return nil, fmt.Errorf("parsing operator table line %d: %s uses undefined constraint %q", line, s, p.Type)
			}
		}
		k := opKey{row.D, row.N}
		t.byOp[k] = append(t.byOp[k], s)
		t.names[row.N] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parsing operator table: %w", err)
	}
	for _, vs := range t.byOp {
		sort.Slice(vs, func(i, j int) bool { return vs[i].Since < vs[j].Since })
	}
	return t, nil
}

func params(rows [][]json.RawMessage) ([]Param, error) {
	ps := make([]Param, 0, len(rows))
	for _, r := range rows {
		if len(r) != 4 {
			return nil, fmt.Errorf("parameter has %d fields, want 4", len(r))
		}
		var p Param
		var opt, homo int
		for i, dst := range []any{&p.Name, &p.Type, &opt, &homo} {
			if err := json.Unmarshal(r[i], dst); err != nil {
				return nil, fmt.Errorf("parameter field %d: %w", i, err)
			}
		}
		p.Option, p.Homogeneous = Option(opt), homo != 0
		ps = append(ps, p)
	}
	return ps, nil
}
