package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trtbuild/trtbuild/internal/builder/buildertest"
	"github.com/trtbuild/trtbuild/internal/service"
)

// TestMain lets the test binary be the build worker and the probe, as trtbuild is.
func TestMain(m *testing.M) { buildertest.Main(m) }

// inMemory is a client session with the MCP server of a local Manager of simulated builds, in
// this process, and the bundled convnet's path.
type inMemory struct {
	m       *service.Manager
	session *mcp.ClientSession
	model   string
}

func newInMemory(t *testing.T) inMemory {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	data, err := os.ReadFile("../../testdata/models/convnet.onnx")
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "convnet.onnx")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := service.New(service.Config{StateDir: filepath.Join(t.TempDir(), "state")})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewServer(m, "test").Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m.Shutdown(ctx)
		m.Close()
	})
	return inMemory{m: m, session: cs, model: model}
}

// call is a build call's outcome.
type call struct {
	res BuildResult
	err error
}

// build calls the build tool in the background with options and timeout ("": none).
func (c inMemory) build(ctx context.Context, t *testing.T, options, timeout string) <-chan call {
	t.Helper()
	args := map[string]any{"model": c.model, "options": json.RawMessage(options)}
	if timeout != "" {
		args["timeout"] = timeout
	}
	out := make(chan call, 1)
	go func() {
		res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: "build", Arguments: args})
		var r BuildResult
		if err == nil {
			b, _ := json.Marshal(res.StructuredContent)
			err = json.Unmarshal(b, &r)
		}
		out <- call{r, err}
	}()
	return out
}

// running waits until n builds are running, each past its first step, and returns them,
// newest first.
func (c inMemory) running(t *testing.T, n int) []service.Snapshot {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if list := c.m.List(service.StateRunning, 0, ""); len(list) == n {
			for _, s := range list {
				waitStep(t, c.m, s.ID)
			}
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d builds did not start within a minute", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStep waits for a step event in build id's log.
func waitStep(t *testing.T, m *service.Manager, id string) {
	t.Helper()
	l, _ := m.Events(id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var after int64
	for {
		evs, ended, err := l.Next(ctx, after)
		if err != nil || ended {
			t.Fatalf("build %s had no step: ended %v, %v", id, ended, err)
		}
		for _, e := range evs {
			if e.Type == "step" {
				return
			}
			after = e.Seq
		}
	}
}

// sharedSim is a build of a few seconds that two calls share.
const sharedSim = `{"backend": "sim", "sim-speed": 5, "sim-post-silent": "3s", "no-timing-cache": true}`

// TestSharedBuildCalls: two calls of the same build each keep their own budget and cancel.
func TestSharedBuildCalls(t *testing.T) {
	t.Run("a short budget times out alone", func(t *testing.T) {
		c := newInMemory(t)
		long := c.build(context.Background(), t, sharedSim, "")
		c.running(t, 1)
		short := c.build(context.Background(), t, sharedSim, "1s")
		got := <-short
		if got.err != nil || got.res.State != "timed_out" || !strings.HasPrefix(got.res.Error, "build exceeded --timeout 1s ") {
			t.Fatalf("the call with a budget: %+v %v", got.res, got.err)
		}
		if got = <-long; got.err != nil || got.res.State != "succeeded" || got.res.Engine == "" {
			t.Fatalf("the call without a budget: %+v %v", got.res, got.err)
		}
	})
	t.Run("a cancelled call leaves the other's build running", func(t *testing.T) {
		c := newInMemory(t)
		stays := c.build(context.Background(), t, sharedSim, "")
		c.running(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		leaves := c.build(ctx, t, sharedSim, "")
		both := c.running(t, 2)
		cancel()
		if got := <-leaves; !errors.Is(got.err, context.Canceled) {
			t.Fatalf("the cancelled call: %+v %v", got.res, got.err)
		}
		ended, err := c.m.Wait(context.Background(), both[0].ID)
		if err != nil || ended.State != service.StateCancelled {
			t.Fatalf("the cancelled call's build: %+v %v", ended, err)
		}
		if s, _ := c.m.Get(both[1].ID); s.State != service.StateRunning {
			t.Fatalf("the other call's build is %s, want running", s.State)
		}
		if got := <-stays; got.err != nil || got.res.State != "succeeded" {
			t.Fatalf("the call that stayed: %+v %v", got.res, got.err)
		}
	})
	t.Run("cancelling every call cancels the build", func(t *testing.T) {
		c := newInMemory(t)
		slow := `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`
		ctx1, cancel1 := context.WithCancel(context.Background())
		defer cancel1()
		first := c.build(ctx1, t, slow, "")
		c.running(t, 1)
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		second := c.build(ctx2, t, slow, "")
		both := c.running(t, 2)
		cancel1()
		cancel2()
		<-first
		<-second
		stopped := false
		for _, s := range both {
			ended, err := c.m.Wait(context.Background(), s.ID)
			if err != nil || ended.State != service.StateCancelled || ended.Engine {
				t.Fatalf("build %s: %+v %v", s.ID, ended, err)
			}
			l, _ := c.m.Events(s.ID)
			stopped = stopped || strings.Contains(string(l.Lines()), "Cancel requested")
		}
		if !stopped {
			t.Fatal("the run was not cancelled: neither build's events have its cancel notice")
		}
	})
}
