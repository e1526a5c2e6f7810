package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/convert"
	"github.com/trtbuild/trtbuild/internal/inspect"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// readOnly annotates a tool that only reads files.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}

// anyObject is the output schema of a tool whose structured content is the JSON document
// the same trtbuild command writes with --json.
func anyObject(desc string) map[string]any {
	return map[string]any{"type": "object", "description": desc}
}

type inspectArgs struct {
	Model string `json:"model"`
}

func (t *tools) inspectTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  "inspect",
		Title: "Describe an ONNX model",
		Description: "Describe an ONNX model without building it (what trtbuild inspect shows): IR version and opsets, inputs and outputs with their dimensions, " +
			"operators, weights and external data, custom operators that need plugins, and for dynamic inputs the shapes options a build needs.",
		InputSchema:  objectSchema(map[string]any{"model": str("the ONNX model: its path" + t.modelRule())}, "model"),
		OutputSchema: anyObject("the document of trtbuild inspect --json (its field v is its version)"),
		Annotations:  readOnly,
	}
}

func (t *tools) inspect(_ context.Context, _ *mcp.CallToolRequest, a inspectArgs) (*mcp.CallToolResult, error) {
	path, release, err := t.modelPath("inspect", a.Model)
	if err != nil {
		return nil, err
	}
	defer release()
	var doc, text bytes.Buffer
	if err := inspect.Model(&doc, path, true); err != nil {
		return nil, err
	}
	if err := inspect.Model(&text, path, false); err != nil {
		return nil, err
	}
	return result(text.String(), json.RawMessage(bytes.TrimSpace(doc.Bytes())), false), nil
}

type convertArgs struct {
	Model       string     `json:"model"`
	FP16        bool       `json:"fp16"`
	BF16        bool       `json:"bf16"`
	Output      string     `json:"output"`
	Keep        stringList `json:"keep-fp32"`
	KeepOps     stringList `json:"keep-fp32-ops"`
	KeepNodes   stringList `json:"keep-fp32-nodes"`
	KeepIOTypes *bool      `json:"keep-io-types"`
}

func (t *tools) convertTool() *mcp.Tool {
	props := map[string]any{
		"model":           str("the ONNX model: its path" + t.modelRule()),
		"fp16":            boolean("convert float32 to float16"),
		"bf16":            boolean("convert float32 to bfloat16 (needs opset 13 or newer)"),
		"keep-fp32":       list("nodes (by name) and operator types to keep in float32, mixed"),
		"keep-fp32-ops":   list("operator types to keep in float32, in addition to the default list: " + strings.Join(convert.DefaultKeepOps(), ",")),
		"keep-fp32-nodes": list("names of nodes to keep in float32"),
		"keep-io-types":   map[string]any{"type": "boolean", "default": true, "description": "keep the model's float32 inputs and outputs; false converts them too"},
	}
	out := "the converted model is written in the server's state folder, and the result names it"
	if t.m.Local() {
		props["output"] = str("the converted model's path (default: MODEL.fp16.onnx or MODEL.bf16.onnx next to the input)")
		out = "the result names the converted model"
	}
	return &mcp.Tool{
		Name:  "convert",
		Title: "Convert an ONNX model to float16 or bfloat16",
		Description: "Write a copy of an ONNX model with its float32 values converted to float16 (fp16) or bfloat16 (bf16), what trtbuild convert does and " +
			"what TensorRT 11 builds reduced-precision engines from; numerically sensitive operators stay float32 with Cast nodes around them. " + out + ".",
		InputSchema:  objectSchema(props, "model"),
		OutputSchema: anyObject("the summary of trtbuild convert --json: what was converted and kept, and why, and the files written"),
		Annotations:  &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
	}
}

func (t *tools) convert(_ context.Context, _ *mcp.CallToolRequest, a convertArgs) (*mcp.CallToolResult, error) {
	in, release, err := t.modelPath("convert", a.Model)
	if err != nil {
		return nil, err
	}
	defer release()
	var target convert.Target
	switch {
	case a.FP16 && a.BF16:
		return nil, usagef("fp16 and bf16 together: a model is converted to one type, so pick one")
	case a.FP16:
		target = convert.FP16
	case a.BF16:
		target = convert.BF16
	default:
		return nil, usagef("convert needs a target type; give \"fp16\": true or \"bf16\": true")
	}
	out := a.Output
	if !t.m.Local() {
		// The schema has no output here; decodeArgs refused it already. The converted model
		// goes to a folder of its own in the state folder, so two calls never meet.
		dir, err := t.m.OutputDir("converted")
		if err != nil {
			return nil, err
		}
		if dir, err = os.MkdirTemp(dir, "convert-"); err != nil {
			return nil, fmt.Errorf("making the folder of the converted model: %w", err)
		}
		out = filepath.Join(dir, convert.OutputName(in, target))
	}
	m, out, err := convert.OpenFiles(in, out, target)
	if err != nil {
		return nil, err
	}
	keepIO := a.KeepIOTypes == nil || *a.KeepIOTypes
	sum, err := convert.Convert(m, convert.Options{Target: target, KeepOps: a.KeepOps, KeepNodes: a.KeepNodes, Keep: a.Keep, ConvertIO: !keepIO})
	if err != nil {
		if errors.Is(err, convert.ErrInternal) {
			return nil, fmt.Errorf("converting %s: %w", pathtext.Q(a.Model), err)
		}
		return nil, usagef("cannot convert %s to %s: %v", pathtext.Q(a.Model), target, err)
	}
	var text bytes.Buffer
	if sum.AlreadyTarget {
		fmt.Fprintf(&text, "nothing to convert: %s has no float32 values to change to %s (float32 inputs and outputs cast at the boundary are kept); no file written, use the model as it is\n", pathtext.Q(a.Model), target)
	} else {
		files, err := convert.Write(m, out, convert.OutputUse(a.Output))
		if err != nil {
			if errors.Is(err, convert.ErrWouldOverwrite) {
				return nil, usagef("%v", err)
			}
			return nil, fmt.Errorf("writing the converted model: %w", err)
		}
		sum.Files = files
		fmt.Fprintf(&text, "converted %s to %s\n", pathtext.Q(a.Model), target)
		if err := sum.WriteText(&text); err != nil {
			return nil, err
		}
	}
	doc, err := sum.JSON()
	if err != nil {
		return nil, err
	}
	return result(text.String(), json.RawMessage(bytes.TrimSpace(doc)), false), nil
}

