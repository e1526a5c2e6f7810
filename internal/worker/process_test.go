package worker

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/winetest"
)

// helperEnv makes the test binary a stand-in process (TestMain): "worker" is a real worker
// (ServeFiles), "hang" a worker that reports whatever hangReport says and never ends by
// itself, "parent" a parent that starts a hanging worker, prints its pid and waits.
const helperEnv = "TRTBUILD_WORKER_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "worker":
		if err := ServeFiles(); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "hang":
		fmt.Println(hangReport())
		for {
			time.Sleep(time.Hour)
		}
	case "parent":
		plan, err := os.Create(os.Getenv(helperEnv + "_PLAN"))
		if err != nil {
			fmt.Println("parent:", err)
			os.Exit(1)
		}
		p, err := Start(StartOptions{Command: []string{os.Args[0]}, Env: helperEnviron("hang"), Plan: plan, Request: Request{Backend: "sim"}})
		if err != nil {
			fmt.Println("parent:", err)
			os.Exit(1)
		}
		fmt.Printf("worker %d\n", p.cmd.Process.Pid)
		for {
			time.Sleep(time.Hour)
		}
	}
	fmt.Fprintf(os.Stderr, "unknown %s=%q\n", helperEnv, os.Getenv(helperEnv))
	os.Exit(2)
}

// helperEnviron is this process's environment with the helper mode set to mode. The race
// detector's pause of a second at exit is turned off: in it the worker's watchdog would see
// the control pipe end and exit with ParentGone instead.
func helperEnviron(mode string) []string {
	env := []string{helperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnv+"=") && !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	return env
}

// startHelper starts the test binary as a worker in mode, with a plan file in a temporary
// folder, and returns the process and the plan file's path.
func startHelper(t *testing.T, mode string, req Request) (*Process, string) {
	t.Helper()
	path := filepath.Join(winetest.TempDir(t), "engine.plan.tmp")
	plan, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plan.Close() })
	p, err := Start(StartOptions{Command: []string{os.Args[0]}, Env: helperEnviron(mode), Plan: plan, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	return p, path
}

// collect reads every event until the worker closes the event pipe, calling each with every
// batch, and returns them.
func collect(p *Process, each func([]progress.Event)) []progress.Event {
	var all []progress.Event
	for batch := range p.Events() {
		all = append(all, batch...)
		if each != nil {
			each(batch)
		}
		p.Recycle(batch)
	}
	return all
}

func TestStartRunsABuildInTheWorker(t *testing.T) {
	p, plan := startHelper(t, "worker", simRequest(t))
	events := collect(p, nil)
	st, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode() != 0 {
		t.Fatalf("worker exit status %d, output %q, events %+v", st.ExitCode(), p.Tail(), events)
	}
	if len(events) == 0 {
		t.Fatal("no events from the worker")
	}
	last := events[len(events)-1]
	if last.Result == nil || last.Result.Status != progress.StatusBuilt || last.Result.EngineBytes == 0 {
		t.Fatalf("last event %+v, want a built result", last)
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("TRTBUILD-SIMULATED-PLAN")) || int64(len(data)) != last.Result.EngineBytes {
		t.Fatalf("plan file holds %d bytes starting %q, want the %d bytes of the simulated plan", len(data), data[:min(len(data), 24)], last.Result.EngineBytes)
	}
}

func TestCancelReachesTheWorker(t *testing.T) {
	req := simRequest(t)
	req.Sim.Step = 50 * time.Millisecond // minutes for the whole build: only a cancel ends it soon
	p, plan := startHelper(t, "worker", req)
	cancelled := false
	events := collect(p, func([]progress.Event) {
		if !cancelled {
			cancelled = true
			if err := p.Cancel(); err != nil {
				t.Error(err)
			}
		}
	})
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Result == nil || last.Result.Status != progress.StatusCancelled {
		t.Fatalf("last event %+v, want a cancelled result", last)
	}
	if fi, err := os.Stat(plan); err != nil || fi.Size() != 0 {
		t.Fatalf("plan file after a cancel: %v, %v; want it empty", fi, err)
	}
}

func TestKillStopsAHangingWorker(t *testing.T) {
	p, _ := startHelper(t, "hang", Request{Backend: "sim"})
	waitFor(t, "the worker's first line", func() bool { return len(p.Head()) > 0 })
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	collect(p, nil)
	st, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.Success() {
		t.Fatalf("a killed worker exited %v", st)
	}
	checkKilled(t, st)
}

// waitFor polls cond until it holds, failing the test after a deadline that only a hang meets.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
