package inspect

import (
	"strings"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// CompleteShapes completes one entry of a shape flag (flag 0 --shapes, 1 --min-shapes, 2
// --opt-shapes, 3 --max-shapes) from the model: "NAME:" for the inputs not yet in the list,
// and after "NAME:" the example dimensions the missing-shapes error would suggest for this
// flag. A model that cannot be read completes to nothing.
func CompleteShapes(model string, flag int, toComplete string) []string {
	if flag < 0 || flag > 3 {
		return nil
	}
	m, err := onnx.ReadMetadata(model)
	if err != nil {
		return nil
	}
	head, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := map[string]bool{}
	if specs, err := shapes.Parse(strings.TrimSuffix(head, ",")); err == nil {
		for _, sp := range specs {
			given[sp.Name] = true
		}
	}
	if name, _, ok := strings.Cut(last, ":"); ok {
		in, found := m.Input(name)
		if !found {
			return nil
		}
		min, opt, max := preflight.ExampleShapes([]onnx.Value{in})
		if len(min) == 0 {
			return nil
		}
		dims := [...][]shapes.Spec{opt, min, opt, max}[flag]
		return []string{head + shapes.Format(dims)}
	}
	var out []string
	for _, in := range m.Inputs {
		if !given[in.Name] && strings.HasPrefix(in.Name, last) {
			out = append(out, head+in.Name+":")
		}
	}
	return out
}
