package convert

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// TestHeadline checks the one line said before a conversion is written: how many nodes stay
// float32 and, of them, how many because the opset is older than the target type needs.
func TestHeadline(t *testing.T) {
	in := filepath.Join(t.TempDir(), "net.onnx")
	b, err := tm.Marshal(convModel())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target Target
		keep   []string
		want   string // "" for no headline
		nodes  int
	}{
		{BF16, nil, "because opset 17 has no bfloat16 Conv or GlobalAveragePool: re-export with opset 22", 2},
		{BF16, []string{"Conv"}, "1 of them because opset 17 has no bfloat16 GlobalAveragePool: re-export with opset 22", 1},
		{FP16, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.target)+strings.Join(tt.keep, ","), func(t *testing.T) {
			s, err := Analyze(in, Options{Target: tt.target, Keep: tt.keep})
			if err != nil {
				t.Fatal(err)
			}
			h := s.Headline()
			if tt.want == "" {
				if h != "" || s.OpsetShortfall != nil {
					t.Fatalf("headline %q, shortfall %+v; want none", h, s.OpsetShortfall)
				}
				return
			}
			prefix := strings.Join([]string{strconv.Itoa(s.Nodes.Kept), "of", strconv.Itoa(s.Nodes.Converted + s.Nodes.Kept), "nodes stay float32,"}, " ")
			if !strings.HasPrefix(h, prefix) || !strings.Contains(h, tt.want) {
				t.Errorf("headline %q\nwant it to start with %q and contain %q", h, prefix, tt.want)
			}
			o := s.OpsetShortfall
			if o == nil || o.Opset != 17 || o.Need != 22 || o.Nodes != tt.nodes || len(o.Ops) != tt.nodes {
				t.Errorf("shortfall %+v, want %d nodes at opset 17, needing 22", o, tt.nodes)
			}
		})
	}
}
