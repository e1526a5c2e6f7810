package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/trtbuild/trtbuild/internal/buildflags"
)

// openAPIFile is the API's OpenAPI 3.1 document, with an empty placeholder for the build
// options' schema, which buildflags describes (openAPIDocument fills it in).
//
//go:embed openapi.json
var openAPIFile []byte

// openAPIDocument is the served document: openAPIFile with the version and the options
// schema of this server (without the refused options).
func openAPIDocument(version string, refused map[string]string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIFile, &doc); err != nil {
		return nil, fmt.Errorf("the embedded OpenAPI document: %w", err)
	}
	info, _ := doc["info"].(map[string]any)
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	if info == nil || schemas == nil {
		return nil, fmt.Errorf("the embedded OpenAPI document has no info or components.schemas")
	}
	if version != "" {
		info["version"] = version
	}
	options := buildflags.Schema(refused)
	delete(options, "$schema") // the document's dialect (OpenAPI 3.1: JSON Schema 2020-12)
	schemas["Options"] = options
	return json.MarshalIndent(doc, "", "  ")
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.openapi)
}
