package apiminors

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Tag is the headers of one release of a major.
type Tag struct {
	Name                string // "v10.13.3"
	Major, Minor, Patch int
	Header              *Header
	// Missing names the header files the release's tag lacks (NvOnnxParser.h lived in
	// onnx-tensorrt before 10.14): what they declare is unknown there, not absent.
	Missing []string
}

// Table is what the headers of every release of one major say about driving its older minors
// with a shim compiled against the newest release's headers.
type Table struct {
	Major       int
	HeaderTag   string // the newest tag, whose headers the shim is compiled against
	HeaderMinor int
	Tags        []string // the tags read, oldest first
	// Oldest is the oldest minor the shim can drive: from it on, every class the shim uses
	// keeps the newest headers' layout as its start, and everything a build uses whatever its
	// options exists where the newest headers put it.
	Oldest int
	Why    string // why Oldest is not older; "" when Oldest is the major's first minor
	// Members are the uses of the shim, in the order of Uses.
	Members []MemberFact
	// Classes are the classes the shim reaches, by name, with the minor from which their
	// layout is the newest's start.
	Classes []ClassFact
}

// MemberFact is what the headers say about one Use.
type MemberFact struct {
	Use  Use
	Name string // "IBuilderConfig::setBuildRoute", "BuilderFlag::kREFIT", "ILogger"
	// ABI is where it is in the newest headers: the class and vtable slot a call goes through
	// ("apiv::VBuilderConfig slot 60: bool setBuildRoute(char const*)"), an enumerator's value,
	// or an implemented interface's slot count.
	ABI string
	// Added is the first minor whose headers have it, with its signature (and value).
	Added int
	// Since is the first minor from which every release has it where the newest headers do
	// and lays out every class it goes through as the newest's start: the oldest a build that
	// uses it can drive.
	Since int
	Why   string // why not Since-1; "" when Since is the major's first minor
}

// ClassFact is what the headers say about one class the shim reaches.
type ClassFact struct {
	Name        string // qualified
	Slots       int    // in the newest headers
	StableSince int    // from this minor on, every release lays it out as the newest's start
	Why         string // why not StableSince-1
}

// lacking is the error of a use its release's headers do not declare: absent, or unknown
// there because the header that would declare it was not read.
type lacking struct {
	what    string
	unknown bool
}

func (l *lacking) Error() string { return l.what }

func absent(format string, args ...any) error {
	return &lacking{what: fmt.Sprintf(format, args...)}
}

// isUnknown reports whether err says a use is unknown in a release.
func isUnknown(err error) bool {
	var l *lacking
	return errors.As(err, &l) && l.unknown
}

// reach is a use resolved in one release's headers.
type reach struct {
	abi     string   // its identity: equal in two releases when a call means the same there
	desc    string   // for people
	sig     string   // its signature (and value), without where it sits
	classes []*Class // the classes a call goes through
	file    string   // the header that declares its type
}

// resolve finds u in h. The error is a *lacking when h lacks the type or the member, or the
// file that would declare it (missing).
func resolve(h *Header, u Use, missing map[string]bool, newestFile string) (reach, error) {
	if c := h.Lookup("", u.Type); c != nil {
		return resolveClass(h, c, u)
	}
	if e := lookupEnum(h, u.Type); e != nil {
		for _, v := range e.Values {
			if v.Name == u.Member {
				return reach{abi: e.Name + "::" + v.Name + " = " + v.Value, desc: "= " + v.Value, sig: v.Value, file: e.File}, nil
			}
		}
		return reach{}, absent("no %s", memberName(u))
	}
	if missing[newestFile] {
		return reach{}, &lacking{what: "its " + newestFile + " could not be read, so what it declares there is unchecked", unknown: true}
	}
	return reach{}, absent("no %s", shortName(u.Type))
}

// lookupEnum finds an enum by qualified name; an enum nested in a class is found through the
// class's aliases too (nvinfer1::ILogger::Severity where ILogger is v_1_0::ILogger).
func lookupEnum(h *Header, name string) *Enum {
	if e := h.Enums[name]; e != nil {
		return e
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		if c := h.Lookup("", name[:i]); c != nil {
			return h.Enums[c.Name+"::"+name[i+2:]]
		}
	}
	return nil
}

func resolveClass(h *Header, c *Class, u Use) (reach, error) {
	r, err := resolveMember(h, c, u)
	r.file = c.File
	return r, err
}

