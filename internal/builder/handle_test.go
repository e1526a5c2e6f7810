package builder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// started is a renderer that says when the build's first events arrived, and what notices it
// was shown.
type started struct {
	progress.Discard
	once    sync.Once
	first   chan struct{}
	mu      sync.Mutex
	notices []progress.NoticeKind
}

func newStarted() *started { return &started{first: make(chan struct{})} }

func (s *started) Handle([]progress.Event) { s.once.Do(func() { close(s.first) }) }

func (s *started) Notice(n progress.Notice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, n.Kind)
}

func (s *started) saw(kind progress.NoticeKind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.notices {
		if k == kind {
			return true
		}
	}
	return false
}

// slowSim are the options of a simulated build of the bundled convnet that lasts minutes unless
// it is stopped, its engine at dir/convnet.engine.
func slowSim(t *testing.T, dir string) Options {
	t.Helper()
	o := DefaultOptions()
	o.Model, o.Engine, o.Backend = filepath.Join("..", "..", "testdata", "models", "convnet.onnx"), filepath.Join(dir, "convnet.engine"), "sim"
	o.NoTimingCache, o.Sim.Speed = true, 0.01
	return o
}

// TestHandleCancelAndStop: a started build's handle is its cancel ladder for a front end that
// has no signals (a service, an agent): Cancel stops the build at its next step boundary,
// Stop kills the worker at once (also one that ignores the cancel); either way the build ends
// cancelled with exit status 130 and no engine is written.
func TestHandleCancelAndStop(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ignoreCancel bool
		act          func(h *Handle)
		notice       progress.NoticeKind
		forced       bool
	}{
		{"cancel", false, func(h *Handle) { h.Cancel() }, progress.NoticeCancelRequested, false},
		{"cancel twice is one cancel", false, func(h *Handle) { h.Cancel(); h.Cancel() }, progress.NoticeCancelRequested, false},
		{"stop", false, func(h *Handle) { h.Stop() }, progress.NoticeForceStop, true},
		{"stop a build that ignores the cancel", true, func(h *Handle) { h.Cancel(); h.Stop() }, progress.NoticeForceStop, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			dir := t.TempDir()
			o := slowSim(t, dir)
			o.Sim.IgnoreCancel = tc.ignoreCancel
			p, err := Prepare(o, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			view := newStarted()
			h := p.Start(context.Background(), Frontend{NewRenderer: func(progress.Controls) progress.Renderer { return view }})
			select {
			case <-view.first:
			case <-h.Done():
				t.Fatal(h.Wait())
			}
			tc.act(h)
			res, err := h.Wait()
			if res.Status != progress.StatusCancelled || exitcode.Of(err) != exitcode.Interrupted {
				t.Fatalf("%s: %+v, %v (exit %d); want cancelled, exit %d", tc.name, res, err, exitcode.Of(err), exitcode.Interrupted)
			}
			if forced := res.Error == "the build worker was stopped"; forced != tc.forced {
				t.Errorf("%s: the worker stopped (%q): forced %v, want %v", tc.name, res.Error, forced, tc.forced)
			}
			if !view.saw(tc.notice) {
				t.Errorf("%s: no %v notice among %v", tc.name, tc.notice, view.notices)
			}
			if _, err := os.Stat(o.Engine); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the engine is there (%v)", tc.name, err)
			}
		})
	}
}

// TestHandleCancelBeforeStart: a handle cancelled through its context before the build began
// starts nothing and writes nothing.
func TestHandleCancelBeforeStart(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	o := slowSim(t, t.TempDir())
	p, err := Prepare(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := p.Start(ctx, Frontend{}).Wait()
	if res.Status != "" || exitcode.Of(err) != exitcode.Interrupted {
		t.Fatalf("%+v, %v; want no result and exit %d", res, err, exitcode.Interrupted)
	}
	if _, err := os.Stat(o.Engine); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the engine is there (%v)", err)
	}
}

// TestPlanLookupThenStart: one plan is looked up (a miss: nothing written), built, and looked
// up again (a hit), with its target asked once and the model hashed once.
func TestPlanLookupThenStart(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	o := slowSim(t, dir)
	o.Sim.Speed = 1000
	o.EngineCache = EngineCache{Dir: filepath.Join(dir, "cache"), Size: "1G", Trust: "self"}
	hashed := 0
	o.ModelHashes = func(src *onnx.Source) (buildkey.ModelHashes, error) {
		hashed++
		return buildkey.HashSource(src)
	}
	asked := 0
	env := NewEnvWith(func(backend string, device int, libDir string) (buildkey.Target, error) {
		asked++
		return buildkey.Target{Backend: backend}, nil
	})
	p, err := Prepare(o, env)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Lookup(context.Background(), Frontend{}).Wait(); !errors.Is(err, ErrNotCached) {
		t.Fatalf("the first lookup: %v, want ErrNotCached", err)
	}
	if _, err := os.Stat(o.Engine); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a miss wrote the engine (%v)", err)
	}
	res, err := p.Start(context.Background(), Frontend{}).Wait()
	if err != nil || res.Status != progress.StatusBuilt || res.Cached {
		t.Fatalf("the build: %+v, %v", res, err)
	}
	res, err = p.Lookup(context.Background(), Frontend{}).Wait()
	if err != nil || !res.Cached {
		t.Fatalf("the second lookup: %+v, %v; want a hit", res, err)
	}
	key, err := p.Key()
	if err != nil {
		t.Fatal(err)
	}
	if c := env.Counts(); c.Plans != 1 || c.Probes != 1 || asked != 1 || hashed != 1 {
		t.Fatalf("%d plannings, %d probes (%d asked), %d hashes; want one each", c.Plans, c.Probes, asked, hashed)
	}
	if key.Key == "" {
		t.Fatal("no key")
	}
}

