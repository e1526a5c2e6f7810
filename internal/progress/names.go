package progress

import (
	"strings"
	"unicode"
)

// TimingPhase is the name of TensorRT's node-timing phase ("Timing graph nodes"): one step per
// layer of the optimized graph, each layer searched in a child phase of its own ("Finding
// fastest tactic for <layer>"). It is the one phase whose pace says how long it still runs
// (see Pace).
const TimingPhase = "Timing graph nodes"

// Label is a phase name as a narrow view shows it: the kind of work, abbreviated where the
// kind is known, and the layer it works on.
type Label struct {
	// Kind is the abbreviated kind ("tactic", "tactic reformat in 0 →"); "" when the name is
	// not of a known kind.
	Kind string
	// Subject is the rest of the name: the layer, or the whole name when Kind is "".
	Subject string
}

// String is the label as one line: Kind and Subject, separated by a space.
func (l Label) String() string {
	switch {
	case l.Kind == "":
		return l.Subject
	case l.Subject == "":
		return l.Kind
	}
	return l.Kind + " " + l.Subject
}

// shortKinds are the known prefixes of phase names that embed a layer name, with what a narrow
// view shows instead. TensorRT's names (docs/tensorrt.md): "Finding fastest tactic for <layer>"
// and its reformatting layers, "Reformatting CopyNode for Input Tensor <i> to <layer>" and
// "… for Output Tensor <i> to <layer>". Phases of other names ("Timing graph nodes",
// "Measuring tactic time", "Building engine") keep them.
var shortKinds = []struct {
	prefix, short string
	index         bool // the prefix is followed by "<i> to "
}{
	{prefix: "Finding fastest tactic for ", short: "tactic"},
	{prefix: "Reformatting CopyNode for Input Tensor ", short: "reformat in", index: true},
	{prefix: "Reformatting CopyNode for Output Tensor ", short: "reformat out", index: true},
}

// ShortLabel abbreviates a phase name of a known kind: "Finding fastest tactic for
// stem/conv1" is "tactic stem/conv1", "Finding fastest tactic for Reformatting CopyNode for
// Input Tensor 0 to stem/conv1" is "tactic reformat in 0 → stem/conv1", so that the layer keeps
// the room and a reformatting layer stays apart from the layer it feeds. Other names are
// returned whole as the Subject.
func ShortLabel(name string) Label {
	for _, k := range shortKinds {
		rest, ok := strings.CutPrefix(name, k.prefix)
		if !ok {
			continue
		}
		kind := k.short
		if k.index {
			i := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsDigit(r) })
			tail, ok := strings.CutPrefix(rest[max(i, 0):], " to ")
			if i <= 0 || !ok {
				continue
			}
			kind += " " + rest[:i] + " →"
			rest = tail
		}
		if rest == "" {
			continue
		}
		inner := ShortLabel(rest)
		if inner.Kind != "" {
			kind += " " + inner.Kind
		}
		return Label{Kind: kind, Subject: inner.Subject}
	}
	return Label{Subject: name}
}
