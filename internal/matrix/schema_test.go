package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"
)

// k8sVersion is the Kubernetes release of the schema file (testdata/openapi/NOTE.md), which
// must be the one of k8s.io/api in go.mod.
const k8sVersion = "v1.37.2"

// jobSchema is the batch/v1 Job schema of Kubernetes' OpenAPI v3 document, made strict:
// every $ref replaced by the schema it names, and every object schema with properties and no
// additionalProperties of its own closed to other fields, as the API server's strict field
// validation (kubectl's default) refuses a field no type has.
func jobSchema(t *testing.T) *spec.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "openapi", "apis__batch__v1_openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]*spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	r := &schemaResolver{defs: doc.Components.Schemas}
	s, err := r.expand(&spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/components/schemas/io.k8s.api.batch.v1.Job")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaResolver expands the schemas of one OpenAPI document.
type schemaResolver struct {
	defs map[string]*spec.Schema
}

const componentRef = "#/components/schemas/"

// expand returns a copy of s with its references replaced and its objects closed; path are
// the schemas being expanded, to refuse a cycle (the batch/v1 document has none).
func (r *schemaResolver) expand(s *spec.Schema, path []string) (*spec.Schema, error) {
	if ref := s.Ref.String(); ref != "" {
		name, ok := strings.CutPrefix(ref, componentRef)
		def := r.defs[name]
		if !ok || def == nil {
			return nil, fmt.Errorf("reference %s: no such schema in the document", ref)
		}
		for _, p := range path {
			if p == name {
				return nil, fmt.Errorf("schema %s refers to itself (%s)", name, strings.Join(path, " → "))
			}
		}
		return r.expand(def, append(path, name))
	}
	c := *s
	var err error
	expandAll := func(list []spec.Schema) []spec.Schema {
		out := make([]spec.Schema, len(list))
		for i := range list {
			var e *spec.Schema
			if e, err = r.expand(&list[i], path); err != nil {
				return nil
			}
			out[i] = *e
		}
		return out
	}
	c.AllOf, c.AnyOf, c.OneOf = expandAll(s.AllOf), expandAll(s.AnyOf), expandAll(s.OneOf)
	if err != nil {
		return nil, err
	}
	if s.Properties != nil {
		c.Properties = map[string]spec.Schema{}
		for k, p := range s.Properties {
			e, err := r.expand(&p, path)
			if err != nil {
				return nil, err
			}
			c.Properties[k] = *e
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		e, err := r.expand(s.Items.Schema, path)
		if err != nil {
			return nil, err
		}
		c.Items = &spec.SchemaOrArray{Schema: e}
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		e, err := r.expand(ap.Schema, path)
		if err != nil {
			return nil, err
		}
		c.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: e}
	}
	if len(s.Properties) > 0 && s.AdditionalProperties == nil && s.Extensions["x-kubernetes-preserve-unknown-fields"] != true {
		c.AdditionalProperties = &spec.SchemaOrBool{Allows: false}
	}
	return &c, nil
}

// validateJob validates one YAML document against the strict Job schema, returning the
// validator's errors, one a line.
func validateJob(schema *spec.Schema, doc []byte) error {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	var obj any
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&obj); err != nil {
		return err
	}
	return validate.AgainstSchema(schema, obj, strfmt.Default)
}

// emittedJobs are the YAML documents of the Jobs of the test matrix: a whole-GPU target and a
// MIG target.
func emittedJobs(t *testing.T) [][]byte {
	t.Helper()
	jobs, err := load(t).K8sJobs(K8sOptions{Image: "registry.example/trtbuild:cuda", Claim: "engines", Namespace: "builds", Parallelism: 2, BackoffLimitPerIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	out, err := K8sYAML(jobs)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(out, []byte("\n---\n"))
}

// TestSchemaIsGoModsRelease: the schema file is the Kubernetes release of k8s.io/api in
// go.mod, so a go.mod update without a new schema fails here.
func TestSchemaIsGoModsRelease(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+)\.(\d+)\s*$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/api")
	}
	if want := fmt.Sprintf("v1.%s.%s", m[1], m[2]); want != k8sVersion {
		t.Fatalf("go.mod has k8s.io/api v0.%s.%s, Kubernetes %s, but testdata/openapi holds %s's schema; replace it (testdata/openapi/NOTE.md)", m[1], m[2], want, k8sVersion)
	}
	note, err := os.ReadFile(filepath.Join("testdata", "openapi", "NOTE.md"))
	if err != nil || !bytes.Contains(note, []byte("tag **"+k8sVersion+"**")) {
		t.Fatalf("testdata/openapi/NOTE.md does not name tag %s: %v", k8sVersion, err)
	}
}

// TestJobsMatchOpenAPISchema validates the emitted Jobs against the official batch/v1 schema of
// the Kubernetes release of k8s.io/api, strictly; and proves the check can fail: an emitted
// Job with an unknown field, deep or at the top, or a value of the wrong type, is refused,
// naming the field.
func TestJobsMatchOpenAPISchema(t *testing.T) {
	schema := jobSchema(t)
	docs := emittedJobs(t)
	if len(docs) != 2 {
		t.Fatalf("%d documents, want one Job per target", len(docs))
	}
	for i, doc := range docs {
		if err := validateJob(schema, doc); err != nil {
			t.Errorf("job %d does not match the schema:\n%v\n%s", i, err, doc)
		}
	}
	for _, c := range []struct {
		what, old, new, want string
	}{
		{"an unknown field at the top", "kind: Job\n", "kind: Job\nschedule: daily\n", ".schedule in body is a forbidden property"},
		{"an unknown field of the spec", "  completionMode: Indexed\n", "  completionMode: Indexed\n  retries: 3\n", "spec.retries in body is a forbidden property"},
		{"an unknown field of the container", "        workingDir: /matrix\n", "        workingDir: /matrix\n        gpus: 1\n", "spec.template.spec.containers[0].gpus in body is a forbidden property"},
		{"a misspelt field of a rule", "      onExitCodes:\n", "      onExitCode:\n", "spec.podFailurePolicy.rules[1].onExitCode in body is a forbidden property"},
		{"a misspelt toleration", "        operator: Exists\n", "        operater: Exists\n", "spec.template.spec.tolerations[0].operater in body is a forbidden property"},
		{"a count as a string", "  completions: 8\n", "  completions: eight\n", "spec.completions in body must be of type integer"},
		{"an exit code as a string", "        - 143\n", "        - SIGTERM\n", "spec.podFailurePolicy.rules[2].onExitCodes.values[1] in body must be of type integer"},
		{"a folder as a list", "        workingDir: /matrix\n", "        workingDir: [/matrix]\n", "spec.template.spec.containers[0].workingDir in body must be of type string"},
		{"a node selector value as a list", "        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n", "        nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]\n", "spec.template.spec.nodeSelector.nvidia.com/gpu.product in body must be of type string"},
	} {
		doc := string(docs[0])
		if !strings.Contains(doc, c.old) {
			t.Fatalf("%s: the Job has no %q to change:\n%s", c.what, c.old, doc)
		}
		doc = strings.Replace(doc, c.old, c.new, 1)
		err := validateJob(schema, []byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
}
