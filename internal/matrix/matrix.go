// Package matrix reads a build matrix file (YAML: models, precisions, profiles and GPU
// targets), expands it into numbered cells, and writes what runs them elsewhere: Kubernetes
// Indexed Jobs and Slurm array scripts, one per GPU type, whose tasks each run
// `trtbuild matrix cell FILE --target T --index N` and refuse a matrix file that changed since
// (CheckSHA256). It also writes the index of a matrix run (cell → key → engine → report) and
// its HTML page, or collects it from the cells' manifests after a run elsewhere (Collect). Building a cell is the normal build with
// the cell's flags (cmd/trtbuild); this package never starts a build.
//
// The format is documented in docs/matrix.md.
package matrix

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// FormatVersion is the matrix file format version this package reads.
const FormatVersion = 1

// File is a matrix file.
type File struct {
	Version int `json:"version"`
	// Models are the ONNX models, paths relative to the matrix file's folder.
	Models []Model `json:"models"`
	// Precisions are "fp32" (the model's own types, no flag) or flags without dashes joined by
	// '+': "fp16", "bf16", "int8", "fp8", "fp16+int8".
	Precisions []string `json:"precisions"`
	// Profiles are named shape sets; each model lists the ones it is built with.
	Profiles []Profile `json:"profiles,omitempty"`
	// Targets are the GPU types to build for.
	Targets []Target `json:"targets"`
	// BuildFlags are added to every cell's build, e.g. ["--opt-level", "4", "--workspace", "4G"]:
	// any build flag but the ReservedFlags, which trtbuild sets per cell.
	BuildFlags []string `json:"build_flags,omitempty"`
	// Output is the folder for engines, manifests, reports, the index and the HTML page,
	// relative to the matrix file; default "engines".
	Output string `json:"output,omitempty"`
	// EngineCache is the engine cache folder, relative to the matrix file; default "cache".
	EngineCache string `json:"engine_cache,omitempty"`
	// Backend is the builder of every cell: auto (the default), tensorrt or sim; the
	// --backend of matrix build and matrix cell overrides it.
	Backend string `json:"backend,omitempty"`

	// Path is where the file was read from; Dir its folder.
	Path string `json:"-"`
	Dir  string `json:"-"`
	// SHA256 is the hex SHA-256 of the file's bytes as read: emitted scripts pass it to each
	// task, which refuses a matrix file that has changed since (CheckSHA256).
	SHA256 string `json:"-"`
	// OutputDefaulted and CacheDefaulted say that the file names no output or cache folder:
	// the defaults beside it are trtbuild's own folders, which follow no link.
	OutputDefaulted bool `json:"-"`
	CacheDefaulted  bool `json:"-"`
}

// Model is one model of the matrix.
type Model struct {
	// Name names the model's cells and engine files; default: the file name without .onnx.
	Name string `json:"name,omitempty"`
	Path string `json:"path"`
	// Profiles names the profiles this model is built with, one cell each; without any, the
	// model is built with its own shapes (static models, or the build's defaults).
	Profiles []string `json:"profiles,omitempty"`
	// NameDerived says that the file gave no name: Name was made from Path's file name, and
	// messages about it say so.
	NameDerived bool `json:"-"`
}

// what names the model in a message: its name, and where a name the file did not give came
// from.
func (m Model) what() string {
	if m.NameDerived {
		return fmt.Sprintf("%q, derived from the file name of %s,", m.Name, pathtext.Q(m.Path))
	}
	return fmt.Sprintf("%q", m.Name)
}

// origin says where models[i]'s name came from.
func (m Model) origin(i int) string {
	if m.NameDerived {
		return fmt.Sprintf("models[%d]'s derived from the file name of %s", i, pathtext.Q(m.Path))
	}
	return fmt.Sprintf("models[%d]'s given as name:", i)
}

// Profile is a named set of shape flags, as the build takes them.
type Profile struct {
	Name   string `json:"name"`
	Shapes string `json:"shapes,omitempty"`
	Min    string `json:"min,omitempty"`
	Opt    string `json:"opt,omitempty"`
	Max    string `json:"max,omitempty"`
}

