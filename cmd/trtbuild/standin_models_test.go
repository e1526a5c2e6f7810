package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
)

// tensorRT11Phases are the phase names NVIDIA's own runs of TensorRT 10.16 and 11.x report
// (docs/tensorrt.md): a simulated build of any CNN reports only these.
var tensorRT11Phases = map[string]bool{
	"Building engine": true, "Cloning network graph": true, "Preparing graph for optimization": true,
	"Building engine from subgraph": true, "Optimizing graph": true, "Computing profile costs": true,
	"Timing tactics": true, "Timing graph nodes": true, "Timing tensor reformats": true,
	"Evaluating tactic times": true, "Computing reformatting costs": true, "Measuring tactic time": true,
	"Determining refit engines": true,
}

// TestSimulatedBuildOfForeignCNNs builds CNNs the project did not write (the ONNX model zoo's,
// in ../shared/models beside the repository when they are there) over the stand-in: TensorRT
// 11's vocabulary and no layer name in any phase, a root of 6 steps that ends early, at least
// 7 levels, and early finishes inside the tree too, as NVIDIA's traces show.
func TestSimulatedBuildOfForeignCNNs(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	models, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "models", "light_*.onnx"))
	if len(models) == 0 {
		t.Skip("no model of ../shared/models here")
	}
	for _, model := range models {
		t.Run(filepath.Base(model), func(t *testing.T) {
			m, err := onnx.ReadMetadata(model)
			if err != nil {
				t.Fatal(err)
			}
			r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "1000", "--no-timing-cache", "--progress", "json", "-o", filepath.Join(t.TempDir(), "m.engine"), model)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			type phase struct {
				name          string
				parent, depth int
				steps, last   int
			}
			phases := map[int]*phase{}
			sc := bufio.NewScanner(strings.NewReader(r.stdout))
			sc.Buffer(nil, 1<<20)
			depth := 0
			for sc.Scan() {
				var e struct {
					Type   string `json:"type"`
					ID     int    `json:"id"`
					Parent int    `json:"parent"`
					Name   string `json:"name"`
					Steps  int    `json:"steps"`
					Step   int    `json:"step"`
				}
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatal(err)
				}
				switch e.Type {
				case "phase_start":
					p := &phase{name: e.Name, parent: e.Parent, depth: 1, steps: e.Steps, last: -1}
					if q := phases[e.Parent]; q != nil {
						p.depth = q.depth + 1
					}
					phases[e.ID] = p
					depth = max(depth, p.depth)
				case "step":
					if p := phases[e.ID]; p != nil {
						p.last = max(p.last, e.Step)
					}
				}
			}
			nodes := map[string]bool{}
			for _, n := range m.NodeNames() {
				nodes[n] = true
			}
			var roots, earlyInside int
			for _, p := range phases {
				if !tensorRT11Phases[p.name] {
					t.Errorf("phase %q is not TensorRT 11's", p.name)
				}
				for n := range nodes {
					if n != "" && strings.Contains(p.name, n) {
						t.Errorf("phase %q names node %q", p.name, n)
						break
					}
				}
				switch {
				case p.parent == 0:
					roots++
					if p.steps != 6 || p.last >= p.steps-1 {
						t.Errorf("root %q of %d steps reached step %d; want 6 steps, ended early", p.name, p.steps, p.last)
					}
				case p.last < p.steps-1:
					earlyInside++
				}
			}
			if roots != 1 || depth < 7 || earlyInside == 0 {
				t.Errorf("%d roots, %d levels, %d early finishes below the root; want 1, at least 7, some", roots, depth, earlyInside)
			}
		})
	}
}
