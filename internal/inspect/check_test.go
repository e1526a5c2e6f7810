package inspect

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/parserops"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/shapes"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// preflightOf is the build's preflight without shape flags, as the builder applies it.
func preflightOf(path string) Preflight {
	return func() ([]shapes.Profile, []string, error) {
		src, err := onnx.OpenSource(path)
		if err != nil {
			return nil, nil, err
		}
		defer src.Close()
		m, err := src.Metadata()
		if err != nil {
			return nil, nil, err
		}
		r, err := preflight.CheckProfile(m, src, preflight.Params{})
		if err != nil {
			return nil, nil, err
		}
		return []shapes.Profile{{Inputs: r.Inputs}}, r.Warnings, nil
	}
}

func TestNewCheck(t *testing.T) {
	ops, _, err := parserops.For(10)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		model string
		ok    bool
		rules []string
	}{
		{"convnet.onnx", true, nil},
		{"dynamic_batch.onnx", false, []string{"missing-shapes"}},
		{"custom_op.onnx", true, nil}, // a plugin's operator is a warning, not a reason
	} {
		t.Run(tt.model, func(t *testing.T) {
			path := tm.Bundled(t, tt.model)
			c, err := NewCheck(path, preflightOf(path), ops, "")
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, r := range c.Reasons {
				rules = append(rules, r.Rule)
			}
			if c.OK != tt.ok || strings.Join(rules, ",") != strings.Join(tt.rules, ",") {
				t.Fatalf("ok %v, rules %v; want %v, %v", c.OK, rules, tt.ok, tt.rules)
			}
			if code := exitcode.Of(c.Err()); (code == exitcode.OK) != tt.ok || (!tt.ok && code != exitcode.Failed) {
				t.Errorf("exit code %d for ok=%v", code, c.OK)
			}
			var text, doc bytes.Buffer
			if err := c.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteJSON(&doc); err != nil || !json.Valid(doc.Bytes()) {
				t.Fatalf("JSON: %v\n%s", err, doc.String())
			}
			if tt.ok != strings.HasPrefix(lastLine(text.String()), "ok: ") {
				t.Errorf("text %q", text.String())
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// FuzzCheck feeds the check any bytes as a model: it may refuse them (exit status 2) or find
// reasons, never panic, and every reason is one line.
func FuzzCheck(f *testing.F) {
	for _, name := range []string{"convnet.onnx", "dynamic_batch.onnx", "external_data.onnx", "control_flow.onnx", "truncated.onnx"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	ops, _, err := parserops.For(10)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "m.onnx")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := NewCheck(path, preflightOf(path), ops, "")
		if err != nil {
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("an unreadable model must be a usage error: %v", err)
			}
			return
		}
		for _, r := range c.Reasons {
			if r.Message == "" || strings.ContainsAny(r.Message, "\n\r") {
				t.Fatalf("reason %+v is not one line", r)
			}
		}
	})
}