// TestEnvAsksOnce: questions asked together get one answer; an answer is kept, a failure is
// not (the next question asks again); each (backend, device, folder) is its own question.
func TestEnvAsksOnce(t *testing.T) {
	var mu sync.Mutex
	asked := map[int]int{}
	release := make(chan struct{})
	fail := true
	env := NewEnvWith(func(backend string, device int, libDir string) (buildkey.Target, error) {
		<-release
		mu.Lock()
		defer mu.Unlock()
		asked[device]++
		if device == 1 && fail {
			fail = false
			return buildkey.Target{}, errors.New("no GPU yet")
		}
		return buildkey.Target{Backend: backend, GPU: "GPU " + string(rune('A'+device))}, nil
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if tg, err := env.Target("tensorrt", 0, ""); err != nil || tg.GPU != "GPU A" {
				t.Errorf("device 0: %+v, %v", tg, err)
			}
		})
	}
	close(release)
	wg.Wait()
	if _, err := env.Target("tensorrt", 1, ""); err == nil {
		t.Fatal("device 1's first answer is a failure")
	}
	if tg, err := env.Target("tensorrt", 1, ""); err != nil || tg.GPU != "GPU B" {
		t.Fatalf("device 1 asked again: %+v, %v", tg, err)
	}
	env.Target("tensorrt", 1, "")
	if asked[0] != 1 || asked[1] != 2 || env.Counts().Probes != 3 {
		t.Fatalf("asked %v (%d probes); want device 0 once, device 1 twice (its failure not kept)", asked, env.Counts().Probes)
	}

	// An answer is kept for TargetAge, then asked again; what a worker says replaces it.
	clock := time.Now()
	env.now = func() time.Time { return clock }
	env.Target("tensorrt", 2, "")
	clock = clock.Add(TargetAge - time.Second)
	env.Target("tensorrt", 2, "")
	if asked[2] != 1 {
		t.Fatalf("device 2 asked %d times within TargetAge, want once", asked[2])
	}
	clock = clock.Add(2 * time.Second)
	env.Target("tensorrt", 2, "")
	if asked[2] != 2 {
		t.Fatalf("device 2 asked %d times after TargetAge, want twice", asked[2])
	}
	env.remember("tensorrt", 2, "", buildkey.Target{Backend: "tensorrt", GPU: "what the worker loaded"})
	if tg, _ := env.Target("tensorrt", 2, ""); tg.GPU != "what the worker loaded" || asked[2] != 2 {
		t.Fatalf("after a worker said its target: %+v, asked %d times", tg, asked[2])
	}
}

// TestHandleCancelKillsAfterKillAfter: a build whose builder does not honour a cancel (a step
// that lasts) is killed once KillAfter has passed after Handle.Cancel, as the option promises;
// the build ends cancelled, with the notice that says so.
func TestHandleCancelKillsAfterKillAfter(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	o := slowSim(t, t.TempDir())
	o.Sim.IgnoreCancel, o.KillAfter = true, 300*time.Millisecond
	p, err := Prepare(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	view := newStarted()
	h := p.Start(context.Background(), Frontend{NewRenderer: func(progress.Controls) progress.Renderer { return view }})
	select {
	case <-view.first:
	case <-h.Done():
		t.Fatal(h.Wait())
	}
	h.Cancel()
	res, err := h.Wait()
	if res.Status != progress.StatusCancelled || res.Error != "the build worker was stopped" || exitcode.Of(err) != exitcode.Interrupted {
		t.Fatalf("%+v, %v; want cancelled with the worker stopped, exit %d", res, err, exitcode.Interrupted)
	}
	if !view.saw(progress.NoticeCancelRequested) || !view.saw(progress.NoticeForceStop) {
		t.Errorf("notices %v; want the cancel, then the stop", view.notices)
	}
}

// TestStartOfAChangedModel: a plan whose model was replaced since it was planned (a queue's)
// starts no worker: it fails at once, saying so, and writes nothing.
func TestStartOfAChangedModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	o := slowSim(t, dir)
	o.Model = filepath.Join(dir, "convnet.onnx")
	if err := os.WriteFile(o.Model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := os.WriteFile(o.Model+".new", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(o.Model+".new", o.Model); err != nil {
		t.Fatal(err)
	}
	res, err := p.Start(context.Background(), Frontend{}).Wait()
	if res.Status != progress.StatusFailed || !strings.Contains(res.Error, "changed after the build was planned") || !strings.HasSuffix(res.Error, "; nothing was built") || exitcode.Of(err) != exitcode.Failed {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(o.Engine); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the engine is there (%v)", err)
	}
}
