package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/plan"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// addEngineCacheFlags binds --engine-cache, --engine-cache-size and --engine-cache-trust.
func addEngineCacheFlags(f *pflag.FlagSet, c *builder.EngineCache) {
	f.StringVar(&c.Dir, "engine-cache", "", "reuse engines from, and store new ones in, this `DIR`, by build key (see trtbuild key); auto: the user cache folder's trtbuild/engines")
	f.StringVar(&c.Size, "engine-cache-size", "20G", "with --engine-cache: remove the least recently used engines beyond this size")
	f.StringVar(&c.Trust, "engine-cache-trust", "self", "with --engine-cache: whose entries are served: self, group (every member of the cache folder's group), user names or ids, comma-separated (see docs/engine-cache.md)")
}

func newEngineCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Look at built engines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitcode.Usagef("engine needs a subcommand: trtbuild engine inspect ENGINE")
		},
	}
	cmd.AddCommand(newEngineInspectCmd(s))
	return cmd
}

// engineReport is what `engine inspect --json` writes.
type engineReport struct {
	Engine       string             `json:"engine"`
	Bytes        int64              `json:"bytes"`
	SHA256       string             `json:"sha256"`
	Header       plan.Header        `json:"header"`
	Manifest     *manifest.Manifest `json:"manifest,omitempty"`
	ManifestNote string             `json:"manifest_note,omitempty"`
	Problems     []string           `json:"problems,omitempty"`
}

func newEngineInspectCmd(s *streams) *cobra.Command {
	var asJSON bool
	var expectTRT, expectKey string
	cmd := &cobra.Command{
		Use:   "inspect ENGINE",
		Short: "Say what an engine file is, without a GPU: its plan header and its manifest",
		Long: `engine inspect reads an engine file in pure Go: the TensorRT version that wrote it, from the
plan header (as trtexec --getPlanVersionOnly does), or that it is a simulated plan; and the
manifest beside it (ENGINE.json), if there is one: the build key and its parts, versions, shapes,
flags and build time. It checks that the manifest describes this file (its SHA-256).

With --expect-tensorrt or --expect-key it exits with status 1 when the engine does not match,
so CI can refuse a stale engine before deploying it.`,
		Example: `  trtbuild engine inspect model.engine
  trtbuild engine inspect model.engine --expect-tensorrt 10.16 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Usagef("engine inspect takes one engine file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := inspectEngine(args[0])
			if err != nil {
				return err
			}
			if expectTRT != "" && !r.Header.Matches(expectTRT) {
				got := r.Header.TensorRT
				if r.Header.Kind == plan.KindSimulated {
					got = "none (a simulated plan)"
				} else if got == "" {
					got = "unknown"
				}
				r.Problems = append(r.Problems, fmt.Sprintf("built by TensorRT %s, expected %s", got, expectTRT))
			}
			if expectKey != "" && (r.Manifest == nil || r.Manifest.Key != expectKey) {
				got := "no manifest"
				if r.Manifest != nil {
					got = r.Manifest.Key
				}
				r.Problems = append(r.Problems, fmt.Sprintf("build key is %s, expected %s", got, expectKey))
			}
			if asJSON {
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				writeEngineText(s.Out, r)
			}
			if len(r.Problems) > 0 {
				return exitcode.Wrap(exitcode.Failed, fmt.Errorf("engine %s: %s", r.Engine, r.Problems[0]))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write one JSON document")
	cmd.Flags().StringVar(&expectTRT, "expect-tensorrt", "", "fail unless the plan was written by this TensorRT `VERSION` (10, 10.16, 10.16.0 or 10.16.0.32)")
	cmd.Flags().StringVar(&expectKey, "expect-key", "", "fail unless the manifest names this build `KEY`")
	return cmd
}

// inspectEngine reads the engine's header and manifest. A file that is no engine is a usage
// error; a manifest that does not describe the file is a problem.
func inspectEngine(path string) (*engineReport, error) {
	// The engine is opened once, as every input is (internal/regfile: never blocking on a
	// FIFO), and its header and hash read from that one descriptor.
	f, st, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, exitcode.Usagef("engine %s does not exist; check the path", q(path))
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return nil, exitcode.Usagef("engine %s is a directory; give the engine file", q(path))
	case errors.As(err, &nr):
		return nil, exitcode.Usagef("engine %s is %s, not a regular file; give the engine file", q(path), nr.Kind)
	case err != nil:
		return nil, exitcode.Usagef("cannot read engine %s: %v", q(path), exitcode.PathCause(err))
	}
	defer f.Close()
	h, err := plan.Read(io.NewSectionReader(f, 0, st.Size()))
	if errors.Is(err, plan.ErrNotEngine) {
		return nil, exitcode.Usagef("%s is %v; give a file that trtbuild or TensorRT built", q(path), err)
	}
	if err != nil {
		return nil, exitcode.Usagef("cannot read engine %s: %v", q(path), exitcode.PathCause(err))
	}
	sum, err := buildkey.HashReader(context.Background(), io.NewSectionReader(f, 0, st.Size()))
	if err != nil {
		return nil, exitcode.Usagef("cannot read engine %s: %v", q(path), exitcode.PathCause(err))
	}
	r := &engineReport{Engine: path, Bytes: st.Size(), SHA256: sum, Header: h}
	m, err := manifest.Read(manifest.Path(path))
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

func writeEngineText(w io.Writer, r *engineReport) {
	fmt.Fprintf(w, "engine     %s (%d bytes, %s)\n", r.Engine, r.Bytes, r.SHA256)
	switch r.Header.Kind {
	case plan.KindSimulated:
		fmt.Fprintf(w, "plan       simulated by trtbuild (format %d), not a TensorRT engine", r.Header.SimVersion)
		if p := r.Header.Sim["precision"]; p != "" {
			fmt.Fprintf(w, "; precision %s", p)
		}
		fmt.Fprintln(w)
	default:
		if r.Header.TensorRT != "" {
			fmt.Fprintf(w, "plan       TensorRT plan written by TensorRT %s (serialization version %d)\n", r.Header.TensorRT, r.Header.SerializationVersion)
		} else {
			fmt.Fprintf(w, "plan       TensorRT plan of serialization version %d, whose version field this trtbuild cannot read\n", r.Header.SerializationVersion)
		}
	}
	if m := r.Manifest; m != nil {
		fmt.Fprintf(w, "key        %s\n", m.Key)
		fmt.Fprintf(w, "graph      %s\n", m.Parts.Graph)
		fmt.Fprintf(w, "weights    %s\n", m.Parts.Weights)
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
		fmt.Fprintf(w, "builder    %s\n", target)
		fmt.Fprintf(w, "precision  %s\n", m.Precision)
		for i, p := range m.Parts.Profiles {
			for _, in := range p.Inputs {
				fmt.Fprintf(w, "profile %d  %s min %v opt %v max %v\n", i, in.Name, in.Min, in.Opt, in.Max)
			}
		}
		fmt.Fprintf(w, "built      %s in %.2fs by trtbuild %s from %s\n", m.BuiltAt.Format(time.RFC3339), m.BuildSeconds, m.Trtbuild, m.Model.Path)
		if m.EngineCache != nil && m.EngineCache.Hit {
			fmt.Fprintf(w, "copied     from the engine cache %s\n", m.EngineCache.Dir)
		}
	} else if r.ManifestNote != "" {
		fmt.Fprintf(w, "manifest   %s\n", r.ManifestNote)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM    %s\n", p)
	}
}
