package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/progress"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	engine := filepath.Join(dir, "model.engine")
	if Path(engine) != engine+".json" {
		t.Fatalf("Path = %s", Path(engine))
	}
	parts := buildkey.Parts{Graph: "sha256:1", Weights: "sha256:2", Backend: "sim", Settings: buildkey.Settings{OptLevel: -1, MaxAuxStreams: -1}}.Normalized()
	m := &Manifest{
		Key: parts.Key(), Parts: parts, Model: Model{Path: "m.onnx", Bytes: 10},
		Engine: Engine{File: "model.engine", Bytes: 5, SHA256: "sha256:3"}, Trtbuild: "dev", Backend: "sim", Precision: "fp16",
		EngineCache: &CacheUse{Dir: "/c", Hit: true},
	}
	m.FromResult(progress.Result{Status: progress.StatusBuilt, Duration: 1500 * time.Millisecond, CacheHits: 3, CacheUsed: true}, time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC))
	b, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(engine), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(Path(engine))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, m)
	}
	if got.BuildSeconds != 1.5 || got.TimingCache.Hits != 3 || got.Summary.Status != progress.StatusBuilt {
		t.Fatalf("FromResult: %+v", got)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(filepath.Join(dir, "none.json")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	for name, body := range map[string]string{
		"garbage": "not json", "newer": `{"manifest_version": 99}`, "unversioned": `{}`,
		"trailing data": "{\"manifest_version\": 1}\n{\"type\": \"build\"}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Beside an engine in a folder others may write: a huge file is not a manifest (links and
	// FIFOs: manifest_unix_test.go, manifest_windows_test.go).
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); err == nil {
		t.Error("a file over MaxBytes was read as a manifest")
	}
}
