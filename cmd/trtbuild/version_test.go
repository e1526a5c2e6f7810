package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestVersionFlag: trtbuild --version prints what trtbuild version prints.
func TestVersionFlag(t *testing.T) {
	t.Parallel() // real subprocesses
	want := trtbuild(t, nil, "version")
	if want.code != 0 || !strings.HasPrefix(want.stdout, "trtbuild ") {
		t.Fatalf("version: exit %d\n%s%s", want.code, want.stdout, want.stderr)
	}
	for _, args := range [][]string{{"--version"}, {"--Version"}, {"--version", "--device", "0"}} {
		r := trtbuild(t, nil, args...)
		if r.code != 0 || r.stdout != want.stdout || r.stderr != "" {
			t.Errorf("%v: exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", args, r.code, r.stdout, want.stdout, r.stderr)
		}
	}
	r := trtbuild(t, nil, "--version", "m.onnx")
	if r.code != 2 || r.stderr != "trtbuild: --version takes no model (got m.onnx); run 'trtbuild --version' alone\n" || r.stdout != "" {
		t.Errorf("--version with a model: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestVersionJSON: version --json is one JSON object with the facts the text shows.
func TestVersionJSON(t *testing.T) {
	t.Parallel() // real subprocesses
	text := trtbuild(t, nil, "version")
	r := trtbuild(t, nil, "version", "--json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if strings.Count(r.stdout, "\n") != 1 || !strings.HasSuffix(r.stdout, "\n") {
		t.Errorf("not one line:\n%s", r.stdout)
	}
	var v struct {
		Version, Commit, Go, OS, Arch string
		TensorRT                      struct {
			CompiledFor []string        `json:"compiled_for"`
			Shim        int             `json:"shim"`
			Found       bool            `json:"found"`
			Version     string          `json:"version"`
			Reason      string          `json:"reason"`
			Probe       json.RawMessage `json:"probe"`
		}
	}
	d := json.NewDecoder(strings.NewReader(r.stdout))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	first := strings.SplitN(text.stdout, "\n", 2)[0]
	wantFirst := "trtbuild " + v.Version
	if c := v.Commit; c != "" {
		wantFirst += " (" + c[:min(len(c), 12)] + ")"
	}
	if first != wantFirst {
		t.Errorf("the text says %q, the JSON version %q and commit %q", first, v.Version, v.Commit)
	}
	if v.Go != runtime.Version() || v.OS != runtime.GOOS || v.Arch != runtime.GOARCH {
		t.Errorf("go %q %s/%s, want %s %s/%s", v.Go, v.OS, v.Arch, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	if !strings.Contains(text.stdout, "go        "+v.Go+" "+v.OS+"/"+v.Arch+"\n") {
		t.Errorf("the text's go line differs from the JSON's:\n%s", text.stdout)
	}
	if !slices.Equal(v.TensorRT.CompiledFor, []string{"10.16", "11.1"}) {
		t.Errorf("compiled_for %q, want the vendored headers' 10.16 and 11.1", v.TensorRT.CompiledFor)
	}
	if v.TensorRT.Found || v.TensorRT.Version != "" || v.TensorRT.Shim != 0 || len(v.TensorRT.Probe) == 0 ||
		!strings.Contains(text.stdout, "tensorrt  compiled for TensorRT 10.16 and 11.1 (CUDA 13.0); not found: "+v.TensorRT.Reason+"\n") {
		t.Errorf("without TensorRT: %+v\ntext:\n%s", v.TensorRT, text.stdout)
	}
}

// TestVersionJSONCheckBuilder: --check-builder fails as it does with text, after the JSON.
func TestVersionJSONCheckBuilder(t *testing.T) {
	t.Parallel() // a real subprocess
	r := trtbuild(t, nil, "version", "--json", "--check-builder")
	var v map[string]any
	if r.code != 1 || json.Unmarshal([]byte(r.stdout), &v) != nil || !strings.HasPrefix(r.stderr, "trtbuild: --check-builder: ") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("exit %d, want 1, the JSON and one line\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestVersionFullStdout: the version that could not be written fails, as `version` does.
func TestVersionFullStdout(t *testing.T) {
	t.Parallel() // real subprocesses
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	defer full.Close()
	for _, args := range [][]string{{"--version"}, {"version", "--json"}} {
		cmd := exec.Command(binary, args...)
		cmd.Env = testEnv(t)
		cmd.Stdout = full
		var errOut strings.Builder
		cmd.Stderr = &errOut
		err := cmd.Run()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		}
		if code != 1 || !strings.Contains(errOut.String(), "writing the version to stdout") || !strings.Contains(errOut.String(), "no space left on device") {
			t.Errorf("%v with a full stdout: exit %d, stderr %q; want 1 and the reason", args, code, errOut.String())
		}
	}
}
