package progress

import (
	"strings"
	"unicode"
)

// TimingPhase is the name of TensorRT's node-timing phase ("Timing graph nodes"): one step per
// node (layer) of the optimized graph. Its child phases search the nodes' tactics: in
// TensorRT 10.16 and 11.x "Evaluating tactic times" (its steps the tactics; several of them
// between two steps of the parent, none for a node served by the timing cache), in 8.7 and
// 9.x "Finding fastest tactic for <layer>", one per layer. It is the one phase whose pace says
// how long it still runs (see Pace). TensorRT 10.16 and 11.x name no layer in any phase: the
// layer a build works on is known only from TensorRT's log (see State.FailedNode).
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
// view shows instead: TensorRT 8.7 and 9.x's "Finding fastest tactic for <layer>" and its
// reformatting layers, "Reformatting CopyNode for Input Tensor <i> to <layer>" and "… for
// Output Tensor <i> to <layer>" (the simulated builder reports them too). No phase of TensorRT
// 10.16 or 11.x names a layer ("Evaluating tactic times", "Preparing graph for optimization"):
// they, and every other name, are kept whole and are no layer's.
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

// Layer returns the layer a phase name names, or "" when it names none: only names of a kind
// known to carry one do ("Finding fastest tactic for stem/conv1" names "stem/conv1"). A name
// that merely says what it is for ("Preparing graph for optimization") names no layer.
func Layer(name string) string {
	l := ShortLabel(name)
	if l.Kind == "" {
		return ""
	}
	return l.Subject
}
