package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSimScenarios checks the exit status and message of each --sim-scenario.
func TestSimScenarios(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	tests := []struct {
		scenario string
		code     int
		stderr   []string
	}{
		// TensorRT times convnet.onnx's 24 nodes as 10 fused layers; the stand-in fails the
		// middle one (the sixth), naming it as TensorRT names a layer it has no kernel for.
		{"fail", 1, []string{"trtbuild: TensorRT could not build the engine: IBuilder::buildSerializedNetworkToStream: Error Code 10: Internal Error (Could not find any implementation for node stage2/block1/conv2 + stage2/block1/bn2.)"}},
		{"crash", 1, []string{"trtbuild: the build worker crashed"}},
		{"nonsense", 2, []string{`trtbuild: invalid --sim-scenario "nonsense": use crash, fail, silence, slow-cancel`}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "50", "--no-timing-cache", "--progress", "plain", "--sim-scenario", tt.scenario, model)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s\nstdout: %s", r.code, tt.code, r.stderr, r.stdout)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			assertNoTempFiles(t, strings.TrimSuffix(model, "/convnet.onnx"))
		})
	}
}

// TestSimScenarioSilence checks that the builder reports nothing for the scenario's silence
// (20 s at speed 1, 2 s at --sim-speed 10) after "Timing graph nodes" starts, from the event
// times of the JSON stream, and then builds.
func TestSimScenarioSilence(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "10", "--no-timing-cache", "--progress", "json", "--sim-scenario", "silence", model)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	var start, next float64 = -1, -1
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev struct {
			Type string  `json:"type"`
			T    float64 `json:"t"`
			Name string  `json:"name"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if start >= 0 && ev.Type != "log" {
			next = ev.T
			break
		}
		if ev.Type == "phase_start" && ev.Name == "Timing graph nodes" {
			start = ev.T
		}
	}
	if start < 0 || next < 0 {
		t.Fatalf("no event after \"Timing graph nodes\" started:\n%s", r.stdout)
	}
	if gap := next - start; gap < 2.0 {
		t.Errorf("the builder was silent for %.3fs, want at least 2s", gap)
	}
}

// TestSimScenarioSlowCancel cancels a slow-cancel build: it stops at a step boundary, exit 130.
func TestSimScenarioSlowCancel(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	cmd, errOut, out := startRunning(t, "--backend", "sim", "--sim-speed", "4", "--no-timing-cache", "--sim-scenario", "slow-cancel", model)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 60*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	if !strings.Contains(errOut.String(), "Cancel requested: the builder stops at its next step boundary") {
		t.Errorf("stderr lacks the cancel message:\n%s", errOut)
	}
}
