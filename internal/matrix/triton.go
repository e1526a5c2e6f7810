package matrix

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// TritonEngine is one engine of a Triton model: the file in the model's version folder and the
// compute capability it is for.
type TritonEngine struct {
	Cell              Cell
	ComputeCapability string
	File              string
}

// TritonEngines picks the cells of one model, precision and profile (profile "" for a model
// without profiles), one per target, for a Triton model whose cc_model_filenames maps each
// compute capability to its engine. Every target needs a compute_capability, and two targets
// of one capability would give Triton two engines for one key, so that is an error.
func (f *File) TritonEngines(model, precision, profile string) ([]TritonEngine, error) {
	var out []TritonEngine
	seen := map[string]string{}
	for _, c := range f.Cells() {
		p := ""
		if c.Profile != nil {
			p = c.Profile.Name
		}
		if c.Model.Name != model || c.Precision != precision || p != profile {
			continue
		}
		cc := c.Target.ComputeCapability
		if cc == "" {
			return nil, fmt.Errorf("target %s has no compute_capability; Triton picks engines by it", c.Target.Name)
		}
		if other, dup := seen[cc]; dup {
			return nil, fmt.Errorf("targets %s and %s both have compute capability %s; Triton can load only one engine per capability, so leave one out (--targets)", other, c.Target.Name, cc)
		}
		seen[cc] = c.Target.Name
		out = append(out, TritonEngine{Cell: c, ComputeCapability: cc, File: c.Target.Name + ".plan"})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cell of model %q, precision %q and profile %q in the matrix; see trtbuild matrix list", model, precision, profile)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ComputeCapability < out[j].ComputeCapability })
	return out, nil
}

// TritonConfig returns the config.pbtxt of a TensorRT model named name whose engines are
// picked by compute capability. Inputs and outputs are left for Triton to read from the engine
// (its auto-complete for TensorRT plans).
func TritonConfig(name string, engines []TritonEngine) string {
	var b strings.Builder
	b.WriteString("# Written by trtbuild matrix emit triton.\n")
	fmt.Fprintf(&b, "name: %s\n", strconv.Quote(name))
	b.WriteString("platform: \"tensorrt_plan\"\n")
	b.WriteString("cc_model_filenames [\n")
	for i, e := range engines {
		sep := ","
		if i == len(engines)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  { key: %s value: %s }%s\n", strconv.Quote(e.ComputeCapability), strconv.Quote(e.File), sep)
	}
	b.WriteString("]\n")
	return b.String()
}
