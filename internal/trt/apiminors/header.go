package apiminors

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Header is what a set of C++ headers declares at namespace and class scope, by qualified
// name (nvinfer1::apiv::VBuilder): classes with their members in declaration order, enums with
// their values, and type aliases. Function bodies are kept only as far as a forwarding call
// (mImpl->setFlag(...)) goes.
type Header struct {
	Classes map[string]*Class
	Enums   map[string]*Enum
	// Aliases maps "nvinfer1::IErrorRecorder" to what `using IErrorRecorder = ...;` in
	// namespace nvinfer1 names, as written ("v_1_0::IErrorRecorder").
	Aliases map[string]string
}

// Class is one class or struct definition.
type Class struct {
	Name  string   // qualified
	Bases []string // as written, without access specifiers
	// Members are its member functions, in declaration order, constructors left out.
	Members []Member
	// Fields are its non-static data members, normalized ("apiv::VBuilder* mImpl").
	Fields []string
	// Conditional is true when a preprocessor conditional sits inside the body: every branch
	// was read, so the member list cannot be trusted.
	Conditional bool
	File        string // the header that defines it
}

// Member is one member function.
type Member struct {
	Name string // "setFlag"; "~" for the destructor; "operator=" and the like
	// Params is the normalized parameter types and qualifiers, "(BuilderFlag) const": what an
	// override matches and what tells overloads apart.
	Params string
	// Sig is the normalized declaration without names, defaults, attributes, noexcept or
	// virt-specifiers: "void setFlag(BuilderFlag)". Two declarations with one Sig occupy a
	// vtable slot alike.
	Sig      string
	NParams  int  // how many parameters it takes
	Virtual  bool // declared virtual or override (a match of a base's virtual is found later)
	Override bool // declared override
	Static   bool
	Forward  *Forward // the call an inline body forwards to, if any
	// Pure is true for a pure virtual declaration (= 0).
	Pure bool
	// Decl is the declaration as the header spells its types, without parameter names,
	// default arguments, attributes, virt-specifiers or noexcept, what an override is
	// declared with: "nvinfer1::ITensor const* getLayerOutputTensor(char const*, int64_t)".
	// Returns is its return type as spelled ("void", "IPluginRegistry&"); both are empty for
	// a destructor.
	Decl, Returns string
}

// Forward is the call of a public class's inline method body to its implementation object:
// `return mImpl->setFlag(flag);` is {Field: "mImpl", Method: "setFlag", Args: 1}.
type Forward struct {
	Field, Method string
	Args          int
}

// Enum is one enum definition.
type Enum struct {
	Name   string
	Values []Enumerator
	File   string // the header that defines it
}

// Enumerator is one enumerator and its value: a decimal number where the initializer could be
// evaluated, else the initializer's normalized text.
type Enumerator struct {
	Name, Value string
}

// NewHeader returns an empty Header to Add files to.
func NewHeader() *Header {
	return &Header{Classes: map[string]*Class{}, Enums: map[string]*Enum{}, Aliases: map[string]string{}}
}

// Add parses one header file (name is for messages) into h. A class or enum defined again is
// an error.
func (h *Header) Add(name, src string) error {
	s, err := scan(src)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{h: h, s: s, file: name}
	if err := p.scope(0, len(s.toks), nil); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, b := range p.bodies {
		b.c.Members[b.member].Forward = p.forward(b.c, b.start, b.end)
	}
	return nil
}

type parser struct {
	h      *Header
	s      scanned
	file   string
	bodies []body // inline member function bodies, for their forwarding calls
}

// body is the token range of one inline member function's body.
type body struct {
	c          *Class
	member     int
	start, end int
}

func (p *parser) tok(i int) string {
	if i < 0 || i >= len(p.s.toks) {
		return ""
	}
	return p.s.toks[i].text
}