// Target is one GPU type.
type Target struct {
	// Name is short, used in file names, Job names and --target; e.g. "h100".
	Name string `json:"name"`
	// GPU is the value of the node label nvidia.com/gpu.product (GPU Feature Discovery), which
	// is the CUDA device name with spaces as dashes, e.g. "NVIDIA-H100-80GB-HBM3"; for a MIG
	// target, the whole GPU's (the label under the device plugin's "mixed" strategy).
	GPU string `json:"gpu"`
	// ComputeCapability is "major.minor", e.g. "9.0": for Triton's cc_model_filenames.
	ComputeCapability string `json:"compute_capability,omitempty"`
	// MIG is a MIG profile, e.g. "1g.10gb": the target is a slice of that profile of GPU, and
	// only such a slice builds its cells (Mismatch); the Kubernetes resource becomes
	// nvidia.com/mig-<MIG>. Without it the target is the whole GPU, and a slice does not do.
	MIG string `json:"mig,omitempty"`
	// Gres is Slurm's GPU type for --gres=gpu:TYPE:1; default Name. A MIG target's Slurm
	// script needs it given: the type slurm.conf names the slice by.
	Gres string `json:"gres,omitempty"`
	// GresDefaulted says that the file gave no gres.
	GresDefaulted bool `json:"-"`
}

// Cell is one build of the matrix.
type Cell struct {
	// Index numbers all cells from 0, target by target; TargetIndex numbers the cells of one
	// target from 0 (what JOB_COMPLETION_INDEX and SLURM_ARRAY_TASK_ID hold).
	Index, TargetIndex int
	Target             Target
	Model              Model
	Profile            *Profile // nil: the model's own shapes
	Precision          string
}

// ID names the cell: target/model[/profile]/precision.
func (c Cell) ID() string {
	parts := []string{c.Target.Name, c.Model.Name}
	if c.Profile != nil {
		parts = append(parts, c.Profile.Name)
	}
	return strings.Join(append(parts, c.Precision), "/")
}

// Engine is the cell's engine path below the output folder:
// TARGET/MODEL/[PROFILE-]PRECISION.engine. Precisions hold no dash, so no two cells share a
// path.
func (c Cell) Engine() string {
	name := c.Precision
	if c.Profile != nil {
		name = c.Profile.Name + "-" + name
	}
	return filepath.Join(c.Target.Name, c.Model.Name, name+".engine")
}

// Flags are the build flags of the cell (precision, shapes, then the matrix's build flags),
// without the model, the output and the backend.
func (c Cell) Flags(f *File) []string {
	var out []string
	if c.Precision != "fp32" {
		for _, p := range strings.Split(c.Precision, "+") {
			out = append(out, "--"+p)
		}
	}
	if p := c.Profile; p != nil {
		for _, s := range []struct{ flag, v string }{{"--shapes", p.Shapes}, {"--min-shapes", p.Min}, {"--opt-shapes", p.Opt}, {"--max-shapes", p.Max}} {
			if s.v != "" {
				out = append(out, s.flag, s.v)
			}
		}
	}
	return append(out, f.BuildFlags...)
}

// FlagsText is Flags written as a shell reads them: each flag or value quoted where a POSIX
// shell would split or expand it (a profile's input name with a space).
func (c Cell) FlagsText(f *File) string {
	flags := c.Flags(f)
	quoted := make([]string, len(flags))
	for i, fl := range flags {
		quoted[i] = shellArg(fl)
	}
	return strings.Join(quoted, " ")
}

// ModelPath is the cell's model, relative to the working folder.
func (c Cell) ModelPath(f *File) string { return f.Resolve(c.Model.Path) }

// Resolve makes a path of the matrix file relative to the working folder.
func (f *File) Resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// OutputDir and CacheDir are the output and engine cache folders, resolved.
func (f *File) OutputDir() string { return f.Resolve(f.Output) }
func (f *File) CacheDir() string  { return f.Resolve(f.EngineCache) }

var (
	nameRE      = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)
	precisionRE = regexp.MustCompile(`^(fp32|(fp16|bf16|int8|fp8)(\+(fp16|bf16|int8|fp8))*)$`)
	gpuRE       = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
	migRE       = regexp.MustCompile(`^[0-9]+g\.[0-9]+gb$`)
	gresRE      = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

// ReservedFlags are the build flags trtbuild sets per cell (Cell.Flags, and the output, model,
// backend, cache, report and device of the cell's build), by the names the build defines them
// under: a matrix's build_flags may not set them in any spelling. The build command checks
// build_flags against this list once it has parsed them with its own flag set, which resolves
// every spelling it accepts (--FP16, --saveEngine, -o, --fp16=false) to these names.
var ReservedFlags = []string{"save-engine", "onnx", "backend", "progress", "engine-cache", "engine-cache-size",
	"fp16", "bf16", "int8", "fp8", "best", "shapes", "min-shapes", "opt-shapes", "max-shapes", "profile",
	"report", "trace", "device"}

