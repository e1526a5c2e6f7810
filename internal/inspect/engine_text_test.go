package inspect

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/plan"
)

// TestEngineTextOneLinePerField: what a manifest or plan header says (both may come from
// another user) is shown one line per field, with no control byte reaching the terminal.
func TestEngineTextOneLinePerField(t *testing.T) {
	evil := "x\x1b]0;pwned\x07\nFAKE     line"
	r := &EngineReport{
		Engine: "/e/m" + evil + ".engine",
		Header: plan.Header{Kind: plan.KindSimulated, Sim: map[string]string{"precision": evil}},
		Manifest: &manifest.Manifest{
			Key: "trtb4-" + evil, Backend: "sim" + evil, Precision: evil, Trtbuild: evil,
		},
		Problems: []string{"a problem " + evil},
	}
	r.Manifest.Model.Path = "/m/" + evil + ".onnx"
	var b bytes.Buffer
	r.WriteText(&b)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("a control byte reached the output:\n%q", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(line, "FAKE") {
			t.Errorf("a field forged a line: %q\nin:\n%s", line, out)
		}
	}
}
