package convert

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Summary says what a conversion changed and what it kept, and why. It is
// written as text by WriteText and as JSON by encoding/json (the field
// names below are the JSON schema; docs/convert.md describes it).
type Summary struct {
	// Target is the type float32 values were converted to.
	Target Target `json:"target"`
	// KeepIOTypes is true when the main graph's inputs and outputs kept their types.
	KeepIOTypes bool `json:"keep_io_types"`
	// AlreadyTarget is true when the model is already in the target type:
	// it has no float32 values but, perhaps, inputs and outputs kept in
	// float32 and cast at the boundary. The conversion changes nothing, and
	// `trtbuild convert` writes no file.
	AlreadyTarget bool `json:"already_target"`
	// Nodes counts the nodes that read or make float32 values, Constant
	// and ConstantOfShape nodes aside.
	Nodes Counts `json:"nodes"`
	// Constants counts the float32 Constant and ConstantOfShape nodes.
	Constants Counts `json:"constants"`
	// Initializers counts the float32 initializers and their data.
	Initializers InitializerCounts `json:"initializers"`
	// KeptNodes are the nodes that stay in float32.
	KeptNodes []KeptNode `json:"kept_nodes"`
	// KeptWeights are the float32 initializers and constants that stay.
	KeptWeights []KeptWeight `json:"kept_weights"`
	// InsertedCasts are the Cast nodes added at precision boundaries.
	InsertedCasts []InsertedCast `json:"inserted_casts"`
	// RetargetedCasts are the model's own Cast nodes that made float32 and
	// now make the target type.
	RetargetedCasts []string `json:"retargeted_casts"`
	// Inputs and Outputs are the main graph's float32 inputs and outputs.
	Inputs  []IOType `json:"inputs"`
	Outputs []IOType `json:"outputs"`
	// OpsetShortfall is set when nodes stay in float32 only because the model's opset has no
	// target-type version of their operators (Conv has no bfloat16 before opset 22): a newer
	// export would convert them. Headline says it in a line.
	OpsetShortfall *OpsetShortfall `json:"opset_shortfall,omitempty"`
	// Warnings are one-line messages for the user, such as overflows.
	Warnings []string `json:"warnings"`
	// Files are the written files, when the model was written.
	Files *Files `json:"files,omitempty"`
}

// OpsetShortfall counts the nodes an older opset keeps in float32: Nodes of the operators Ops
// stay float32 at the model's Opset, and opset Need has target-type versions of them all.
type OpsetShortfall struct {
	Opset int       `json:"opset"`
	Need  int       `json:"need_opset"`
	Nodes int       `json:"nodes"`
	Ops   []OpNodes `json:"ops"`
}

// OpNodes is an operator and a count of its nodes.
type OpNodes struct {
	Op    string `json:"op"`
	Nodes int    `json:"nodes"`
}

// Headline says in one line, before anything is written, how much of the model stays in
// float32 and, when an older opset is why, what to do: "9 of 24 nodes stay float32, 8 of them
// because opset 17 has no bfloat16 Conv, GlobalAveragePool or MaxPool: re-export with opset 22".
// It is "" when no node stays in float32 for the opset's sake.
func (s Summary) Headline() string {
	o := s.OpsetShortfall
	if o == nil {
		return ""
	}
	ops := make([]string, len(o.Ops))
	for i, op := range o.Ops {
		ops[i] = op.Op
	}
	list := strings.Join(ops, ", ")
	if len(ops) > 1 {
		list = strings.Join(ops[:len(ops)-1], ", ") + " or " + ops[len(ops)-1]
	}
	total := s.Nodes.Converted + s.Nodes.Kept
	return fmt.Sprintf("%d of %d nodes stay float32, %d of them because opset %d has no %s %s: re-export with opset %d (or upgrade the model to it) to convert them",
		s.Nodes.Kept, total, o.Nodes, o.Opset, s.Target.elemName(), list, o.Need)
}

// Counts counts converted and kept items.
type Counts struct {
	Converted int `json:"converted"`
	Kept      int `json:"kept"`
}

