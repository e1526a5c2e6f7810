// Package mcptools is trtbuild's Model Context Protocol server, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): the tools build, inspect, convert, key and
// engine_inspect over a *service.Manager, for `trtbuild mcp` on stdio (NewServer) and for
// /mcp of `trtbuild serve`, streamable HTTP (HTTPHandler, with a bound on its live sessions
// and an idle expiry: sessions.go).
//
// build submits through the Manager and follows the build's event log until its result:
// a call with _meta.progressToken gets notifications/progress (progress and total in steps of
// the top phase, message the current phase path, at most ten a second); notifications/cancelled
// for the call cancels the build at its next step boundary; the timeout argument is the
// caller's time budget (the build's timeout option). Option names and their checks are
// internal/buildflags', as in the HTTP API. A request the server refuses is a tool error result
// (IsError) of one line, never a protocol error. docs/mcp.md describes the tools.
package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/service"
)

// ServerName is the name the server gives in its initialize result.
const ServerName = "trtbuild"

// tools holds what the tool handlers share: the Manager and the options a request may not set.
type tools struct {
	m       *service.Manager
	refused map[string]string
}

// NewServer returns the MCP server of m's builds with its five tools; version is trtbuild's,
// given to clients in the initialize result.
func NewServer(m *service.Manager, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "trtbuild: TensorRT engine builds", Version: version}, &mcp.ServerOptions{
		Instructions: "Build TensorRT engines from ONNX models with the build tool; inspect, key, convert and engine_inspect look at models and engines without building. " +
			"Pass _meta.progressToken to follow a build's phases; cancel the call to stop it at its next step boundary; give timeout for a time budget.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	t := &tools{m: m, refused: m.Refused()}
	addTool(s, m, t.buildTool(), t.build)
	addTool(s, m, t.inspectTool(), t.inspect)
	addTool(s, m, t.convertTool(), t.convert)
	addTool(s, m, t.keyTool(), t.key)
	addTool(s, m, t.engineInspectTool(), t.engineInspect)
	return s
}

// maxRequestBody is the largest HTTP request body the /mcp handler reads, as the HTTP API's.
const maxRequestBody = 1 << 20

// HTTPHandler serves the same tools over MCP's streamable HTTP transport, with one session
// per client (notifications/cancelled and progress notifications belong to a session), under
// o's limits on sessions (see HTTPOptions). The caller (trtbuild serve) checks authentication,
// Host and Origin before it: the SDK's own Host check, which knows only loopback names, is off,
// so that the names the caller allows (trtbuild serve --allow-host) reach /mcp as they reach
// the rest of the API.
func HTTPHandler(m *service.Manager, version string, o HTTPOptions) http.Handler {
	return newSessionLimit(NewServer(m, version), o)
}

// handler is a tool's handler, given its decoded arguments. An error it returns becomes the
// tool's error result (IsError, one line of text).
type handler[In any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, error)

// addTool adds tool t to s with handler h: the call's arguments are decoded into In strictly
// (an unknown argument or a value of the wrong JSON type is refused in one line that names the
// tool's arguments), and every error is a tool error result, not a protocol error, so the
// model that called the tool reads what to change.
func addTool[In any](s *mcp.Server, m *service.Manager, t *mcp.Tool, h handler[In]) {
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := decodeArgs(t, req.Params.Arguments, &in); err != nil {
			return errorResult(err), nil
		}
		res, err := h(ctx, req, in)
		if err != nil {
			res = errorResult(err)
		}
		return shownResult(m, res), nil
	})
}

// shownResult is res with the server's paths as its clients are shown them (service.Manager's
// Shown): a tool under serve names its files relative to the model root and the state dir.
func shownResult(m *service.Manager, res *mcp.CallToolResult) *mcp.CallToolResult {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			t.Text = m.Shown(t.Text)
		}
	}
	if res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			if shown := m.Shown(string(data)); shown != string(data) {
				res.StructuredContent = json.RawMessage(shown)
			}
		}
	}
	return res
}

// decodeArgs decodes a tool call's arguments into v, refusing what t's input schema does not
// name, with one-line errors. The schema, not v, says which arguments there are: under trtbuild
// serve a tool's schema leaves out the arguments that name the server's files, which v has for
// trtbuild mcp on stdio.
func decodeArgs(t *mcp.Tool, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var given map[string]json.RawMessage
	if json.Unmarshal(raw, &given) == nil {
		schema, _ := t.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(given)) {
			if _, ok := props[name]; !ok {
				return usagef("%s has no argument %q; its arguments are %s", t.Name, name, argNames(t))
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return usagef("the arguments of %s are not one JSON object; send one object with %s", t.Name, argNames(t))
		}
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return usagef("argument %q of %s is a JSON %s; send %s", typeErr.Field, t.Name, typeErr.Value, describeKind(typeErr.Type.Kind()))
	case errors.As(err, &typeErr):
		return usagef("the arguments of %s are a JSON %s, not an object; send one object with %s", t.Name, typeErr.Value, argNames(t))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return usagef("%s has no argument %s; its arguments are %s", t.Name, name, argNames(t))
	}
	return usagef("the arguments of %s are no valid JSON object (%v); send one object with %s", t.Name, err, argNames(t))
}

// describeKind is what to send for a value of Go kind k, for messages.
func describeKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a JSON string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	case reflect.Slice:
		return "a string or an array of strings"
	}
	return "a JSON number"
}

// argNames lists the properties of t's input schema, for messages.
func argNames(t *mcp.Tool) string {
	schema, _ := t.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	names := slices.Sorted(maps.Keys(props))
	return strings.Join(names, ", ")
}

// errorResult is the tool error result of err: one line, "problem; hint" (a refused request's
// problem and hint, or the one-line message of trtbuild's usage errors).
func errorResult(err error) *mcp.CallToolResult {
	msg := err.Error()
	var re *service.RequestError
	if errors.As(err, &re) {
		msg = re.Problem
		if re.Hint != "" {
			msg += "; " + re.Hint
		}
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: pathtext.Line(msg)}}}
}

// result is a tool result with text and the same as structured content.
func result(text string, structured any, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
}

// objectSchema is the input schema of a tool: an object with these properties, of which
// required must be given, and no others.
func objectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

// list is a property that takes a comma-separated string or an array of strings, as the
// build options' lists do.
func list(desc string) map[string]any {
	return map[string]any{"description": desc, "oneOf": []any{
		map[string]any{"type": "string"},
		map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	}}
}

// stringList is the value of a list argument: a comma-separated string or an array of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = nil
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				*l = append(*l, part)
			}
		}
		return nil
	}
	var a []string
	if err := json.Unmarshal(b, &a); err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[[]string]()}
	}
	*l = a
	return nil
}

func jsonKind(b []byte) string {
	switch b = bytes.TrimSpace(b); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array of other values than strings"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	case b[0] == 'n':
		return "null"
	}
	return "number"
}

// usagef is a one-line error of a request to fix.
func usagef(format string, args ...any) error { return fmt.Errorf(format, args...) }
