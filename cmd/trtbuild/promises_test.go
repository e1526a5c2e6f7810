package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFullStdoutFails: a command whose output is its result fails (exit 1, one line saying
// why) when stdout cannot be written: a full disk must not leave an empty key.txt with exit 0.
func TestFullStdoutFails(t *testing.T) {
	t.Parallel() // real subprocesses
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	defer full.Close()
	model := repoModel(t, "convnet.onnx")
	dir := matrixDir(t)
	for _, args := range [][]string{
		{"version"},
		{"key", "--backend", "sim", model},
		{"inspect", model},
		{"matrix", "list", filepath.Join(dir, "matrix.yaml")},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Env = testEnv(t)
		cmd.Stdout = full
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		}
		if code != 1 || !strings.Contains(errOut.String(), "no space left on device") {
			t.Errorf("%v with a full stdout: exit %d, stderr %q; want 1 and the reason", args, code, errOut.String())
		}
	}
}

// TestNoHomeDegrades: with neither HOME nor XDG_CACHE_HOME (a minimal container, a systemd
// unit) the default build goes on without a timing cache, and says so.
func TestNoHomeDegrades(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	model := repoModel(t, "convnet.onnx")
	cmd := exec.Command(binary, "--backend", "sim", "--sim-speed", "1000", "--progress", "plain", model)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "no timing cache") {
		t.Fatalf("%v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
	}
}

// TestRefusalEndsTheJSONStream: a build refused before it starts still ends its JSON stream
// with a result line, carrying the refusal and its hint.
func TestRefusalEndsTheJSONStream(t *testing.T) {
	t.Parallel() // a real subprocess
	r := trtbuild(t, nil, "--backend", "sim", "--progress", "json", filepath.Join(t.TempDir(), "none.onnx"))
	var res map[string]any
	if r.code != 2 || json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &res) != nil {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
	if res["type"] != "result" || res["status"] != "failed" || res["usage_error"] != true || !strings.Contains(res["error"].(string), "does not exist") || res["hint"] != "check the path" {
		t.Fatalf("result line: %v", res)
	}
}

// TestCacheHitWritesReportAndTrace: a hit records itself in --report and --trace as a build
// would, and its result says it came from the cache.
func TestCacheHitWritesReportAndTrace(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	cache := filepath.Join(dir, "cache")
	simBuild(t, model, "-o", filepath.Join(dir, "a.engine"), "--engine-cache", cache)
	trace, rep := filepath.Join(dir, "hit.jsonl"), filepath.Join(dir, "hit.json")
	r := simBuild(t, model, "-o", filepath.Join(dir, "b.engine"), "--engine-cache", cache, "--trace", trace, "--report", rep)
	if !strings.Contains(r.stdout, "Engine cache hit") {
		t.Fatalf("no hit:\n%s", r.stdout)
	}
	lines, err := os.ReadFile(trace)
	if err != nil || !bytes.Contains(lines, []byte(`"type":"build"`)) || !bytes.Contains(lines, []byte("Engine cache hit")) || !bytes.Contains(lines, []byte(`"cached":true`)) {
		t.Fatalf("the trace of a hit: %v\n%s", err, lines)
	}
	if b, err := os.ReadFile(rep); err != nil || !json.Valid(b) {
		t.Fatalf("the report of a hit: %v", err)
	}
	j := trtbuild(t, nil, "--backend", "sim", "--progress", "json", model, "-o", filepath.Join(dir, "c.engine"), "--engine-cache", cache)
	if !strings.Contains(j.stdout, `"cached":true`) {
		t.Fatalf("the JSON result of a hit does not say cached:\n%s", j.stdout)
	}
}

// asNobody is the command prefix that runs trtbuild as the user nobody when the tests run as
// root, who writes to read-only folders; nothing otherwise. The test is skipped where root
// cannot change its user.
func asNobody(t *testing.T) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("as root this needs setpriv to run as another user")
	}
	return []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
}

// modelForNobody makes a folder outside the tests' private 0700 ones, readable by every user,
// holding a copy of the bundled convnet model, for a trtbuild run as nobody (asNobody).
func modelForNobody(t *testing.T) (dir, model string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "trtbuild-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	model = filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, model
}

// exitOf runs cmd and returns its exit status.
func exitOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestConvertReadOnlyFolder: convert -o into a folder that cannot be written is bad input,
// found before the conversion: exit 2. Root writes anywhere, so as root the command runs as
// nobody (setpriv).
func TestConvertReadOnlyFolder(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	prefix := asNobody(t)
	dir, model := modelForNobody(t)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	args := append(prefix, binary, "convert", "--fp16", model, "-o", filepath.Join(dir, "m16.onnx"))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=dumb"}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	code := exitOf(t, cmd)
	if code != 2 || !strings.Contains(errOut.String(), "choose a writable folder") {
		t.Fatalf("exit %d, stderr %q; want 2 and a hint", code, errOut.String())
	}
}

// TestReportReadOnlyFolderRefusedFirst: --report into a folder that cannot be written is
// refused before the build, as --trace is (exit 2, nothing built). As root the command runs
// as nobody (setpriv), since root writes anywhere.
func TestReportReadOnlyFolderRefusedFirst(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	prefix := asNobody(t)
	dir, model := modelForNobody(t)
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	out, err := os.MkdirTemp("", "trtbuild-out-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	os.Chmod(out, 0o777)
	args := append(prefix, binary, "--backend", "sim", "--no-timing-cache", model, "-o", filepath.Join(out, "m.engine"), "--report", filepath.Join(ro, "r.json"))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + out, "TERM=dumb"}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	code := exitOf(t, cmd)
	if code != 2 || !strings.Contains(errOut.String(), "--report") {
		t.Fatalf("exit %d, stderr %q; want 2 naming --report", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(out, "m.engine")); err == nil {
		t.Fatal("the build ran")
	}
}

// TestMissingTMPDIRNamed: -o /dev/null writes through a temporary file in $TMPDIR; a TMPDIR
// that does not exist is named as the problem, not /dev/null.
func TestMissingTMPDIRNamed(t *testing.T) {
	t.Parallel() // a real subprocess
	model := repoModel(t, "convnet.onnx")
	r := trtbuild(t, []string{"TMPDIR=" + filepath.Join(t.TempDir(), "gone")}, "--backend", "sim", "--no-timing-cache", model, "-o", "/dev/null")
	if r.code != 2 || !strings.Contains(r.stderr, "set TMPDIR to a writable folder") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestProgressToFullStdoutIsNotAFailure: for the commands whose stdout is progress (a build,
// matrix build), a full stdout stops the progress, not the work: exit 0.
func TestProgressToFullStdoutIsNotAFailure(t *testing.T) {
	t.Parallel() // real subprocesses
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	defer full.Close()
	dir := matrixDir(t)
	for _, args := range [][]string{
		{"--backend", "sim", "--sim-speed", "1000", "--progress", "plain", repoModel(t, "convnet.onnx")},
		{"matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1000", "--progress", "plain"},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Env = testEnv(t)
		cmd.Stdout = full
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if code := exitOf(t, cmd); code != 0 {
			t.Errorf("%v with a full stdout: exit %d\n%s", args, code, errOut.String())
		}
	}
}