// Reserved reports whether the build flag named name (as the build defines it) is set per cell.
func Reserved(name string) bool { return slices.Contains(ReservedFlags, name) }

// MaxFileSize bounds a matrix file: a matrix lists models, precisions, profiles and targets,
// which take kilobytes; anything near this size is not a matrix file, and is not read whole.
const MaxFileSize = 16 << 20

// ErrTooLarge is the error of Load for a file larger than MaxFileSize.
var ErrTooLarge = errors.New("larger than 16 MiB")

// Load reads and checks a matrix file. The file is opened as every input is
// (internal/regfile: never blocking on a FIFO, regular files only) and read up to
// MaxFileSize. Errors opening it are *fs.PathError or *regfile.NotRegularError, a file too
// large wraps ErrTooLarge, and unknown fields are errors, so a typo is not ignored.
func Load(path string) (*File, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("matrix file %s: %w", pathtext.Q(path), err)
	}
	f.Path, f.Dir = path, filepath.Dir(path)
	return f, nil
}

// readFile reads a regular file of at most MaxFileSize bytes.
func readFile(path string) ([]byte, error) {
	fh, st, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	tooLarge := fmt.Errorf("matrix file %s is %w", pathtext.Q(path), ErrTooLarge)
	if st.Size() > MaxFileSize {
		return nil, tooLarge
	}
	// The size said is checked, and the read bounded too: a file may grow while it is read.
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge
	}
	return data, nil
}

// Parse decodes and checks a matrix file's content.
func Parse(data []byte) (*File, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("not a valid matrix file: %v", strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: "))
	}
	for i, text := range computeCapabilityTexts(data) {
		if i < len(f.Targets) {
			f.Targets[i].ComputeCapability = text
		}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	f.SHA256 = hex.EncodeToString(sum[:])
	return &f, nil
}

func (f *File) check() error {
	if f.Version != FormatVersion {
		return fmt.Errorf("version: %d; write \"version: %d\" (the format this trtbuild reads)", f.Version, FormatVersion)
	}
	if f.Output == "" {
		f.Output, f.OutputDefaulted = "engines", true
	}
	if f.EngineCache == "" {
		f.EngineCache, f.CacheDefaulted = "cache", true
	}
	switch f.Backend {
	case "":
		f.Backend = "auto"
	case "auto", "tensorrt", "sim":
	default:
		return fmt.Errorf("backend %q: use auto, tensorrt or sim", f.Backend)
	}
	if len(f.Models) == 0 || len(f.Precisions) == 0 || len(f.Targets) == 0 {
		return errors.New("models, precisions and targets each need at least one entry")
	}
	profiles := map[string]*Profile{}
	for i := range f.Profiles {
		p := &f.Profiles[i]
		if !nameRE.MatchString(p.Name) {
			return fmt.Errorf("profiles[%d]: name %q: use lowercase letters, digits and dashes (up to 32)", i, p.Name)
		}
		if profiles[p.Name] != nil {
			return fmt.Errorf("profiles: %q given twice", p.Name)
		}
		if p.Shapes == "" && p.Min == "" && p.Opt == "" && p.Max == "" {
			return fmt.Errorf("profiles[%d] (%s): give shapes, or min/opt/max", i, p.Name)
		}
		profiles[p.Name] = p
	}
	models := map[string]int{} // name → index
	for i := range f.Models {
		m := &f.Models[i]
		if m.Path == "" {
			return fmt.Errorf("models[%d]: no path", i)
		}
		if m.Name == "" {
			m.NameDerived = true
			base := filepath.Base(m.Path)
			m.Name = strings.ToLower(strings.TrimSuffix(base, filepath.Ext(base)))
			m.Name = strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
					return r
				}
				return '-'
			}, m.Name)
		}
		if !nameRE.MatchString(m.Name) {
			if m.NameDerived {
				return fmt.Errorf("models[%d]: name %s is not a valid name: use lowercase letters, digits and dashes (up to 32, no dash first or last); give the model a name:", i, m.what())
			}
			return fmt.Errorf("models[%d]: name %q: use lowercase letters, digits and dashes (up to 32); set name:", i, m.Name)
		}
		if j, ok := models[m.Name]; ok {
			return fmt.Errorf("models[%d] and models[%d] have the same name %q (%s, %s); give one of them another name:", j, i, m.Name, f.Models[j].origin(j), m.origin(i))
		}
		models[m.Name] = i
		for _, p := range m.Profiles {
			if profiles[p] == nil {
				return fmt.Errorf("models[%d] (%s): profile %q is not in profiles", i, strings.TrimSuffix(m.what(), ","), p)
			}
		}
	}
	seen := map[string]bool{}
	for i, p := range f.Precisions {
		if !precisionRE.MatchString(p) {
			return fmt.Errorf("precisions[%d]: %q: use fp32, fp16, bf16, int8, fp8, or a combination like fp16+int8", i, p)
		}
		if seen[p] {
			return fmt.Errorf("precisions: %q given twice", p)
		}
		seen[p] = true
	}
	targets := map[string]bool{}
	for i := range f.Targets {
		t := &f.Targets[i]
		if !nameRE.MatchString(t.Name) {
			return fmt.Errorf("targets[%d]: name %q: use lowercase letters, digits and dashes (up to 32)", i, t.Name)
		}
		if targets[t.Name] {
			return fmt.Errorf("targets: %q given twice", t.Name)
		}
		targets[t.Name] = true
		if !gpuRE.MatchString(t.GPU) {
			return fmt.Errorf("targets[%d] (%s): gpu %q: give the node label nvidia.com/gpu.product, e.g. NVIDIA-H100-80GB-HBM3", i, t.Name, t.GPU)
		}
		if t.MIG != "" && !migRE.MatchString(t.MIG) {
			return fmt.Errorf("targets[%d] (%s): mig %q: give a MIG profile like 1g.10gb", i, t.Name, t.MIG)
		}
		if t.ComputeCapability != "" {
			if err := CheckComputeCapability(t.ComputeCapability); err != nil {
				return fmt.Errorf("targets[%d] (%s): %v", i, t.Name, err)
			}
		}
		if t.Gres == "" {
			t.Gres, t.GresDefaulted = t.Name, true
		}
		if !gresRE.MatchString(t.Gres) {
			return fmt.Errorf("targets[%d] (%s): gres %q: give Slurm's GPU type", i, t.Name, t.Gres)
		}
	}
	// build_flags are checked by the build command, which parses them with its flag set
	// (see ReservedFlags).
	return nil
}