func (p *parser) errAt(i int, format string, args ...any) error {
	pos := 0
	if i < len(p.s.toks) {
		pos = p.s.toks[i].pos
	}
	return fmt.Errorf("offset %d: %s", pos, fmt.Sprintf(format, args...))
}

func qualify(ns []string, name string) string {
	return strings.Join(append(append([]string(nil), ns...), name), "::")
}

// scope reads the declarations of a namespace (or the file) in toks[i:end].
func (p *parser) scope(i, end int, ns []string) error {
	for i < end {
		switch p.tok(i) {
		case ";":
			i++
		case "namespace":
			j := i + 1
			var name []string
			for j < end && p.tok(j) != "{" && p.tok(j) != "=" && p.tok(j) != ";" {
				if p.tok(j) != "::" {
					name = append(name, p.tok(j))
				}
				j++
			}
			if p.tok(j) != "{" {
				i = p.skipDecl(i, end) // a namespace alias
				continue
			}
			close, err := closing(p.s.toks, j)
			if err != nil {
				return err
			}
			if err := p.scope(j+1, close, append(append([]string(nil), ns...), name...)); err != nil {
				return err
			}
			i = close + 1
		case "extern":
			if strings.HasPrefix(p.tok(i+1), `"`) && p.tok(i+2) == "{" {
				close, err := closing(p.s.toks, i+2)
				if err != nil {
					return err
				}
				if err := p.scope(i+3, close, ns); err != nil {
					return err
				}
				i = close + 1
				continue
			}
			i = p.skipDecl(i, end)
		case "template":
			next, err := p.skipTemplate(i, end)
			if err != nil {
				return err
			}
			i = next
		case "class", "struct", "union":
			next, err := p.classDecl(i, end, ns)
			if err != nil {
				return err
			}
			i = next
		case "enum":
			next, err := p.enumDecl(i, end, ns)
			if err != nil {
				return err
			}
			i = next
		case "using":
			if p.tok(i+1) != "namespace" && isIdent(p.tok(i+1)) && p.tok(i+2) == "=" {
				j := i + 3
				var target []string
				for j < end && p.tok(j) != ";" {
					target = append(target, p.tok(j))
					j++
				}
				p.h.Aliases[qualify(ns, p.tok(i+1))] = strings.Join(target, "")
				i = j + 1
				continue
			}
			i = p.skipDecl(i, end)
		default:
			i = p.skipDecl(i, end)
		}
	}
	return nil
}

