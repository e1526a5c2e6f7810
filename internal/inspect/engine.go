package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/plan"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// EngineReport is what `trtbuild engine inspect` finds in an engine file (--json writes it).
type EngineReport struct {
	Engine       string             `json:"engine"`
	Bytes        int64              `json:"bytes"`
	SHA256       string             `json:"sha256"`
	Header       plan.Header        `json:"header"`
	Manifest     *manifest.Manifest `json:"manifest,omitempty"`
	ManifestNote string             `json:"manifest_note,omitempty"`
	Problems     []string           `json:"problems,omitempty"`
}

// Engine reads the engine's header and manifest. A file that is no engine is a usage
// error; a manifest that does not describe the file is a problem.
func Engine(path string) (*EngineReport, error) {
	// The engine is opened once, as every input is (internal/regfile: never blocking on a
	// FIFO), and its header and hash read from that one descriptor.
	f, st, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, exitcode.Usagef("engine %s does not exist", pathtext.Q(path)).Hintf("check the path")
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return nil, exitcode.Usagef("engine %s is a directory", pathtext.Q(path)).Hintf("give the engine file")
	case errors.As(err, &nr):
		return nil, exitcode.Usagef("engine %s is %s, not a regular file", pathtext.Q(path), nr.Kind).Hintf("give the engine file")
	case err != nil:
		return nil, exitcode.Usagef("cannot read engine %s: %v", pathtext.Q(path), exitcode.PathCause(err))
	}
	defer f.Close()
	return EngineOf(f, st, path, func() (*manifest.Manifest, error) { return manifest.Read(manifest.Path(path)) })
}

// EngineOf is Engine of an engine already open, f (st its Stat), named path in the report, with
// the manifest readManifest gives (manifest.ErrNotFound when there is none): what a caller
// that opened and verified the file itself reports, without opening it again by its name.
func EngineOf(f *os.File, st os.FileInfo, path string, readManifest func() (*manifest.Manifest, error)) (*EngineReport, error) {
	h, err := plan.Read(io.NewSectionReader(f, 0, st.Size()))
	if errors.Is(err, plan.ErrNotEngine) {
		return nil, exitcode.Usagef("%s is %v", pathtext.Q(path), err).Hintf("give a file that trtbuild or TensorRT built")
	}
	if err != nil {
		return nil, exitcode.Usagef("cannot read engine %s: %v", pathtext.Q(path), exitcode.PathCause(err))
	}
	sum, err := buildkey.HashReader(context.Background(), io.NewSectionReader(f, 0, st.Size()))
	if err != nil {
		return nil, exitcode.Usagef("cannot read engine %s: %v", pathtext.Q(path), exitcode.PathCause(err))
	}
	r := &EngineReport{Engine: path, Bytes: st.Size(), SHA256: sum, Header: h}
	m, err := readManifest()
	switch {
	case errors.Is(err, manifest.ErrNotFound):
		r.ManifestNote = "no manifest (" + filepath.Base(manifest.Path(path)) + ") beside the engine"
	case err != nil:
		r.Problems = append(r.Problems, fmt.Sprintf("manifest unreadable: %v", err))
	default:
		r.Manifest = m
		if m.Engine.SHA256 != sum {
			r.Problems = append(r.Problems, "the manifest describes another file (SHA-256 differs): the engine was replaced after it was written")
		}
		if h.Kind == plan.KindTensorRT && m.TensorRT != "" && h.TensorRT != "" && m.TensorRT != h.TensorRT {
			r.Problems = append(r.Problems, fmt.Sprintf("the manifest says TensorRT %s, the plan header %s", m.TensorRT, h.TensorRT))
		}
	}
	return r, nil
}

// WriteText writes the report as `trtbuild engine inspect` shows it. What the plan header and the
// manifest beside the engine say is shown through pathtext (names quoted, text on one line):
// another user may have written either, and neither may forge a line or drive the terminal.
func (r *EngineReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "engine     %s (%d bytes, %s)\n", pathtext.Q(r.Engine), r.Bytes, r.SHA256)
	switch r.Header.Kind {
	case plan.KindSimulated:
		fmt.Fprintf(w, "plan       simulated by trtbuild (format %d), not a TensorRT engine", r.Header.SimVersion)
		if p := r.Header.Sim["precision"]; p != "" {
			fmt.Fprintf(w, "; precision %s", pathtext.Line(p))
		}
		fmt.Fprintln(w)
	default:
		if r.Header.TensorRT != "" {
			fmt.Fprintf(w, "plan       TensorRT plan written by TensorRT %s (serialization version %d)\n", pathtext.Line(r.Header.TensorRT), r.Header.SerializationVersion)
		} else {
			fmt.Fprintf(w, "plan       TensorRT plan of serialization version %d, whose version field this trtbuild cannot read\n", r.Header.SerializationVersion)
		}
	}
	if m := r.Manifest; m != nil {
		fmt.Fprintf(w, "key        %s\n", pathtext.Line(m.Key))
		fmt.Fprintf(w, "graph      %s\n", pathtext.Line(m.Parts.Graph))
		fmt.Fprintf(w, "weights    %s\n", pathtext.Line(m.Parts.Weights))
		target := m.Backend
		if m.TensorRT != "" {
			target += " " + m.TensorRT
		}
		if m.Parts.GPU != "" {
			target += ", " + m.Parts.GPU
		}
		if m.Parts.ComputeCapability != "" {
			target += " (sm " + m.Parts.ComputeCapability + ")"
		}
		fmt.Fprintf(w, "builder    %s\n", pathtext.Line(target))
		fmt.Fprintf(w, "precision  %s\n", pathtext.Line(m.Precision))
		for i, p := range m.Parts.Profiles {
			for _, in := range p.Inputs {
				fmt.Fprintf(w, "profile %d  %s min %v opt %v max %v\n", i, pathtext.Q(in.Name), in.Min, in.Opt, in.Max)
			}
		}
		fmt.Fprintf(w, "built      %s in %.2fs by trtbuild %s from %s\n", m.BuiltAt.Format(time.RFC3339), m.BuildSeconds, pathtext.Line(m.Trtbuild), pathtext.Q(m.Model.Path))
		if m.EngineCache != nil && m.EngineCache.Hit {
			fmt.Fprintf(w, "copied     from the engine cache %s\n", pathtext.Q(m.EngineCache.Dir))
		}
	} else if r.ManifestNote != "" {
		fmt.Fprintf(w, "manifest   %s\n", pathtext.Line(r.ManifestNote))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM    %s\n", pathtext.Line(p))
	}
}

// Expect adds a problem for each expectation the engine does not meet: trt, the TensorRT
// version that wrote it (10, 10.16, … ; "" none), and key, the build key its manifest names
// ("" none).
func (r *EngineReport) Expect(trt, key string) {
	if trt != "" && !r.Header.Matches(trt) {
		got := r.Header.TensorRT
		if r.Header.Kind == plan.KindSimulated {
			got = "none (a simulated plan)"
		} else if got == "" {
			got = "unknown"
		}
		r.Problems = append(r.Problems, fmt.Sprintf("built by TensorRT %s, expected %s", got, trt))
	}
	if key != "" && (r.Manifest == nil || r.Manifest.Key != key) {
		got := "no manifest"
		if r.Manifest != nil {
			got = r.Manifest.Key
		}
		r.Problems = append(r.Problems, fmt.Sprintf("build key is %s, expected %s", got, key))
	}
}
