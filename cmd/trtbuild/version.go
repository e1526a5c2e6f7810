package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
)

func newVersionCmd(s *streams) *cobra.Command {
	var q versionQuery
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show trtbuild's version, the TensorRT it was built for and the one it finds, and the GPU",
		Long: `Show trtbuild's version, the TensorRT and CUDA headers it was compiled against, and the
TensorRT libraries it finds where a build would look (--tensorrt-lib, TRTBUILD_TENSORRT_LIB,
TENSORRT_ROOT, pip's tensorrt_libs in VIRTUAL_ENV, CONDA_PREFIX, the user's and the system's
site-packages, then the system's library search), what else it saw, the CUDA driver and the
GPU. It exits 0 also when TensorRT is not found, and then says where it looked. trtbuild
--version prints the same.

--json writes the same facts as one JSON object, for programs: version, commit, go, os,
arch, and tensorrt: compiled_in, found, the version found or the reason none was, and the
probe's whole report (libraries, GPU, the builder check).

--check-builder also creates (and deletes) a TensorRT builder on --device, as a build would:
TensorRT loads its builder resource library then, by file name, so a library path that lacks
it is found here, before a build. A failed check prints what TensorRT said and a hint naming
the missing library and the folder to add, and exits 1.`,
		Example: `  trtbuild version
  trtbuild version --json
  trtbuild version --check-builder --device 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeVersion(s, q)
		},
	}
	cmd.Flags().IntVar(&q.device, "device", 0, "CUDA device to describe")
	cmd.Flags().BoolVar(&q.checkBuilder, "check-builder", false, "also create and delete a TensorRT builder on --device, as a build would (exit 1 if TensorRT makes none)")
	cmd.Flags().BoolVar(&q.asJSON, "json", false, "write the same facts as one JSON object")
	buildflags.AddTensorRTLib(cmd.Flags(), &q.libDir)
	return cmd
}

// versionQuery is what `trtbuild version` (and trtbuild --version) is asked: the device and
// TensorRT folder to describe, whether to check that a builder can be made, and the format.
type versionQuery struct {
	device       int
	libDir       string
	checkBuilder bool
	asJSON       bool
}

// versionReport is `trtbuild version --json`: the facts the text shows.
type versionReport struct {
	Version  string          `json:"version"`
	Commit   string          `json:"commit"` // "" when unknown
	Go       string          `json:"go"`
	OS       string          `json:"os"`
	Arch     string          `json:"arch"`
	TensorRT versionTensorRT `json:"tensorrt"`
}

// versionTensorRT is what version found of TensorRT.
type versionTensorRT struct {
	// CompiledFor are the TensorRT versions whose shims are compiled in, oldest first
	// ("10.16", "11.1"): it builds with a TensorRT of either major.
	CompiledFor []string `json:"compiled_for"`
	// Shim is the major of the shim that builds with the TensorRT found (0 when none was).
	Shim int `json:"shim,omitempty"`
	// Found says that the TensorRT libraries were found and loaded; Version is theirs
	// (10.16.0.72), Reason why none was (or why the probe could not run).
	Found   bool   `json:"found"`
	Version string `json:"version,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Probe is everything the probe saw: headers, libraries, the GPU, the builder check.
	Probe *builder.TargetReport `json:"probe,omitempty"`
}

// writeVersion writes the version's report to stdout, as text or as JSON (q.asJSON). It fails
// when the report could not be written, and with --check-builder when TensorRT makes no builder.
func writeVersion(s *streams, q versionQuery) error {
	v := versionReport{Version: builder.Version, Commit: commitID(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	var text bytes.Buffer
	fmt.Fprintf(&text, "trtbuild %s%s\n", v.Version, commitSuffix(v.Commit))
	fmt.Fprintf(&text, "go        %s %s/%s\n", v.Go, v.OS, v.Arch)
	var checkErr error
	dir, err := builder.ResolveTensorRTLib(q.libDir)
	if err != nil {
		return err
	}
	// A short-lived child loads TensorRT to describe it, as a build's worker would.
	r, err := builder.DescribeTarget(q.device, dir, q.checkBuilder)
	r.WriteText(&text, err)
	if sim := r.Simulated(); sim != "" {
		fmt.Fprintf(&text, "simulated %s\n", sim)
	}
	v.TensorRT = describeTensorRT(r, err)
	if q.checkBuilder {
		checkErr = builderCheck(r, err)
	}
	out := text.Bytes()
	if q.asJSON {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("writing the version as JSON: %w", err)
		}
		out = append(b, '\n')
	}
	if _, err := s.Out.Write(out); err != nil {
		return exitcode.Wrap(exitcode.Failed, fmt.Errorf("writing the version to stdout: %w", err))
	}
	return checkErr
}

// describeTensorRT is the JSON of what the probe found (r), or why it could not run (runErr).
func describeTensorRT(r builder.TargetReport, runErr error) versionTensorRT {
	t := versionTensorRT{CompiledFor: r.CompiledFor(), Shim: r.Shim, Probe: &r}
	switch {
	case runErr != nil:
		t.Reason = runErr.Error()
	case r.LoadError != "" || r.Infer == nil:
		t.Reason = r.LoadError
	default:
		t.Found = true
		t.Version = r.TensorRTVersion()
	}
	return t
}

// builderCheck is the exit error of --check-builder for the probe's report r (nil when a
// builder was made).
func builderCheck(r builder.TargetReport, err error) error {
	switch {
	case err != nil:
		return exitcode.Wrap(exitcode.Failed, fmt.Errorf("--check-builder: %w", err))
	case r.LoadError != "":
		return exitcode.Wrap(exitcode.Failed, fmt.Errorf("--check-builder: cannot use TensorRT: %s", r.LoadError))
	case r.BuilderError != "":
		msg := r.BuilderError
		if r.BuilderHint != "" {
			msg += "; " + r.BuilderHint
		}
		return exitcode.Wrap(exitcode.Failed, fmt.Errorf("--check-builder: %s", msg))
	}
	return nil
}

// commitID is the commit trtbuild was built from: the link-time commit, else the one the Go
// toolchain recorded; "" when neither is known.
func commitID() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}

// commitSuffix is " (COMMIT)" with the commit's first 12 characters, or "" for none.
func commitSuffix(c string) string {
	if len(c) > 12 {
		c = c[:12]
	}
	if c == "" {
		return ""
	}
	return " (" + c + ")"
}