func isIdent(s string) bool {
	return s != "" && (s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// macroName matches the macros TensorRT's headers put in declarations (TRT_DEPRECATED,
// TRT_NODISCARD, TENSORRTAPI, ...): upper-case names, which its types never are.
var macroName = regexp.MustCompile(`^(TRT|TENSORRT|NV)[A-Z0-9_]*$`)

// skipDecl returns the index after the declaration starting at i: after its ";", or after a
// body in braces (and a ";" right after it).
func (p *parser) skipDecl(i, end int) int {
	for i < end {
		switch p.tok(i) {
		case ";":
			return i + 1
		case "(", "[":
			close, err := closing(p.s.toks, i)
			if err != nil {
				return end
			}
			i = close + 1
		case "{":
			close, err := closing(p.s.toks, i)
			if err != nil {
				return end
			}
			i = close + 1
			if p.tok(i) == ";" {
				i++
			}
			return i
		default:
			i++
		}
	}
	return end
}

// skipTemplate skips a template declaration: its parameter list and the declaration after it.
func (p *parser) skipTemplate(i, end int) (int, error) {
	if p.tok(i+1) != "<" {
		return p.skipDecl(i, end), nil
	}
	close, err := closing(p.s.toks, i+1)
	if err != nil {
		return 0, err
	}
	j := close + 1
	if k := p.classHead(j, end); k >= 0 {
		// A class template: skip its head and its body.
		for k < end && p.tok(k) != "{" && p.tok(k) != ";" {
			k++
		}
		if p.tok(k) == "{" {
			c, err := closing(p.s.toks, k)
			if err != nil {
				return 0, err
			}
			k = c + 1
		}
		if p.tok(k) == ";" {
			k++
		}
		return k, nil
	}
	return p.skipDecl(j, end), nil
}

// classHead returns the index of the class name when toks[i] starts a class definition or
// declaration ("class", attributes and macros, then the name), or -1.
func (p *parser) classHead(i, end int) int {
	switch p.tok(i) {
	case "class", "struct", "union":
	default:
		return -1
	}
	j := p.skipAttributes(i+1, end)
	if !isIdent(p.tok(j)) {
		return -1
	}
	return j
}

// skipAttributes skips [[...]], __declspec(...), alignas(...) and TensorRT's macros.
func (p *parser) skipAttributes(j, end int) int {
	for j < end {
		t := p.tok(j)
		switch {
		case t == "[" && p.tok(j+1) == "[":
			c, err := closing(p.s.toks, j)
			if err != nil {
				return end
			}
			j = c + 1
		case t == "__declspec" || t == "alignas" || t == "__attribute__" || macroName.MatchString(t):
			j++
			if p.tok(j) == "(" {
				c, err := closing(p.s.toks, j)
				if err != nil {
					return end
				}
				j = c + 1
			}
		default:
			return j
		}
	}
	return j
}

// classDecl reads a class definition at toks[i] (or skips a declaration that only names one).
func (p *parser) classDecl(i, end int, ns []string) (int, error) {
	n := p.classHead(i, end)
	if n < 0 {
		return p.skipDecl(i, end), nil
	}
	j := n + 1
	if p.tok(j) == "final" {
		j++
	}
	var bases []string
	if p.tok(j) == ":" {
		j++
		var cur []string
		for j < end && p.tok(j) != "{" {
			switch t := p.tok(j); t {
			case ",":
				bases = append(bases, strings.Join(cur, ""))
				cur = nil
			case "public", "protected", "private", "virtual":
			default:
				cur = append(cur, t)
			}
			j++
		}
		if len(cur) > 0 {
			bases = append(bases, strings.Join(cur, ""))
		}
	}
	if p.tok(j) != "{" {
		return p.skipDecl(i, end), nil // a forward declaration, or a variable of the class type
	}
	close, err := closing(p.s.toks, j)
	if err != nil {
		return 0, err
	}
	c := &Class{Name: qualify(ns, p.tok(n)), Bases: bases, File: p.file}
	for _, off := range p.s.conds {
		if off > p.s.toks[j].pos && off < p.s.toks[close].pos {
			c.Conditional = true
		}
	}
	if _, dup := p.h.Classes[c.Name]; dup {
		return 0, p.errAt(n, "class %s is defined twice", c.Name)
	}
	p.h.Classes[c.Name] = c
	if err := p.classBody(c, j+1, close, append(append([]string(nil), ns...), p.tok(n))); err != nil {
		return 0, err
	}
	k := close + 1
	if p.tok(k) == ";" {
		k++
	}
	return k, nil
}

// classBody reads the members of c in toks[i:end]; scope is c's qualified name, split.
func (p *parser) classBody(c *Class, i, end int, scope []string) error {
	for i < end {
		t := p.tok(i)
		switch {
		case t == ";":
			i++
		case (t == "public" || t == "protected" || t == "private") && p.tok(i+1) == ":":
			i += 2
		case t == "friend" || t == "using" || t == "typedef" || t == "static_assert":
			i = p.skipDecl(i, end)
		case t == "template":
			next, err := p.skipTemplate(i, end)
			if err != nil {
				return err
			}
			i = next
		case t == "enum":
			next, err := p.enumDecl(i, end, scope)
			if err != nil {
				return err
			}
			i = next
		case p.classHead(i, end) >= 0 && p.isClassDefinition(i, end):
			next, err := p.classDecl(i, end, scope)
			if err != nil {
				return err
			}
			i = next
		default:
			next, err := p.member(c, i, end)
			if err != nil {
				return err
			}
			i = next
		}
	}
	return nil
}

// isClassDefinition reports whether the class head at toks[i] is followed by a body or a base
// list (a nested class), not by a declarator (a member of an elaborated class type).
func (p *parser) isClassDefinition(i, end int) bool {
	n := p.classHead(i, end)
	j := n + 1
	if p.tok(j) == "final" {
		j++
	}
	return p.tok(j) == "{" || p.tok(j) == ":" && p.tok(j+1) != ":" || p.tok(j) == ";"
}

// member reads one member declaration at toks[i] into c and returns the index after it.
func (p *parser) member(c *Class, i, end int) (int, error) {
	// The declaration runs to a ";" or to a body; a "(" before a "{" makes it a function.
	j := i
	paren := -1 // the declarator's "(": the first at depth 0 after a name
	var next int
	bodyStart, bodyEnd := -1, -1
scan:
	for j < end {
		switch t := p.tok(j); t {
		case ";":
			next = j + 1
			break scan
		case "[":
			cl, err := closing(p.s.toks, j)
			if err != nil {
				return 0, err
			}
			j = cl + 1
		case "(":
			if paren < 0 && j > i && !isAttributeMacro(p.tok(j-1)) && (isIdent(p.tok(j-1)) || p.tok(j-2) == "operator") {
				paren = j
			}
			cl, err := closing(p.s.toks, j)
			if err != nil {
				return 0, err
			}
			j = cl + 1
			if paren >= 0 && p.tok(j) == ":" {
				// A constructor's initializer list: name(...) or name{...}, separated by commas.
				k, err := p.skipInitializers(j+1, end)
				if err != nil {
					return 0, err
				}
				j = k
			}
		case "{":
			cl, err := closing(p.s.toks, j)
			if err != nil {
				return 0, err
			}
			if paren >= 0 {
				bodyStart, bodyEnd = j, cl
				next = cl + 1
				if p.tok(next) == ";" {
					next++
				}
				break scan
			}
			j = cl + 1 // a data member's brace initializer
		default:
			j++
		}
	}
	if j >= end {
		return 0, p.errAt(i, "member declaration of %s never ends", c.Name)
	}
	decl := p.s.toks[i:j]
	if paren < 0 {
		if f := field(decl); f != "" {
			c.Fields = append(c.Fields, f)
		}
		return next, nil
	}
	m, ok, err := p.function(c, i, paren, j)
	if err != nil {
		return 0, err
	}
	if ok {
		c.Members = append(c.Members, m)
		if bodyStart >= 0 {
			// Resolved once the whole body is read: the fields come last.
			p.bodies = append(p.bodies, body{c: c, member: len(c.Members) - 1, start: bodyStart + 1, end: bodyEnd})
		}
	}
	return next, nil
}

func isAttributeMacro(t string) bool {
	return macroName.MatchString(t) || t == "__declspec" || t == "alignas" || t == "__attribute__" || t == "noexcept" || t == "decltype"
}

// skipInitializers skips a constructor's member initializers up to the body's "{".
func (p *parser) skipInitializers(j, end int) (int, error) {
	for j < end {
		switch p.tok(j) {
		case "(", "{":
			cl, err := closing(p.s.toks, j)
			if err != nil {
				return 0, err
			}
			j = cl + 1
			if p.tok(j) != "," {
				return j, nil
			}
			j++
		default:
			j++
		}
	}
	return j, nil
}

// field normalizes a data member's declaration; "" for what is not a non-static data member.
func field(decl []token) string {
	var out []token
	for _, t := range decl {
		switch t.text {
		case "static", "constexpr", "mutable", "inline":
			if t.text == "static" || t.text == "constexpr" {
				return ""
			}
			continue
		case "=", "{":
			return joinTokens(out)
		}
		if macroName.MatchString(t.text) {
			continue
		}
		out = append(out, t)
	}
	return joinTokens(out)
}

// function reads the member function declared by toks[i:end] whose parameters open at paren.
// ok is false for constructors (they occupy no vtable slot).
func (p *parser) function(c *Class, i, paren, end int) (Member, bool, error) {
	closeParen, err := closing(p.s.toks, paren)
	if err != nil {
		return Member{}, false, err
	}
	var m Member
	// Name: the identifier before the "(", "~" for a destructor, operator names whole.
	nameAt := paren - 1
	switch {
	case p.tok(paren-2) == "operator":
		m.Name = "operator" + p.tok(paren-1)
		nameAt = paren - 2
	case p.tok(paren-2) == "~":
		m.Name = "~"
		nameAt = paren - 2
	default:
		m.Name = p.tok(paren - 1)
	}
	simple := c.Name[strings.LastIndex(c.Name, "::")+2:]
	if m.Name == simple && p.tok(nameAt-1) != "::" {
		return Member{}, false, nil // a constructor
	}
	var ret []string
	for k := i; k < nameAt; k++ {
		t := p.tok(k)
		switch {
		case t == "virtual":
			m.Virtual = true
		case t == "static":
			m.Static = true
		case t == "inline" || t == "explicit" || t == "constexpr" || t == "friend":
		case t == "[" && p.tok(k+1) == "[":
			cl, err := closing(p.s.toks, k)
			if err != nil {
				return Member{}, false, err
			}
			k = cl
		case isAttributeMacro(t):
			if p.tok(k+1) == "(" {
				cl, err := closing(p.s.toks, k+1)
				if err != nil {
					return Member{}, false, err
				}
				k = cl
			}
		default:
			ret = append(ret, t)
		}
	}
	var quals []string
	for k := closeParen + 1; k < end; k++ {
		t := p.tok(k)
		switch {
		case t == "const" || t == "volatile" || t == "&":
			quals = append(quals, t)
		case t == "override":
			m.Override, m.Virtual = true, true
		case t == "final":
		case t == "noexcept" || isAttributeMacro(t):
			if p.tok(k+1) == "(" {
				cl, err := closing(p.s.toks, k+1)
				if err != nil {
					return Member{}, false, err
				}
				k = cl
			}
		case t == "=":
			m.Pure = p.tok(k+1) == "0"
			k = end // = 0, = default, = delete
		case t == "->":
			// A trailing return type replaces "auto".
			var tr []string
			for k++; k < end && p.tok(k) != "=" && p.tok(k) != "override" && p.tok(k) != "final" && p.tok(k) != "{"; k++ {
				tr = append(tr, p.tok(k))
			}
			k--
			ret = tr
		}
	}
	params := normParams(p.s.toks[paren+1 : closeParen])
	if params != "" {
		m.NParams = countArgs(p.s.toks[paren+1 : closeParen])
	}
	m.Params = "(" + params + ")"
	if len(quals) > 0 {
		m.Params += " " + strings.Join(quals, " ")
	}
	if m.Name == "~" {
		m.Sig = "~()"
		m.Params = "()"
	} else {
		m.Sig = strings.TrimSpace(normType(ret)+" "+m.Name) + m.Params
		m.Returns = joinTokens(toTokens(ret))
		m.Decl = strings.TrimSpace(m.Returns+" "+m.Name) + "(" + spelledParams(p.s.toks[paren+1:closeParen]) + ")"
		if len(quals) > 0 {
			m.Decl += " " + strings.Join(quals, " ")
		}
	}
	return m, true, nil
}

// spelledParams writes a parameter list's types as the header spells them, for a
// declaration that must compile where the header's does: default arguments, attributes and
// parameter names go (an unnamed parameter draws no unused-parameter warning), nothing else
// changes.
func spelledParams(toks []token) string {
	if len(toks) == 0 || len(toks) == 1 && toks[0].text == "void" {
		return ""
	}
	var out []string
	for _, param := range splitTop(toks, true) {
		var ts []string
		for k := 0; k < len(param); k++ {
			t := param[k].text
			if t == "=" {
				break
			}
			if t == "[" && k+1 < len(param) && param[k+1].text == "[" {
				for k < len(param) && !(param[k].text == "]" && k > 0 && param[k-1].text == "]") {
					k++
				}
				continue
			}
			if isAttributeMacro(t) {
				if k+1 < len(param) && param[k+1].text == "(" {
					for depth := 0; k+1 < len(param); k++ {
						if param[k+1].text == "(" {
							depth++
						} else if param[k+1].text == ")" {
							depth--
							if depth == 0 {
								k++
								break
							}
						}
					}
				}
				continue
			}
			ts = append(ts, t)
		}
		// The name: the identifier before an array's brackets, or a last identifier after the
		// type that is not part of a qualified name or a builtin type's words.
		n := len(ts)
		switch {
		case n >= 3 && ts[n-1] == "]":
			if open := slices.Index(ts, "["); open >= 2 && isIdent(ts[open-1]) && !builtin[ts[open-1]] && ts[open-2] != "::" {
				ts = append(ts[:open-1:open-1], ts[open:]...)
			}
		case n >= 2 && isIdent(ts[n-1]) && !builtin[ts[n-1]] && ts[n-2] != "::":
			ts = ts[:n-1]
		}
		out = append(out, joinTokens(toTokens(ts)))
	}
	return strings.Join(out, ", ")
}

// forward finds the first call field->method(...) in a body, where field is a data member.
func (p *parser) forward(c *Class, i, end int) *Forward {
	names := map[string]bool{}
	for _, f := range c.Fields {
		fs := strings.Fields(f)
		names[strings.TrimLeft(fs[len(fs)-1], "*&")] = true
	}
	for k := i; k+3 < end; k++ {
		if names[p.tok(k)] && p.tok(k+1) == "->" && isIdent(p.tok(k+2)) && p.tok(k+3) == "(" {
			cl, err := closing(p.s.toks, k+3)
			if err != nil {
				return nil
			}
			return &Forward{Field: p.tok(k), Method: p.tok(k + 2), Args: countArgs(p.s.toks[k+4 : cl])}
		}
	}
	return nil
}

// countArgs counts the comma-separated items of an argument or parameter list.
func countArgs(toks []token) int {
	if len(toks) == 0 {
		return 0
	}
	return len(splitTop(toks, true))
}

// splitTop splits toks at commas outside brackets; angle brackets count when angles is true
// (template arguments in parameters), not in expressions (where "<<" shifts).
func splitTop(toks []token, angles bool) [][]token {
	var out [][]token
	depth, start := 0, 0
	for k, t := range toks {
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "<", ">":
			if angles {
				depth += map[string]int{"<": 1, ">": -1}[t.text]
			}
		case ",":
			if depth == 0 {
				out = append(out, toks[start:k])
				start = k + 1
			}
		}
	}
	return append(out, toks[start:])
}

// builtin names the words of a parameter's type that are never its name.
var builtin = map[string]bool{
	"const": true, "volatile": true, "unsigned": true, "signed": true, "int": true, "char": true, "short": true,
	"long": true, "float": true, "double": true, "bool": true, "void": true,
}

// normParams normalizes a parameter list to its types: names, default arguments, attributes
// and top-level const go; "const T" becomes "T const"; int32_t is int, as on every platform
// TensorRT supports.
func normParams(toks []token) string {
	if len(toks) == 0 || len(toks) == 1 && toks[0].text == "void" {
		return ""
	}
	var out []string
	for _, param := range splitTop(toks, true) {
		var ts []string
		for k := 0; k < len(param); k++ {
			t := param[k].text
			if t == "=" {
				break
			}
			if isAttributeMacro(t) {
				if k+1 < len(param) && param[k+1].text == "(" {
					for depth := 0; k+1 < len(param); k++ {
						if param[k+1].text == "(" {
							depth++
						} else if param[k+1].text == ")" {
							depth--
							if depth == 0 {
								k++
								break
							}
						}
					}
				}
				continue
			}
			ts = append(ts, t)
		}
		// The name: a last identifier after the type, not part of a qualified name.
		if n := len(ts); n >= 2 && isIdent(ts[n-1]) && !builtin[ts[n-1]] && ts[n-2] != "::" {
			ts = ts[:n-1]
		}
		for len(ts) > 1 && ts[len(ts)-1] == "const" {
			ts = ts[:len(ts)-1] // top-level const: not part of the function's type
		}
		if !containsAny(ts, "*", "&", "[") {
			ts = without(ts, "const")
		}
		out = append(out, normType(ts))
	}
	return strings.Join(out, ", ")
}

func containsAny(ts []string, want ...string) bool {
	for _, t := range ts {
		for _, w := range want {
			if t == w {
				return true
			}
		}
	}
	return false
}

func without(ts []string, drop string) []string {
	var out []string
	for _, t := range ts {
		if t != drop {
			out = append(out, t)
		}
	}
	return out
}

// normType normalizes a type's tokens: namespaces TensorRT's headers may or may not spell out
// go (nvinfer1::, nvonnxparser::, std:: before size_t and the fixed-width integers), a leading
// const moves after the type it qualifies, int32_t is int, and the tokens are joined in one
// spelling.
func normType(ts []string) string {
	var out []string
	for k := 0; k < len(ts); k++ {
		t := ts[k]
		if (t == "nvinfer1" || t == "nvonnxparser" || t == "std" && k+2 < len(ts) && stdAlias[ts[k+2]]) && k+1 < len(ts) && ts[k+1] == "::" {
			k++
			continue
		}
		if t == "::" && len(out) == 0 {
			continue
		}
		if t == "int32_t" {
			t = "int"
		}
		out = append(out, t)
	}
	// "const T" -> "T const", for T a (possibly qualified) name.
	if len(out) >= 2 && out[0] == "const" {
		k := 1
		for k+2 < len(out) && out[k+1] == "::" {
			k += 2
		}
		if isIdent(out[k]) {
			moved := append(append([]string(nil), out[1:k+1]...), "const")
			out = append(moved, out[k+1:]...)
		}
	}
	return joinTokens(toTokens(out))
}

var stdAlias = map[string]bool{"size_t": true, "int32_t": true, "int64_t": true, "uint32_t": true, "uint64_t": true, "int8_t": true, "uint8_t": true}

func toTokens(ss []string) []token {
	out := make([]token, len(ss))
	for k, s := range ss {
		out[k] = token{text: s}
	}
	return out
}

// joinTokens writes tokens in one spelling: a space between two words, after a ">" before a
// word, before a word after "*" or "&", and after a comma; none elsewhere.
func joinTokens(ts []token) string {
	var b strings.Builder
	prev := ""
	for _, t := range ts {
		s := t.text
		word := isIdent(s) || isNumber(s)
		if prev != "" && (word && (isIdent(prev) || isNumber(prev) || prev == ">" || prev == "*" || prev == "&") || prev == ",") {
			b.WriteByte(' ')
		}
		b.WriteString(s)
		prev = s
	}
	return b.String()
}

func isNumber(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// enumDecl reads an enum definition at toks[i] (or skips a declaration that only names one).
func (p *parser) enumDecl(i, end int, ns []string) (int, error) {
	j := i + 1
	if p.tok(j) == "class" || p.tok(j) == "struct" {
		j++
	}
	j = p.skipAttributes(j, end)
	if !isIdent(p.tok(j)) {
		return p.skipDecl(i, end), nil // an unnamed enum
	}
	name := qualify(ns, p.tok(j))
	for j < end && p.tok(j) != "{" && p.tok(j) != ";" {
		j++
	}
	if p.tok(j) != "{" {
		return p.skipDecl(i, end), nil
	}
	close, err := closing(p.s.toks, j)
	if err != nil {
		return 0, err
	}
	e := &Enum{Name: name, File: p.file}
	known := map[string]int64{}
	next, nextKnown := int64(0), true
	if j+1 < close {
		for _, item := range splitTop(p.s.toks[j+1:close], false) {
			if len(item) == 0 {
				continue // a trailing comma
			}
			var en Enumerator
			en.Name = item[0].text
			eq := -1
			for k, t := range item {
				if t.text == "=" {
					eq = k
					break
				}
			}
			if eq >= 0 {
				expr := item[eq+1:]
				if v, ok := evalEnum(expr, known); ok {
					next, nextKnown = v, true
				} else {
					en.Value = joinTokens(expr)
					nextKnown = false
				}
			}
			if nextKnown {
				en.Value = strconv.FormatInt(next, 10)
				known[en.Name] = next
				next++
			}
			e.Values = append(e.Values, en)
		}
	}
	if _, dup := p.h.Enums[name]; dup {
		return 0, p.errAt(i, "enum %s is defined twice", name)
	}
	p.h.Enums[name] = e
	k := close + 1
	if p.tok(k) == ";" {
		k++
	}
	return k, nil
}

// evalEnum evaluates an enumerator's initializer: integer literals, earlier enumerators (also
// qualified), parentheses, unary minus, +, -, << and |.
func evalEnum(toks []token, known map[string]int64) (int64, bool) {
	e := &evaluator{toks: toks, known: known}
	v, ok := e.or()
	return v, ok && e.i == len(toks)
}

type evaluator struct {
	toks  []token
	i     int
	known map[string]int64
}

func (e *evaluator) peek(k int) string {
	if e.i+k < len(e.toks) {
		return e.toks[e.i+k].text
	}
	return ""
}

func (e *evaluator) or() (int64, bool) {
	v, ok := e.shift()
	for ok && e.peek(0) == "|" {
		e.i++
		var w int64
		w, ok = e.shift()
		v |= w
	}
	return v, ok
}

func (e *evaluator) shift() (int64, bool) {
	v, ok := e.add()
	for ok && (e.peek(0) == "<" && e.peek(1) == "<" || e.peek(0) == ">" && e.peek(1) == ">") {
		left := e.peek(0) == "<"
		e.i += 2
		var w int64
		w, ok = e.add()
		if !ok || w < 0 || w > 62 {
			return 0, false
		}
		if left {
			v <<= w
		} else {
			v >>= w
		}
	}
	return v, ok
}

func (e *evaluator) add() (int64, bool) {
	v, ok := e.unary()
	for ok && (e.peek(0) == "+" || e.peek(0) == "-") {
		op := e.peek(0)
		e.i++
		var w int64
		w, ok = e.unary()
		if op == "+" {
			v += w
		} else {
			v -= w
		}
	}
	return v, ok
}

func (e *evaluator) unary() (int64, bool) {
	switch t := e.peek(0); {
	case t == "-":
		e.i++
		v, ok := e.unary()
		return -v, ok
	case t == "(":
		e.i++
		v, ok := e.or()
		if !ok || e.peek(0) != ")" {
			return 0, false
		}
		e.i++
		return v, true
	case isNumber(t):
		e.i++
		s := strings.TrimRight(strings.ToLower(t), "ul")
		v, err := strconv.ParseInt(strings.ReplaceAll(s, "'", ""), 0, 64)
		return v, err == nil
	case isIdent(t):
		// A name, perhaps qualified: its last part must be an earlier enumerator.
		name := t
		e.i++
		for e.peek(0) == "::" && isIdent(e.peek(1)) {
			name = e.peek(1)
			e.i += 2
		}
		v, ok := e.known[name]
		return v, ok
	}
	return 0, false
}