func resolveMember(h *Header, c *Class, u Use) (reach, error) {
	slots, err := h.VTable(c)
	if err != nil {
		return reach{}, err
	}
	if u.Callback {
		return reach{abi: c.Name, desc: fmt.Sprintf("%d virtual functions", len(slots)), classes: []*Class{c}}, nil
	}
	var found []Member
	for _, m := range c.Members {
		if m.Name == u.Member && !m.Static {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		return reach{}, absent("no %s", memberName(u))
	case 1:
	default:
		return reach{}, fmt.Errorf("%s has %d overloads of %s; the generator tells them apart by nothing yet", c.Name, len(found), u.Member)
	}
	m := found[0]
	for k, s := range slots {
		if s.Name == m.Name && s.Params == m.Params {
			return slotReach(c, k, s, []*Class{c}), nil
		}
	}
	if m.Forward == nil {
		return reach{}, fmt.Errorf("%s::%s is neither virtual nor a call through an implementation pointer", c.Name, u.Member)
	}
	impl, err := fieldClass(h, c, m.Forward.Field)
	if err != nil {
		return reach{}, err
	}
	implSlots, err := h.VTable(impl)
	if err != nil {
		return reach{}, err
	}
	at := -1
	for k, s := range implSlots {
		if s.Name == m.Forward.Method && s.NParams == m.Forward.Args {
			if at >= 0 {
				return reach{}, fmt.Errorf("%s::%s forwards to one of several %s::%s", c.Name, u.Member, impl.Name, s.Name)
			}
			at = k
		}
	}
	if at < 0 {
		return reach{}, absent("no %s::%s of %d parameters, which %s forwards to", shortName(impl.Name), m.Forward.Method, m.Forward.Args, memberName(u))
	}
	return slotReach(impl, at, implSlots[at], []*Class{c, impl}), nil
}

func slotReach(c *Class, k int, s Slot, classes []*Class) reach {
	return reach{
		abi:     fmt.Sprintf("%s slot %d: %s", c.Name, k, s.Sig),
		desc:    fmt.Sprintf("%s slot %d: %s", shortName(c.Name), k, s.Sig),
		sig:     c.Name + " " + s.Sig,
		classes: classes,
	}
}

// fieldClass finds the class a pointer field of c (or of its bases) points to.
func fieldClass(h *Header, c *Class, field string) (*Class, error) {
	l, err := h.layout(c)
	if err != nil {
		return nil, err
	}
	for _, f := range l.fields {
		fs := strings.Fields(f)
		if len(fs) == 2 && fs[1] == field && strings.HasSuffix(fs[0], "*") {
			target := h.Lookup(scopeOf(c.Name), strings.TrimSuffix(fs[0], "*"))
			if target == nil {
				return nil, fmt.Errorf("%s::%s points to %s, which the headers read do not define", c.Name, field, fs[0])
			}
			return target, nil
		}
	}
	return nil, fmt.Errorf("%s has no pointer field %s", c.Name, field)
}

// shortName drops the namespaces every reader knows: nvinfer1:: and nvonnxparser::.
func shortName(name string) string {
	for _, ns := range []string{"nvinfer1::", "nvonnxparser::"} {
		name = strings.TrimPrefix(name, ns)
	}
	return name
}

// memberName names a use for people: "IBuilderConfig::setBuildRoute", "ILogger".
func memberName(u Use) string {
	if u.Callback {
		return shortName(u.Type)
	}
	if u.Member == "~" {
		return "delete " + shortName(u.Type)
	}
	return shortName(u.Type) + "::" + u.Member
}

// Analyze decides, from the headers of every release of one major (tags, any order), which of
// its minors a shim compiled against the newest release's headers can drive, for the uses
// (those of other majors are left out). It is an error when a use cannot be found in the
// newest headers.
func Analyze(tags []Tag, uses []Use) (*Table, error) {
	if len(tags) == 0 {
		return nil, errors.New("no tags to read")
	}
	tags = slices.Clone(tags)
	sort.Slice(tags, func(i, j int) bool {
		a, b := tags[i], tags[j]
		if a.Minor != b.Minor {
			return a.Minor < b.Minor
		}
		return a.Patch < b.Patch
	})
	newest := tags[len(tags)-1]
	t := &Table{Major: newest.Major, HeaderTag: newest.Name, HeaderMinor: newest.Minor, Oldest: tags[0].Minor}
	for _, tag := range tags {
		if tag.Major != newest.Major {
			return nil, fmt.Errorf("tag %s is of major %d, not %d", tag.Name, tag.Major, newest.Major)
		}
		t.Tags = append(t.Tags, tag.Name)
	}
	missing := make([]map[string]bool, len(tags))
	for i, tag := range tags {
		missing[i] = map[string]bool{}
		for _, f := range tag.Missing {
			missing[i][f] = true
		}
	}

	classes := map[string]*classState{}
	var classOrder []string
	for _, u := range uses {
		if !u.forMajor(newest.Major) {
			continue
		}
		top, err := resolve(newest.Header, u, nil, "")
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", memberName(u), newest.Name, err)
		}
		fact := MemberFact{Use: u, Name: memberName(u), ABI: top.desc}
		var tops []layout
		for _, c := range top.classes {
			l, err := newest.Header.layout(c)
			if err != nil {
				return nil, fmt.Errorf("%s in %s: %w", memberName(u), newest.Name, err)
			}
			tops = append(tops, l)
			if classes[c.Name] == nil {
				classes[c.Name] = &classState{fact: ClassFact{Name: c.Name, Slots: len(l.slots)}, top: l, file: c.File}
				classOrder = append(classOrder, c.Name)
			}
		}
		// Walk back from the newest: the first release where the use is not as in the newest
		// ends its range (Since); the first that lacks it, or declares it otherwise, ends the
		// releases that have it (Added), where a release whose header is missing says nothing.
		usable, added := true, true
		fact.Since, fact.Added = tags[0].Minor, tags[0].Minor
		for i := len(tags) - 1; i >= 0 && (usable || added); i-- {
			tag := tags[i]
			r, err := resolve(tag.Header, u, missing[i], top.file)
			why := ""
			switch {
			case err != nil:
				why = err.Error()
			case r.sig != top.sig:
				why = "declared as " + r.desc
			case r.abi != top.abi:
				why = "at " + r.desc
			default:
				// Every class the call goes through must keep the newest's layout as its start.
				for k, c := range r.classes {
					l, lerr := tag.Header.layout(c)
					if lerr != nil {
						why = lerr.Error()
						break
					}
					if ok, w := prefixOf(l, tops[k]); !ok {
						why = shortName(c.Name) + " " + w
						break
					}
				}
			}
			if added && !isUnknown(err) && (err != nil || r.sig != top.sig) {
				added = false
				fact.Added = nextMinor(tags, i)
			}
			if usable && why != "" {
				usable = false
				fact.Since = nextMinor(tags, i)
				fact.Why = tag.Name + ": " + why
			}
		}
		t.Members = append(t.Members, fact)
		if len(u.Flags) == 0 && fact.Since > t.Oldest {
			t.Oldest = fact.Since
			t.Why = fact.Name + " in " + fact.Why
		}
	}

	for _, name := range classOrder {
		cs := classes[name]
		cs.fact.StableSince = tags[0].Minor
		for i := len(tags) - 1; i >= 0; i-- {
			why := ""
			c := tags[i].Header.Classes[name]
			switch {
			case c == nil && missing[i][cs.file]:
				why = "its " + cs.file + " could not be read, so its layout there is unchecked"
			case c == nil:
				continue // not there yet: its members' ranges say so
			default:
				l, err := tags[i].Header.layout(c)
				if err != nil {
					why = err.Error()
				} else if ok, w := prefixOf(l, cs.top); !ok {
					why = w
				}
			}
			if why != "" {
				cs.fact.StableSince = nextMinor(tags, i)
				cs.fact.Why = tags[i].Name + ": " + why
				break
			}
		}
		t.Classes = append(t.Classes, cs.fact)
	}
	return t, nil
}

type classState struct {
	fact ClassFact
	top  layout
	file string
}

// nextMinor is the minor after tags[i]'s: a minor counts only when all of its releases do.
func nextMinor(tags []Tag, i int) int {
	return tags[i].Minor + 1
}

// FlagNeeds returns, for each flag of t's uses, the oldest minor a build with it can drive,
// where that is newer than t.Oldest, sorted by flag.
func (t *Table) FlagNeeds() []FlagNeed {
	need := map[string]FlagNeed{}
	for _, m := range t.Members {
		for _, f := range m.Use.Flags {
			if m.Since > t.Oldest && m.Since > need[f].Minor {
				need[f] = FlagNeed{Flag: f, Minor: m.Since, Because: m.Name}
			}
		}
	}
	var out []FlagNeed
	for _, n := range need {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Flag < out[j].Flag })
	return out
}

// FlagNeed is a build option that needs a newer minor than the oldest the shim drives.
type FlagNeed struct {
	Flag    string
	Minor   int
	Because string // the use that needs it
}