type keyArgs struct {
	Model   string                     `json:"model"`
	Options map[string]json.RawMessage `json:"options"`
}

// KeyResult is the key tool's structured result.
type KeyResult struct {
	builder.BuildKey
	Warnings []string `json:"warnings,omitempty"`
}

func (t *tools) keyTool() *mcp.Tool {
	options := buildflags.Schema(t.refused)
	delete(options, "$schema")
	return &mcp.Tool{
		Name:  "key",
		Title: "Compute a build's key",
		Description: "Compute the build key of the build these options would run, without building (what trtbuild key shows): the content key the engine cache " +
			"keys engines by, and its parts (graph and weights hashes, TensorRT version, GPU, builder settings, profiles, plugins). The model's path is no part of it.",
		InputSchema: objectSchema(map[string]any{
			"model":   str("the ONNX model: its path" + t.modelRule()),
			"options": options,
		}, "model"),
		OutputSchema: map[string]any{"type": "object", "required": []string{"key", "parts"}, "properties": map[string]any{
			"key":      str("the build key"),
			"parts":    map[string]any{"type": "object", "description": "what the key is the hash of"},
			"warnings": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}},
		Annotations: readOnly,
	}
}

func (t *tools) key(_ context.Context, _ *mcp.CallToolRequest, a keyArgs) (*mcp.CallToolResult, error) {
	path, release, err := t.modelPath("key", a.Model)
	if err != nil {
		return nil, err
	}
	defer release()
	opts, err := buildflags.Options(a.Options, t.refused)
	if err != nil {
		return nil, err
	}
	opts.Model = path
	k, warnings, err := builder.Key(opts)
	if err != nil {
		return nil, err
	}
	parts, err := json.MarshalIndent(k.Parts, "", "  ")
	if err != nil {
		return nil, err
	}
	text := k.Key + "\n" + string(parts) + "\n"
	for _, w := range warnings {
		text += "warning: " + pathtext.Line(w) + "\n"
	}
	return result(text, KeyResult{BuildKey: k, Warnings: warnings}, false), nil
}

type engineInspectArgs struct {
	Engine         string `json:"engine"`
	Build          string `json:"build"`
	ExpectTensorRT string `json:"expect-tensorrt"`
	ExpectKey      string `json:"expect-key"`
}

func (t *tools) engineInspectTool() *mcp.Tool {
	props := map[string]any{
		"build":           str("the ID of a build of this server whose engine to inspect"),
		"expect-tensorrt": str("a tool error unless the plan was written by this TensorRT version (10, 10.16, 10.16.0 or 10.16.0.32)"),
		"expect-key":      str("a tool error unless the manifest names this build key"),
	}
	which := "build, the ID of a build of this server"
	if t.m.Local() {
		props["engine"] = str("the engine file's path")
		which = "engine, a path, or build, the ID of a build of this server"
	}
	return &mcp.Tool{
		Name:  "engine_inspect",
		Title: "Describe an engine file",
		Description: "Say what an engine file is, without a GPU (what trtbuild engine inspect shows): the TensorRT version that wrote it from the plan header, or that " +
			"it is a simulated plan, and the manifest beside it (build key and parts, versions, shapes, build time), checked against the file. Give " + which +
			". A problem (a manifest of another file, an expectation not met) makes the result a tool error.",
		InputSchema:  objectSchema(props),
		OutputSchema: anyObject("the document of trtbuild engine inspect --json"),
		Annotations:  readOnly,
	}
}

func (t *tools) engineInspect(_ context.Context, _ *mcp.CallToolRequest, a engineInspectArgs) (*mcp.CallToolResult, error) {
	var r *inspect.EngineReport
	var err error
	switch {
	case a.Engine != "" && a.Build != "":
		return nil, usagef("engine_inspect got both an engine and a build; give one")
	case a.Engine != "":
		r, err = inspect.Engine(a.Engine)
	case a.Build != "":
		// The engine the server opened and verified, and its verified manifest: nothing
		// opened again by a name another user could have changed since.
		f, readManifest, ferr := t.m.EngineWithManifest(a.Build)
		if ferr != nil {
			return nil, ferr
		}
		st, serr := f.Stat()
		if serr != nil {
			f.Close()
			return nil, serr
		}
		r, err = inspect.EngineOf(f, st, f.Name(), readManifest)
		f.Close()
	case t.m.Local():
		return nil, usagef("engine_inspect needs an engine; give \"engine\", the engine file's path, or \"build\", the ID of a build")
	default:
		return nil, usagef("engine_inspect needs an engine; give \"build\", the ID of a build of this server")
	}
	if err != nil {
		return nil, err
	}
	if a.Build != "" && !t.m.Local() {
		r.Engine = "build " + a.Build // not the server's own path
	}
	r.Expect(a.ExpectTensorRT, a.ExpectKey)
	var text bytes.Buffer
	r.WriteText(&text)
	return result(text.String(), r, len(r.Problems) > 0), nil
}
