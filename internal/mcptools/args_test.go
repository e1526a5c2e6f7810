package mcptools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDecodeArgs: the tool's input schema says which arguments there are, also where the
// arguments' struct has more (trtbuild serve's tools leave out those that name files).
func TestDecodeArgs(t *testing.T) {
	tool := &mcp.Tool{Name: "engine_inspect", InputSchema: objectSchema(map[string]any{
		"build": str("a build"), "expect-key": str("a key"),
	})}
	tests := []struct {
		name, args string
		want       string // in the error; "" for none
	}{
		{"in the schema", `{"build": "b1", "expect-key": "k"}`, ""},
		{"none", ``, ""},
		{"null", `null`, ""},
		{"in the struct, not in the schema", `{"build": "b1", "engine": "/srv/state/history.db"}`, `engine_inspect has no argument "engine"; its arguments are build, expect-key`},
		{"in neither", `{"bild": "b1"}`, `no argument "bild"`},
		{"wrong type", `{"build": 5}`, `argument "build" of engine_inspect is a JSON number; send a JSON string`},
		{"not an object", `[1]`, "not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in engineInspectArgs
			err := decodeArgs(tool, json.RawMessage(tt.args), &in)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one that says %q", err, tt.want)
			}
		})
	}
}
