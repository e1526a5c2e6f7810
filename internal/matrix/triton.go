package matrix

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// ccRE is a compute capability as CUDA and Triton write it: major without a leading zero, a
// point, and the one-digit minor ("9.0", "12.1"). Triton's cc_model_filenames is looked up by
// std::to_string(major) + "." + std::to_string(minor), so "9.00" or "09.0" never matches.
var ccRE = regexp.MustCompile(`^[1-9][0-9]?\.[0-9]$`)

// CheckComputeCapability fails when cc is not written as Triton looks it up, with the fix:
// "9.00" → "9.0".
func CheckComputeCapability(cc string) error {
	if ccRE.MatchString(cc) {
		return nil
	}
	msg := fmt.Sprintf("compute_capability %q: write major.minor as CUDA and Triton name it, one digit after the point and no leading zero (Triton looks engines up by that text)", cc)
	if major, minor, ok := strings.Cut(cc, "."); ok {
		major = strings.TrimLeft(major, "0")
		if minor = strings.TrimRight(minor, "0"); minor == "" {
			minor = "0"
		}
		if fix := major + "." + minor; ccRE.MatchString(fix) {
			msg += fmt.Sprintf(": %q", fix)
		}
	} else {
		msg += `, e.g. "9.0"`
	}
	return errors.New(msg)
}

// TritonEngine is one engine of a Triton model: the file in the model's version folder and the
// compute capability it is for.
type TritonEngine struct {
	Cell              Cell
	ComputeCapability string
	File              string
}

// Variant names what the engines of one Triton model share: MODEL[/PROFILE]/PRECISION.
func (e TritonEngine) Variant() string {
	id := e.Cell.ID()
	return id[len(e.Cell.Target.Name)+1:]
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
	fmt.Fprintf(&b, "%s%s\n", variantLine, engines[0].Variant())
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

// variantLine starts the line of config.pbtxt that names the model's Variant, so that a later
// emit knows whose engines a model folder holds.
const variantLine = "# engines of: "

// tritonNameRE is a Triton model name trtbuild writes: a folder name of the repository.
var tritonNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// CheckTritonName fails when name cannot be a model folder of a Triton repository.
func CheckTritonName(name string) error {
	if !tritonNameRE.MatchString(name) {
		return fmt.Errorf("invalid Triton model name %q: use letters, digits, '_', '.' and '-' (a folder of the model repository)", name)
	}
	return nil
}

// checkTritonOwner fails when the config.pbtxt already in the repository (existing, nil when
// there is none) is of another Variant than variant, or was not written by trtbuild: one
// Triton model serves the engines of one model, profile and precision, and emitting another's
// into it would replace them without a word.
func checkTritonOwner(config string, existing []byte, name, variant string) error {
	if existing == nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(existing))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), variantLine); ok {
			if v == variant {
				return nil // the same engines again, rebuilt: replaced
			}
			return fmt.Errorf("Triton model %s (%s) holds the engines of %s, not %s: one Triton model serves one profile and precision; give this one its own name (--name %s-%s)",
				name, pathtext.Q(config), v, variant, name, strings.ReplaceAll(variant[strings.Index(variant, "/")+1:], "/", "-"))
		}
	}
	return fmt.Errorf("%s was not written by trtbuild matrix emit triton; give the model another name (--name) or remove that folder", pathtext.Q(config))
}

// StaleEngines returns, for each engine that is not what its cell builds now, why: its
// manifest's key is not the key the cell's options and model give now on the builder and GPU
// the manifest names (a weight changed, a build flag changed), the GPU it was built on has
// another compute capability than its target says, or it has no manifest to tell. base are
// the builder options of the matrix's build_flags.
func (f *File) StaleEngines(engines []TritonEngine, base builder.Options) ([]string, error) {
	var stale []string
	for _, e := range engines {
		why, err := f.staleEngine(e, base)
		if err != nil {
			return nil, err
		}
		if why != "" {
			stale = append(stale, fmt.Sprintf("cell %s: %s", e.Cell.ID(), why))
		}
	}
	return stale, nil
}

func (f *File) staleEngine(e TritonEngine, base builder.Options) (string, error) {
	engine := filepath.Join(f.OutputDir(), e.Cell.Engine())
	m, err := manifest.Read(manifest.Path(engine))
	if errors.Is(err, manifest.ErrNotFound) {
		return fmt.Sprintf("its engine has no manifest (%s), so what it was built from is unknown", pathtext.Q(manifest.Path(engine))), nil
	}
	if err != nil {
		return "", fmt.Errorf("the manifest of cell %s: %w", e.Cell.ID(), err)
	}
	p := m.Parts
	if p.ComputeCapability != "" && p.ComputeCapability != e.ComputeCapability {
		return fmt.Sprintf("its engine was built on a GPU of compute capability %s, but target %s says %s, which Triton would load it on", p.ComputeCapability, e.Cell.Target.Name, e.ComputeCapability), nil
	}
	return f.staleKey(e.Cell, m, base)
}

// staleKey says why the manifest m of cell's engine is not what the cell builds now ("" when
// it is): its key is not the key the cell's options and model give now on the builder and GPU
// the manifest names.
func (f *File) staleKey(cell Cell, m *manifest.Manifest, base builder.Options) (string, error) {
	p := m.Parts
	o, err := CellOptions(f, cell, RunOptions{Base: base, Backend: p.Backend}, 0, "")
	if err != nil {
		return "", err
	}
	major, _, _ := strings.Cut(p.TensorRT, ".")
	trtMajor, _ := strconv.Atoi(major)
	now, err := builder.KeyOn(o, buildkey.Target{Backend: p.Backend, TensorRT: p.TensorRT, TRTMajor: trtMajor, ONNXParser: p.ONNXParser,
		GPU: p.GPU, ComputeCapability: p.ComputeCapability, SMs: p.SMs, MIG: p.MIG})
	if err != nil {
		return "", fmt.Errorf("the key of cell %s: %w", cell.ID(), err)
	}
	if now.Key == m.Key {
		return "", nil
	}
	return fmt.Sprintf("its engine was built from %s than the matrix gives now (key %s, now %s)",
		keyChange(p, now.Parts), buildkey.Short(m.Key), buildkey.Short(now.Key)), nil
}

// keyChange says which parts of a key differ, after "built from".
func keyChange(was, now buildkey.Parts) string {
	var what []string
	if was.Graph != now.Graph {
		what = append(what, "another graph of the model")
	}
	if was.Weights != now.Weights {
		what = append(what, "other weights")
	}
	was.Graph, was.Weights, now.Graph, now.Weights = "", "", "", ""
	if was.GPU != now.GPU || was.MIG != now.MIG {
		what = append(what, "another GPU type")
	}
	was.GPU, was.MIG, now.GPU, now.MIG = "", "", "", ""
	if !reflect.DeepEqual(was, now) {
		what = append(what, "other build settings")
	}
	if len(what) == 0 {
		return "other inputs"
	}
	return strings.Join(what, " and ")
}
