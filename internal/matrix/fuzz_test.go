package matrix

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any input parses into a checked file or is an error; a parsed file's cells all
// have distinct ids and engine paths, and every cell is found by its numbers.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "matrix.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("version: 1\nmodels: [{path: m.onnx}]\nprecisions: [fp16]\ntargets: [{name: t4, gpu: Tesla-T4}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		cells := m.Cells()
		if len(cells) > 100000 {
			return
		}
		ids, engines := map[string]bool{}, map[string]bool{}
		for _, c := range cells {
			if ids[c.ID()] || engines[c.Engine()] {
				t.Fatalf("cell %d: id %s or engine %s given twice", c.Index, c.ID(), c.Engine())
			}
			ids[c.ID()], engines[c.Engine()] = true, true
			got, err := m.Find(c.Target.Name, c.TargetIndex)
			if err != nil || got.Index != c.Index {
				t.Fatalf("cell %d not found by target %s index %d: %v", c.Index, c.Target.Name, c.TargetIndex, err)
			}
		}
	})
}
