package builder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// onFirstPhase runs swap once, when the build's first phase starts: the worker has read the
// model by then.
type onFirstPhase struct {
	once sync.Once
	swap func()
}

func (r *onFirstPhase) Begin(progress.View) {}
func (r *onFirstPhase) Handle(b []progress.Event) {
	for _, e := range b {
		if e.Type == progress.EventPhaseStart {
			r.once.Do(r.swap)
		}
	}
}
func (r *onFirstPhase) Tick(time.Time)            {}
func (r *onFirstPhase) Notice(progress.Notice)    {}
func (r *onFirstPhase) End(progress.Result) error { return nil }

// TestSwappedFolderBuildsTheModelChecked swaps the model's folder for one holding another
// model of the same name once the model was checked and hashed, before the worker starts, and
// (ABA) swaps it back while the build runs, where a pin by name sees the first model again.
// The worker works in the folder the build opened: what is built, written and stored under
// the key is the model that was checked, never the one planted.
func TestSwappedFolderBuildsTheModelChecked(t *testing.T) {
	checked, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	planted, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "bert_tiny.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, back := range []bool{false, true} {
		t.Run(fmt.Sprintf("swapped back %v", back), func(t *testing.T) {
			dir := t.TempDir()
			models, away := filepath.Join(dir, "models"), filepath.Join(dir, "away")
			if err := os.Mkdir(models, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(models, "model.onnx"), checked, 0o644); err != nil {
				t.Fatal(err)
			}
			o := DefaultOptions()
			o.Model, o.Engine, o.Backend = filepath.Join(models, "model.onnx"), filepath.Join(dir, "model.engine"), "sim"
			o.Sim.Speed, o.NoTimingCache = 1000, true
			o.EngineCache = EngineCache{Dir: filepath.Join(dir, "cache"), Size: "1G"}
			o.ModelHashes = func(src *onnx.Source) (buildkey.ModelHashes, error) {
				h, err := buildkey.HashSource(src)
				// The attacker: the folder goes, another with the planted model takes its place.
				if err := os.Rename(models, away); err != nil {
					t.Error(err)
				}
				if err := os.Mkdir(models, 0o755); err != nil {
					t.Error(err)
				}
				if err := os.WriteFile(filepath.Join(models, "model.onnx"), planted, 0o644); err != nil {
					t.Error(err)
				}
				return h, err
			}
			r := &onFirstPhase{swap: func() {}}
			if back {
				r.swap = func() {
					if err := os.Rename(models, filepath.Join(dir, "planted")); err != nil {
						t.Error(err)
					}
					if err := os.Rename(away, models); err != nil {
						t.Error(err)
					}
				}
			}
			fe := Frontend{NewRenderer: func(progress.Controls) progress.Renderer { return r }}
			if _, err := Run(context.Background(), o, fe); err != nil {
				t.Fatalf("build: %v", err)
			}
			wantBytes := fmt.Sprintf("\nmodel_bytes %d\n", len(checked))
			engine, err := os.ReadFile(o.Engine)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(engine), wantBytes) {
				t.Fatalf("the engine is not the checked model's (%d bytes; planted %d):\n%.300s", len(checked), len(planted), engine)
			}
			// What the engine cache serves under the key is the checked model's engine too.
			if err := os.Remove(o.Engine); err != nil {
				t.Fatal(err)
			}
			o.ModelHashes, o.CacheOnly = nil, true
			if back {
				o.Model = filepath.Join(models, "model.onnx")
			} else {
				o.Model = filepath.Join(away, "model.onnx")
			}
			res, err := Run(context.Background(), o, Frontend{})
			if err != nil || !res.Cached {
				t.Fatalf("the checked model again: %+v, %v; want a hit", res, err)
			}
			if engine, err = os.ReadFile(o.Engine); err != nil || !strings.Contains(string(engine), wantBytes) {
				t.Fatalf("the cached engine is not the checked model's (%v):\n%.300s", err, engine)
			}
		})
	}
}
