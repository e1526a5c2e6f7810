package buildflags

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/builder"
)

// ShapeKind is one of the four shape flags: --shapes, --min-shapes, --opt-shapes, --max-shapes, in that order.
type ShapeKind int

const (
	KindShapes ShapeKind = iota
	KindMin
	KindOpt
	KindMax
)

// profileFlags collects the shape flags into optimization profiles, as trtexec does:
// --profile N starts profile N (numbered 0, 1, 2 … in order), and the shape flags after it
// belong to it. Without --profile every shape flag belongs to profile 0. pflag calls Set in
// command-line order, which is what makes the grouping possible.
type profileFlags struct {
	dst *[]builder.Profile // the builder's profiles, filled in
	set [][4]bool          // which of each profile's flags were given
}

// current is the profile the shape flags go to now, and which of its flags are given.
func (p *profileFlags) current() (*builder.Profile, *[4]bool) {
	if len(*p.dst) == 0 {
		p.add()
	}
	return &(*p.dst)[len(*p.dst)-1], &p.set[len(p.set)-1]
}

func (p *profileFlags) add() {
	*p.dst = append(*p.dst, builder.Profile{})
	p.set = append(p.set, [4]bool{})
}

// field is the text of one shape flag of profile pr.
func field(pr *builder.Profile, kind ShapeKind) *string {
	return [...]*string{&pr.Shapes, &pr.Min, &pr.Opt, &pr.Max}[kind]
}

// shapeValue is the pflag.Value of one shape flag.
type shapeValue struct {
	p    *profileFlags
	kind ShapeKind
}

func (v shapeValue) String() string {
	if v.p == nil || v.p.dst == nil || len(*v.p.dst) == 0 {
		return ""
	}
	return *field(&(*v.p.dst)[len(*v.p.dst)-1], v.kind)
}

func (v shapeValue) Set(s string) error {
	pr, set := v.p.current()
	if set[v.kind] {
		return fmt.Errorf("given twice for profile %d: list all inputs in one flag (name:1x3x224x224,other:1x16), or start another profile with --profile %d",
			len(*v.p.dst)-1, len(*v.p.dst))
	}
	*field(pr, v.kind), set[v.kind] = s, true
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
	if next := len(*v.p.dst); n != next {
		return fmt.Errorf("profiles are numbered 0, 1, 2 … in the order they are given; the next one here is %d", next)
	}
	v.p.add()
	return nil
}

func (v profileValue) Type() string { return "N" }
