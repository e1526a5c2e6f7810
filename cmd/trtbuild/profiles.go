package main

import (
	"fmt"
	"strconv"
	"strings"
)

// shapeKind is one of the four shape flags.
type shapeKind int

const (
	kindShapes shapeKind = iota
	kindMin
	kindOpt
	kindMax
)

var shapeFlagNames = [...]string{"--shapes", "--min-shapes", "--opt-shapes", "--max-shapes"}

// profileFlags collects the shape flags into optimization profiles, as trtexec does:
// --profile N starts profile N (numbered 0, 1, 2 … in order), and the shape flags after it
// belong to it. Without --profile every shape flag belongs to profile 0. pflag calls Set in
// command-line order, which is what makes the grouping possible.
type profileFlags struct {
	groups []profileGroup
}

// profileGroup is the raw text of one profile's shape flags.
type profileGroup struct {
	text [4]string
	set  [4]bool
}

func (p *profileFlags) current() *profileGroup {
	if len(p.groups) == 0 {
		p.groups = append(p.groups, profileGroup{})
	}
	return &p.groups[len(p.groups)-1]
}

// shapeValue is the pflag.Value of one shape flag.
type shapeValue struct {
	p    *profileFlags
	kind shapeKind
}

func (v shapeValue) String() string {
	if v.p == nil || len(v.p.groups) == 0 {
		return ""
	}
	return v.p.groups[len(v.p.groups)-1].text[v.kind]
}

func (v shapeValue) Set(s string) error {
	g := v.p.current()
	if g.set[v.kind] {
		return fmt.Errorf("given twice for profile %d: list all inputs in one flag (name:1x3x224x224,other:1x16), or start another profile with --profile %d",
			len(v.p.groups)-1, len(v.p.groups))
	}
	g.text[v.kind], g.set[v.kind] = s, true
	return nil
}

func (v shapeValue) Type() string { return "spec" }

// profileValue is the pflag.Value of --profile.
type profileValue struct{ p *profileFlags }

func (v profileValue) String() string { return "" }

func (v profileValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a profile number", s)
	}
	if next := len(v.p.groups); n != next {
		return fmt.Errorf("profiles are numbered 0, 1, 2 … in the order they are given; the next one here is %d", next)
	}
	v.p.groups = append(v.p.groups, profileGroup{})
	return nil
}

func (v profileValue) Type() string { return "N" }