// Cells expands the matrix: for each target, each model, each of its profiles, each precision.
func (f *File) Cells() []Cell {
	var cells []Cell
	for _, t := range f.Targets {
		n := 0
		for _, m := range f.Models {
			for _, p := range f.modelProfiles(m) {
				for _, prec := range f.Precisions {
					cells = append(cells, Cell{Index: len(cells), TargetIndex: n, Target: t, Model: m, Profile: p, Precision: prec})
					n++
				}
			}
		}
	}
	return cells
}

func (f *File) modelProfiles(m Model) []*Profile {
	names := m.Profiles
	if len(names) == 0 {
		return []*Profile{nil}
	}
	var out []*Profile
	for _, n := range names {
		for i := range f.Profiles {
			if f.Profiles[i].Name == n {
				out = append(out, &f.Profiles[i])
			}
		}
	}
	return out
}

// TargetCells returns the cells of one target, in TargetIndex order; ok false for an unknown
// target.
func (f *File) TargetCells(target string) (cells []Cell, ok bool) {
	for _, t := range f.Targets {
		if t.Name == target {
			ok = true
		}
	}
	for _, c := range f.Cells() {
		if c.Target.Name == target {
			cells = append(cells, c)
		}
	}
	return cells, ok
}

// Find returns cell index of target (or of the whole matrix when target is "").
func (f *File) Find(target string, index int) (Cell, error) {
	cells := f.Cells()
	if target != "" {
		var ok bool
		if cells, ok = f.TargetCells(target); !ok {
			return Cell{}, fmt.Errorf("no target %q in the matrix; targets: %s", target, f.targetNames())
		}
	}
	if index < 0 || index >= len(cells) {
		what := "the matrix has"
		if target != "" {
			what = "target " + target + " has"
		}
		return Cell{}, fmt.Errorf("no cell %d: %s %d cells, 0 to %d", index, what, len(cells), len(cells)-1)
	}
	return cells[index], nil
}

func (f *File) targetNames() string {
	var names []string
	for _, t := range f.Targets {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// GPULabel turns a CUDA device name into the form of the nvidia.com/gpu.product label
// (spaces become dashes), to match a target's gpu.
func GPULabel(deviceName string) string {
	return strings.Join(strings.Fields(deviceName), "-")
}