// InitializerCounts counts initializers and the bytes of their data.
type InitializerCounts struct {
	Converted   int   `json:"converted"`
	Kept        int   `json:"kept"`
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`
}

// KeptNode is a node that stays in float32.
type KeptNode struct {
	Name   string `json:"name"`
	Op     string `json:"op"`
	Graph  string `json:"graph,omitempty"` // "" for the main graph
	Reason string `json:"reason"`          // a Reason* code
	Detail string `json:"detail"`
}

// KeptWeight is a float32 initializer or constant that stays in float32.
type KeptWeight struct {
	Name   string `json:"name"`
	Graph  string `json:"graph,omitempty"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// InsertedCast is a Cast node the conversion added.
type InsertedCast struct {
	Node   string `json:"node"`
	Tensor string `json:"tensor"`
	To     string `json:"to"` // "float", "float16" or "bfloat16"
	Graph  string `json:"graph,omitempty"`
}

// IOType is a main-graph input or output and its element type before and after.
type IOType struct {
	Name   string `json:"name"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Files are the files a conversion wrote.
type Files struct {
	Model     string `json:"model"`
	ModelSize int64  `json:"model_bytes"`
	Data      string `json:"data,omitempty"`
	DataSize  int64  `json:"data_bytes,omitempty"`
}

// JSON returns the summary as indented JSON with a trailing newline.
func (s Summary) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding summary: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteText writes the summary for people: counts, then what stayed in
// float32 grouped by reason, casts, inputs and outputs. Warnings are not
// included; print them separately.
func (s Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	tn := s.Target.elemName()
	fmt.Fprintf(&b, "nodes:        %d converted to %s, %d kept in float32\n", s.Nodes.Converted, tn, s.Nodes.Kept)
	fmt.Fprintf(&b, "initializers: %d converted, %d kept (%s -> %s)\n", s.Initializers.Converted, s.Initializers.Kept,
		progress.FormatBytes(s.Initializers.BytesBefore), progress.FormatBytes(s.Initializers.BytesAfter))
	if s.Constants.Converted+s.Constants.Kept > 0 {
		fmt.Fprintf(&b, "constants:    %d converted, %d kept\n", s.Constants.Converted, s.Constants.Kept)
	}
	fmt.Fprintf(&b, "casts:        %d inserted, %d retargeted\n", len(s.InsertedCasts), len(s.RetargetedCasts))
	if len(s.KeptNodes) > 0 {
		b.WriteString("kept in float32:\n")
		type group struct {
			reason, detail string
			ops            map[string]int
		}
		var groups []*group
		index := map[string]*group{}
		for _, k := range s.KeptNodes {
			key := k.Reason + "\x00" + k.Detail
			if k.Reason == ReasonDefault || k.Reason == ReasonKeepOps {
				key = k.Reason + "\x00" + k.Op
			}
			g := index[key]
			if g == nil {
				g = &group{reason: k.Reason, detail: k.Detail, ops: map[string]int{}}
				index[key] = g
				groups = append(groups, g)
			}
			g.ops[k.Op]++
		}
		for _, g := range groups {
			var ops []string
			for _, op := range sortedKeys(g.ops) {
				ops = append(ops, fmt.Sprintf("%s x%d", op, g.ops[op]))
			}
			fmt.Fprintf(&b, "  %-28s %s: %s\n", strings.Join(ops, ", "), g.reason, g.detail)
		}
	}
	for _, k := range s.KeptWeights {
		fmt.Fprintf(&b, "  weight %-21q %s: %s\n", k.Name, k.Reason, k.Detail)
	}
	ioLine := func(label string, xs []IOType) {
		if len(xs) == 0 {
			return
		}
		var parts []string
		for _, x := range xs {
			if x.Before == x.After {
				parts = append(parts, fmt.Sprintf("%s %s", x.Name, x.After))
			} else {
				parts = append(parts, fmt.Sprintf("%s %s -> %s", x.Name, x.Before, x.After))
			}
		}
		sort.Strings(parts)
		fmt.Fprintf(&b, "%-13s %s\n", label+":", strings.Join(parts, ", "))
	}
	ioLine("inputs", s.Inputs)
	ioLine("outputs", s.Outputs)
	if s.Files != nil {
		fmt.Fprintf(&b, "wrote:        %s (%s)", s.Files.Model, progress.FormatBytes(s.Files.ModelSize))
		if s.Files.Data != "" {
			fmt.Fprintf(&b, " and %s (%s)", s.Files.Data, progress.FormatBytes(s.Files.DataSize))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
