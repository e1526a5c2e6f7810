package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/parserops"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// CheckSchemaVersion is the "v" field of `trtbuild inspect --check --json`; it changes as
// SchemaVersion does.
const CheckSchemaVersion = 1

// The kinds of a Reason.
const (
	// KindRefused: the build would not start (it exits with status 2 and says this).
	KindRefused = "refused"
	// KindLikelyFail: the build would start and is likely to fail (preflight.Risk).
	KindLikelyFail = "likely-fail"
)

// Check is what `trtbuild inspect --check` found, and its JSON document: whether a build of the
// model with the given flags would start and nothing looks likely to fail.
type Check struct {
	V    int    `json:"v"`
	Path string `json:"path"`
	// OK is true when Reasons is empty: the command exits with status 0.
	OK      bool     `json:"ok"`
	Reasons []Reason `json:"reasons"`
	// Warnings are the build's warnings, which do not fail the check.
	Warnings []string `json:"warnings"`
	// TensorRT is the release whose ONNX parser's operator list the operators were checked
	// against ("10.15"), and OperatorsNote says when that list is not the targeted release's own.
	TensorRT      string `json:"tensorrt_operators"`
	OperatorsNote string `json:"operators_note,omitempty"`
}

// Reason is one reason the check fails: Kind is KindRefused or KindLikelyFail, Rule the
// preflight rule or risk ("external-data", "missing-shapes", "unsupported-op", …; "refused"
// for a refusal of the build's other settings), Message one line that names the fix.
type Reason struct {
	Kind    string `json:"kind"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Preflight is the build's own preflight of the model with the command's flags: in trtbuild,
// builder.Preflight. It returns the optimization profiles the build would use and its warnings,
// or its refusal.
type Preflight func() (profiles []shapes.Profile, warnings []string, err error)

// NewCheck checks the model at path: the build's preflight (pre) and, when it lets the build
// start or refuses only its shape flags, the risks (preflight.Risks) with the operator list ops
// (note as For returns it). A path that is no readable ONNX model is a usage error (exit status
// 2), as for Model.
func NewCheck(path string, pre Preflight, ops *parserops.List, note string) (*Check, error) {
	src, err := onnx.OpenSource(path)
	if err != nil {
		return nil, regfile.InputError("model", path, err)
	}
	defer src.Close()
	m, err := src.Metadata()
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Usage, err)
	}
	c := &Check{V: CheckSchemaVersion, Path: path, Reasons: []Reason{}, Warnings: []string{}, TensorRT: ops.TensorRT, OperatorsNote: note}
	profiles, warnings, err := pre()
	if err != nil {
		rule := "refused"
		var pe *preflight.Error
		if errors.As(err, &pe) {
			rule = pe.Rule
		}
		c.Reasons = append(c.Reasons, Reason{Kind: KindRefused, Rule: rule, Message: exitcode.OneLine(err)})
		// A build stops at its first refusal; external data is the refusal a user most needs
		// to hear of with the others, so it is checked on its own too.
		if rule != "external-data" {
			if err := preflight.CheckExternal(m, src); err != nil {
				c.Reasons = append(c.Reasons, Reason{Kind: KindRefused, Rule: "external-data", Message: exitcode.OneLine(err)})
			}
		}
		profiles = nil // unknown: only the model's own fixed shapes are checked
	}
	c.Warnings = append(c.Warnings, warnings...)
	for _, r := range preflight.Risks(m, profiles, ops) {
		c.Reasons = append(c.Reasons, Reason{Kind: KindLikelyFail, Rule: r.Rule, Message: r.Message})
	}
	c.OK = len(c.Reasons) == 0
	return c, nil
}

// Err is the command's error for c: nil when c.OK, else one line counting the reasons, with
// exit status 1 (exitcode.Failed).
func (c *Check) Err() error {
	if c.OK {
		return nil
	}
	what := "1 reason"
	if len(c.Reasons) != 1 {
		what = fmt.Sprintf("%d reasons", len(c.Reasons))
	}
	return exitcode.Wrap(exitcode.Failed, fmt.Errorf("inspect --check: %s a build of %s would be refused or is likely to fail", what, filepath.Base(c.Path)))
}

// WriteText writes c for people: one line a reason ("refused: …", "likely to fail: …"), a
// warning ("warning: …") or the operator note, then "ok: …" when nothing was found.
func (c *Check) WriteText(w io.Writer) error {
	p := &printer{w: w}
	for _, r := range c.Reasons {
		label := "refused"
		if r.Kind == KindLikelyFail {
			label = "likely to fail"
		}
		p.printf("%s: %s\n", label, r.Message)
	}
	for _, warning := range c.Warnings {
		p.printf("warning: %s\n", warning)
	}
	if c.OperatorsNote != "" {
		p.printf("note: %s\n", c.OperatorsNote)
	}
	if c.OK {
		p.printf("ok: a build of %s would start, and nothing was found that is likely to fail (operators checked against the ONNX parser of TensorRT %s)\n", c.Path, c.TensorRT)
	}
	return p.err
}

// WriteJSON writes c as an indented JSON document.
func (c *Check) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("writing the check: %w", err)
	}
	return nil
}
