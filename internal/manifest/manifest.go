// Package manifest describes a built engine in a JSON file beside it, "<engine>.json"
// (model.engine → model.engine.json): the build key and its parts, the versions, shapes and
// flags that went into it, when and how long it was built, the timing cache's hits, the build's
// outcome, and whether the engine came from the engine cache.
//
// The format is versioned by Version; readers refuse a newer major format. Fields are only
// ever added within one version.
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// Version is the manifest format's version.
const Version = 1

// Suffix is appended to the engine's path to name its manifest.
const Suffix = ".json"

// Path returns the manifest path of an engine file.
func Path(engine string) string { return engine + Suffix }

// Manifest is the content of model.engine.json.
type Manifest struct {
	Version int `json:"manifest_version"`
	// Key is the build key (internal/buildkey) and Parts what it covers.
	Key   string         `json:"key"`
	Parts buildkey.Parts `json:"key_parts"`

	Model  Model  `json:"model"`
	Engine Engine `json:"engine"`

	Trtbuild  string `json:"trtbuild_version"`
	Backend   string `json:"backend"`
	TensorRT  string `json:"tensorrt_version,omitempty"`
	Precision string `json:"precision"`

	// BuiltAt is when the build finished; BuildSeconds how long it took.
	BuiltAt      time.Time `json:"built_at"`
	BuildSeconds float64   `json:"build_seconds"`

	// EngineCache says whether this copy came from the engine cache.
	EngineCache *CacheUse   `json:"engine_cache,omitempty"`
	TimingCache TimingCache `json:"timing_cache"`
	Summary     Summary     `json:"summary"`
}

// Model is the model the engine was built from. Path is as given to the build; it is not
// part of the key.
type Model struct {
	Path          string `json:"path"`
	Bytes         int64  `json:"bytes"`
	ExternalBytes int64  `json:"external_bytes,omitempty"`
}

// Engine is the engine file.
type Engine struct {
	File   string `json:"file"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// CacheUse records an engine-cache lookup.
type CacheUse struct {
	Dir      string    `json:"dir"`
	Hit      bool      `json:"hit"`
	ServedAt time.Time `json:"served_at,omitzero"`
}

// TimingCache is what the builder said about the timing cache.
type TimingCache struct {
	Used   bool   `json:"used"`
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
}

// Summary is the build's outcome, as its report gives it.
type Summary struct {
	Status       progress.Status `json:"status"`
	PeakRSS      int64           `json:"peak_rss_bytes,omitempty"`
	DroppedSteps uint64          `json:"dropped_steps,omitempty"`
}

// FromResult fills the build-time fields from a build's result.
func (m *Manifest) FromResult(res progress.Result, finished time.Time) {
	m.BuiltAt = finished.UTC().Truncate(time.Millisecond)
	m.BuildSeconds = res.Duration.Seconds()
	m.TimingCache = TimingCache{Used: res.CacheUsed, Hits: res.CacheHits, Misses: res.CacheMisses}
	m.Summary = Summary{Status: res.Status, PeakRSS: res.PeakRSS, DroppedSteps: res.DroppedSteps}
}

// Marshal encodes m, indented, with a final newline.
func Marshal(m *Manifest) ([]byte, error) {
	m.Version = Version
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ErrNotFound marks an engine without a manifest.
var ErrNotFound = errors.New("no manifest")

// Parse decodes a manifest.
func Parse(b []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a trtbuild manifest: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a trtbuild manifest: more follows the manifest's JSON object")
	}
	if m.Version < 1 || m.Version > Version {
		return nil, fmt.Errorf("manifest version %d: this trtbuild reads version 1 to %d; use a newer trtbuild", m.Version, Version)
	}
	return &m, nil
}

// MaxBytes bounds a manifest's size; a larger file is not one.
const MaxBytes = 1 << 20

// Read reads the manifest at path; a missing file is ErrNotFound. The manifest is a file
// trtbuild names itself, beside an engine in a folder others may write: it is opened without
// following a link, without blocking on a FIFO, only as a regular file, and read up to
// MaxBytes.
func Read(path string) (*Manifest, error) {
	f, _, err := regfile.OpenNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if regfile.IsLink(err) {
		return nil, fmt.Errorf("%s is a symbolic link; trtbuild does not follow links to manifests", pathtext.Q(path))
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("%s: not a trtbuild manifest: larger than %d bytes", pathtext.Q(path), MaxBytes)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
