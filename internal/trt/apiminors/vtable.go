package apiminors

import (
	"fmt"
	"strings"
)

// Slot is one entry of a class's vtable as the headers lay it out: the destructor ("~") or a
// virtual member function, in the order a single-inheritance C++ ABI gives them (a base's
// slots first, then the class's new virtuals in declaration order; an override keeps its
// base's slot).
type Slot struct {
	Name    string // "setFlag", "~"
	Params  string // as Member.Params
	Sig     string // as Member.Sig, from the declaration that introduced the slot
	NParams int
	Class   string // the class that introduced it
	// Decl and Returns are Member.Decl and Member.Returns of the declaration that introduced
	// it; Pure is true while no class from there to the one laid out defines it.
	Decl, Returns string
	Pure          bool
}

// Lookup finds a class by a name as a C++ name in namespace scope would find it: name may be
// qualified or not, and is looked up in scope, then in each enclosing namespace, through
// aliases (`using X = v_1_0::X;`). It returns nil when nothing matches.
func (h *Header) Lookup(scope, name string) *Class {
	name = strings.TrimPrefix(name, "::")
	for s := scope; ; {
		q := name
		if s != "" {
			q = s + "::" + name
		}
		if c := h.Classes[q]; c != nil {
			return c
		}
		if a, ok := h.Aliases[q]; ok && a != name {
			at := s
			if i := strings.LastIndex(q, "::"); i >= 0 {
				at = q[:i]
			}
			if c := h.Lookup(at, a); c != nil {
				return c
			}
		}
		if s == "" {
			return nil
		}
		if i := strings.LastIndex(s, "::"); i >= 0 {
			s = s[:i]
		} else {
			s = ""
		}
	}
}

// LookupEnum finds an enum as Lookup finds a class.
func (h *Header) LookupEnum(scope, name string) *Enum {
	for s := scope; ; {
		q := name
		if s != "" {
			q = s + "::" + name
		}
		if e := h.Enums[q]; e != nil {
			return e
		}
		if s == "" {
			return nil
		}
		if i := strings.LastIndex(s, "::"); i >= 0 {
			s = s[:i]
		} else {
			s = ""
		}
	}
}

func scopeOf(qualified string) string {
	if i := strings.LastIndex(qualified, "::"); i >= 0 {
		return qualified[:i]
	}
	return ""
}

// VTable lays out c's vtable. It is an error when c has more than one base with virtual
// functions (TensorRT's interfaces have at most one), when a base is not defined in h, or when
// the body of c or of a base held a preprocessor conditional.
func (h *Header) VTable(c *Class) ([]Slot, error) {
	return h.vtable(c, 0)
}

func (h *Header) vtable(c *Class, depth int) ([]Slot, error) {
	if depth > 16 {
		return nil, fmt.Errorf("%s: bases nest too deep", c.Name)
	}
	if c.Conditional {
		return nil, fmt.Errorf("%s: a preprocessor conditional sits in its body; its members cannot be read", c.Name)
	}
	var slots []Slot
	polymorphic := ""
	for _, b := range c.Bases {
		base := h.Lookup(scopeOf(c.Name), b)
		if base == nil {
			return nil, fmt.Errorf("%s: base %s is not defined in the headers read", c.Name, b)
		}
		bs, err := h.vtable(base, depth+1)
		if err != nil {
			return nil, err
		}
		if len(bs) == 0 {
			continue
		}
		if polymorphic != "" {
			return nil, fmt.Errorf("%s: two bases with virtual functions (%s, %s); only single inheritance is laid out", c.Name, polymorphic, base.Name)
		}
		polymorphic = base.Name
		slots = append(slots, bs...)
	}
	for _, m := range c.Members {
		if m.Static {
			continue
		}
		overrides := -1
		for k, s := range slots {
			if s.Name == m.Name && s.Params == m.Params {
				overrides = k
				break
			}
		}
		if overrides >= 0 {
			slots[overrides].Pure = slots[overrides].Pure && m.Pure // the base's slot
			continue
		}
		if m.Override {
			return nil, fmt.Errorf("%s::%s%s overrides nothing in its bases", c.Name, m.Name, m.Params)
		}
		if m.Virtual {
			slots = append(slots, Slot{Name: m.Name, Params: m.Params, Sig: m.Sig, NParams: m.NParams, Class: c.Name,
				Decl: m.Decl, Returns: m.Returns, Pure: m.Pure})
		}
	}
	return slots, nil
}

// layout is what of a class's shape an application compiled against other headers depends
// on: its vtable and, for a public class that holds an implementation pointer, its fields.
type layout struct {
	slots  []Slot
	fields []string
}

func (h *Header) layout(c *Class) (layout, error) {
	slots, err := h.VTable(c)
	if err != nil {
		return layout{}, err
	}
	var fields []string
	for _, b := range c.Bases {
		if base := h.Lookup(scopeOf(c.Name), b); base != nil {
			bl, err := h.layout(base)
			if err != nil {
				return layout{}, err
			}
			fields = append(fields, bl.fields...)
		}
	}
	return layout{slots: slots, fields: append(fields, c.Fields...)}, nil
}

// prefixOf says whether old is laid out as the start of new: every slot of old has new's
// signature at the same index, and the fields are the same. When not, it says where they part.
// It also refuses a slot appended after old's that overloads a name old has: MSVC groups a
// class's overloads together in its vtable, so there the appended overload moves slots.
func prefixOf(old, new layout) (bool, string) {
	if len(old.slots) > len(new.slots) {
		return false, fmt.Sprintf("has %d virtual functions, more than the newest headers' %d (one was removed)", len(old.slots), len(new.slots))
	}
	for k, s := range old.slots {
		n := new.slots[k]
		if s.Sig != n.Sig {
			return false, fmt.Sprintf("slot %d is %s, where the newest headers have %s", k, s.Sig, n.Sig)
		}
	}
	if strings.Join(old.fields, ";") != strings.Join(new.fields, ";") {
		return false, fmt.Sprintf("its fields are {%s}, the newest headers' {%s}", strings.Join(old.fields, "; "), strings.Join(new.fields, "; "))
	}
	names := map[string]string{}
	for _, s := range old.slots {
		names[s.Name] = s.Class
	}
	for _, s := range new.slots[len(old.slots):] {
		if cls, ok := names[s.Name]; ok && cls == s.Class {
			return false, fmt.Sprintf("%s was appended as an overload of an older %s (MSVC groups overloads, which moves slots)", s.Sig, s.Name)
		}
	}
	return true, ""
}
