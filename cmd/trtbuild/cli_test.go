package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is trtbuild built once for these tests (with the race detector when the tests have it),
// so every test runs the real parent and worker processes.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "trtbuild-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "trtbuild")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	if tags := os.Getenv("TRTBUILD_TEST_TAGS"); tags != "" {
		args = append(args, "-tags", tags) // scripts/check/shim-coverage.sh: the gcov tag
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building trtbuild: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoModel returns a bundled test model, copied into a fresh folder so the engine lands there.
func repoModel(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "models", name)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("bundled model: %v", err)
	}
	dst := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

type result struct {
	code           int
	stdout, stderr string
}

func trtbuild(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(testEnv(t), env...)
	return runResult(t, cmd)
}

// runResult runs cmd and returns its exit status and output; a command that could not start
// fails the test.
func runResult(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errOut.String()}
}

// testEnv keeps builds off the user's cache directory and out of colour and TTY detection.
func testEnv(t *testing.T) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir(),
		"TERM=dumb", "GORACE=halt_on_error=1",
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := t.TempDir()
	model := repoModel(t, "convnet.onnx")
	socket := filepath.Join(dir, "model.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no model", []string{"--backend", "sim"}, "no model given"},
		{"two models", []string{"--backend", "sim", model, model + "2"}, "expected one model"},
		{"missing model", []string{"--backend", "sim", filepath.Join(dir, "nope.onnx")}, "does not exist"},
		{"directory as model", []string{"--backend", "sim", dir}, "is a directory"},
		{"unopenable model", []string{"--backend", "sim", socket}, "cannot read model"},
		{"unknown flag", []string{"--backend", "sim", "--frobnicate", model}, "unknown flag: --frobnicate"},
		{"bad flag value", []string{"--backend", "sim", "--opt-level", "x", model}, "invalid argument"},
		{"opt level out of range", []string{"--backend", "sim", "--opt-level", "9", model}, `invalid argument "9" for "--opt-level" flag: use 0 to 5`},
		{"bad progress", []string{"--backend", "sim", "--progress", "fancy", model}, "invalid --progress"},
		{"bad backend", []string{"--backend", "gpu", model}, "invalid --backend"},
		{"missing --tensorrt-lib", []string{"--backend", "sim", "--tensorrt-lib", filepath.Join(dir, "nope"), model}, "--tensorrt-lib " + filepath.Join(dir, "nope") + " does not exist; give the folder that holds libnvinfer.so.N"},
		{"keep-fp32 without fp16", []string{"--backend", "sim", "--keep-fp32", "Conv", model}, "--keep-fp32 keeps nodes in float32 when --fp16 or --bf16 converts the model"},
		{"fp8 with ampere+", []string{"--backend", "sim", "--fp8", "--hardware-compat", "ampere+", model}, "--fp8 cannot be combined with --hardware-compat ampere+"},
		{"file as --tensorrt-lib", []string{"--backend", "sim", "--tensorrt-lib", model, model}, "is not a folder; give the folder that holds libnvinfer.so.N, not the file"},
		{"malformed shapes", []string{"--backend", "sim", "--shapes", "images:1x3x", model}, "invalid --shapes"},
		{"negative dims", []string{"--backend", "sim", "--min-shapes", "images:-1x3", model}, "invalid --min-shapes"},
		{"min above max", []string{"--backend", "sim", "--min-shapes", "x:4", "--max-shapes", "x:2", model}, "invalid shapes"},
		{"bad workspace", []string{"--backend", "sim", "--workspace", "lots", model}, "invalid --workspace"},
		{"engine is a directory", []string{"--backend", "sim", "-o", dir, model}, "is a directory"},
		{"engine is the model", []string{"--backend", "sim", "-o", model, model}, "is the model itself"},
		{"unwritable engine folder", []string{"--backend", "sim", "-o", filepath.Join(dir, "missing", "x.engine"), model}, "cannot write the engine"},
		{"shape flag twice", []string{"--backend", "sim", "--shapes", "images:1x3x224x224", "--shapes", "images:2x3x224x224", model}, "given twice for profile 0"},
		{"profile out of order", []string{"--backend", "sim", "--profile", "1", model}, "the next one here is 0"},
		{"bad shapes in profile 1", []string{"--backend", "sim", "--shapes", "images:1x3x224x224", "--profile", "1", "--shapes", "images:1x3", model}, "profile 1"},
		{"zero kill-after", []string{"--backend", "sim", "--kill-after", "0s", model}, "invalid --kill-after"},
		{"negative timeout", []string{"--backend", "sim", "--timeout", "-1s", model}, `invalid argument "-1s" for "--timeout" flag: -1s is negative: give a positive duration, like 20m`},
		{"bad sim speed", []string{"--backend", "sim", "--sim-speed", "0", model}, "invalid --sim-speed"},
		{"random bytes", []string{"--backend", "sim", repoModel(t, "random_bytes.onnx")}, "is not an ONNX model"},
		{"wrong magic", []string{"--backend", "sim", repoModel(t, "wrong_magic.onnx")}, "is not an ONNX model"},
		{"truncated", []string{"--backend", "sim", repoModel(t, "truncated.onnx")}, "is truncated"},
		{"nested length bomb", []string{"--backend", "sim", repoModel(t, "nested_length_bomb.onnx")}, "is not an ONNX model"},
		{"dynamic input without shapes", []string{"--backend", "sim", repoModel(t, "dynamic_batch.onnx")}, "--min-shapes images:1x3x64x64"},
		{"shape for an unknown input", []string{"--backend", "sim", "--shapes", "image:1x3x224x224", model}, `"image"`},
		{"shape of the wrong rank", []string{"--backend", "sim", "--shapes", "images:1x3x224", model}, "images"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, tt.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "trtbuild: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr should be one line starting with 'trtbuild: ' and containing %q; got:\n%s", tt.want, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout should be empty on a usage error, got:\n%s", r.stdout)
			}
			if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
				t.Error("an engine was written")
			}
		})
	}
}

// TestNoTensorRTFound: where no TensorRT of either major is found, a build (with the default
// backend, auto, as with tensorrt) starts its worker, which cannot load one: exit 2, one line on
// stderr naming every place searched and how to point trtbuild at TensorRT, and no engine. It
// never becomes a simulated build silently.
func TestNoTensorRTFound(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	for _, args := range [][]string{nil, {"--backend", "tensorrt"}} {
		t.Run(strings.Join(append([]string{"backend"}, args...), " "), func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			r := trtbuild(t, nil, append(args, "--progress", "plain", model)...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "trtbuild: cannot use TensorRT: TensorRT library not found: cannot load libnvinfer.so.11 or libnvinfer.so.10; searched: ") ||
				!strings.Contains(lines[0], "point --tensorrt-lib") || !strings.Contains(lines[0], "--backend sim") {
				t.Errorf("stderr should be the one line of the search; got:\n%s", r.stderr)
			}
			if !strings.Contains(r.stdout, "(backend tensorrt,") || !strings.Contains(r.stdout, "Build failed") || !strings.Contains(r.stdout, "Hint: no TensorRT 10 or 11 was found") {
				t.Errorf("stdout should show the failed TensorRT build:\n%s", r.stdout)
			}
			if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
				t.Error("an engine was written")
			}
		})
	}
}

func TestTrtexecSpellings(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	engine := filepath.Join(filepath.Dir(model), "out.engine")
	r := trtbuild(t, nil, "--backend=sim", "--sim-speed=50", "--onnx="+model, "--saveEngine="+engine,
		"--builderOptimizationLevel=3", "--noTF32", "--memPoolSize=workspace:512M", "--skipInference")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", r.code, r.stderr, r.stdout)
	}
	if _, err := os.Stat(engine); err != nil {
		t.Errorf("--saveEngine was not honoured: %v", err)
	}
}

func TestProfiles(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "dynamic_batch.onnx")
	engine := filepath.Join(filepath.Dir(model), "two.engine")
	// trtexec's way of giving two optimization profiles.
	r := trtbuild(t, nil, "--backend=sim", "--sim-speed=50", "--progress=quiet", "-o", engine, model,
		"--profile=0", "--minShapes=images:1x3x64x64", "--optShapes=images:4x3x64x64", "--maxShapes=images:8x3x64x64",
		"--profile=1", "--minShapes=images:8x3x64x64", "--optShapes=images:16x3x64x64", "--maxShapes=images:32x3x64x64")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	plan, err := os.ReadFile(engine)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plan), "profiles 2\n") {
		t.Errorf("the builder did not get two profiles; plan:\n%s", plan)
	}
	// The second profile is checked against the model like the first.
	r = trtbuild(t, nil, "--backend", "sim", "--progress", "quiet", model, "--shapes", "images:1x3x64x64", "--profile", "1", "--shapes", "images:1x3x32x32")
	if r.code != 2 || !strings.Contains(r.stderr, "profile 1") {
		t.Errorf("a static dimension mismatch in profile 1: exit %d, %s", r.code, r.stderr)
	}
}

func TestSimulatedBuildPlain(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "20", model)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", r.code, r.stderr, r.stdout)
	}
	if strings.IndexByte(r.stdout, 0x1b) >= 0 {
		t.Error("plain output contains an ESC byte")
	}
	// TensorRT 11's tree, as the stand-in reports it: a root of 6 steps that ends early.
	for _, want := range []string{"#1 ", "Building engine (6 steps)", "Computing profile costs", "Timing graph nodes", "Building engine DONE", "(ended at 5/6)", "Built "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plain output lacks %q:\n%s", want, r.stdout)
		}
	}
	plan, err := os.ReadFile(strings.TrimSuffix(model, ".onnx") + ".engine")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(plan, []byte("TRTBUILD-SIMULATED-PLAN")) {
		t.Errorf("the simulated plan does not say it is simulated: %q", plan[:min(len(plan), 40)])
	}
	assertNoTempFiles(t, filepath.Dir(model))
}

func TestSimulatedBuildJSON(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "20", "--progress", "json", model)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	types := map[string]int{}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", i+1, err, line)
		}
		if m["v"] != float64(1) {
			t.Fatalf("line %d has v=%v", i+1, m["v"])
		}
		types[m["type"].(string)]++
	}
	if !strings.Contains(lines[0], `"type":"build"`) || !strings.Contains(lines[len(lines)-1], `"status":"built"`) {
		t.Errorf("first line should be build and last a built result:\n%s\n…\n%s", lines[0], lines[len(lines)-1])
	}
	if types["phase_start"] == 0 || types["phase_start"] != types["phase_finish"] || types["step"] == 0 {
		t.Errorf("event counts %v: want phases started and finished in equal number, and steps", types)
	}
}

func TestEnvProgressApplies(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	r := trtbuild(t, []string{"TRTBUILD_PROGRESS=json"}, "--backend", "sim", "--sim-speed", "50", model)
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"v":1,"type":"build"`) {
		t.Fatalf("TRTBUILD_PROGRESS=json not applied (exit %d):\n%s", r.code, r.stdout)
	}
	r = trtbuild(t, []string{"TRTBUILD_PROGRESS=json"}, "--backend", "sim", "--sim-speed", "50", "--progress", "quiet", model)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("--progress quiet should win over the environment (exit %d):\n%s", r.code, r.stdout)
	}
}

func TestFailures(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	tests := []struct {
		name       string
		args       []string
		wantStderr []string
	}{
		{"builder error", []string{"--sim-fail-phase", "Timing graph nodes"}, []string{"Error Code", "Timing graph nodes"}},
		{"worker crash", []string{"--sim-abort-phase", "Timing graph nodes"}, []string{"the build worker crashed", "SIGABRT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			engine := strings.TrimSuffix(model, ".onnx") + ".engine"
			if err := os.WriteFile(engine, []byte("GOOD ENGINE"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := trtbuild(t, nil, append([]string{"--backend", "sim", "--sim-speed", "20", model}, tt.args...)...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstderr: %s\nstdout: %s", r.code, r.stderr, r.stdout)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			assertUnchanged(t, engine, "GOOD ENGINE")
			assertNoTempFiles(t, filepath.Dir(model))
		})
	}
}

// startBuild starts a build and returns once its output shows that timing has begun.
func startBuild(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *lockedBuffer) {
	t.Helper()
	return start(t, "Timing graph nodes", args...)
}

// startRunning runs trtbuild in the background as startBuild does, returning once the build
// has begun (its first phase under the root): for tests that need a running build, not one
// that is timing (with long steps, reaching the timing takes TensorRT's whole preamble).
func startRunning(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *lockedBuffer) {
	t.Helper()
	return start(t, "Cloning network graph", args...)
}

// start runs trtbuild in the background and collects its output as it comes. With until set it
// returns once a line of stdout contains it (failing the test after a minute).
func start(t *testing.T, until string, args ...string) (*exec.Cmd, *bytes.Buffer, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = testEnv(t)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := until == ""
		if once {
			close(seen)
		}
		for sc.Scan() {
			out.write(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), until) {
				once = true
				close(seen)
			}
		}
		if !once {
			close(seen)
		}
	}()
	select {
	case <-seen:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("trtbuild never printed %q; output:\n%s", until, out.String())
	}
	return cmd, &errOut, out
}

// lockedBuffer is text safe for a subprocess's writer and the test's reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) write(s string)              { b.mu.Lock(); b.buf.WriteString(s); b.mu.Unlock() }
func (b *lockedBuffer) Write(p []byte) (int, error) { b.write(string(p)); return len(p), nil }
func (b *lockedBuffer) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		cmd.Process.Kill()
		t.Fatalf("trtbuild did not exit within %v", within)
		return -1
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name   string
		signal syscall.Signal
		code   int
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGTERM", syscall.SIGTERM, 143},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			engine := strings.TrimSuffix(model, ".onnx") + ".engine"
			if err := os.WriteFile(engine, []byte("GOOD ENGINE"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd, errOut, out := startBuild(t, "--backend", "sim", "--sim-speed", "2", model)
			if err := cmd.Process.Signal(tt.signal); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, 30*time.Second); code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s\nstdout: %s", code, tt.code, errOut, out)
			}
			if !strings.Contains(errOut.String(), "Cancel requested: the builder stops at its next step boundary") {
				t.Errorf("stderr lacks the cancel message:\n%s", errOut)
			}
			if !strings.Contains(out.String(), "Build cancelled") || !strings.Contains(out.String(), "CANCELLED") {
				t.Errorf("stdout should show the cancelled phases and outcome:\n%s", out)
			}
			assertUnchanged(t, engine, "GOOD ENGINE")
			assertNoTempFiles(t, filepath.Dir(model))
		})
	}
}

func TestSecondSignalStopsAtOnce(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	// The builder ignores the cancel request, so only the second signal can end the build: left
	// alone it would run for minutes (576 measuring steps of 1 s on 4 threads), far longer than
	// waitExit waits, however busy the machine. No test here measures how fast it stops.
	cmd, errOut, out := startRunning(t, "--backend", "sim", "--sim-step", "1s", "--no-timing-cache", "--sim-ignore-cancel", model)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, 60*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	if !strings.Contains(errOut.String(), "Stopping the build worker now") {
		t.Errorf("stderr lacks the stop message:\n%s", errOut)
	}
	if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
		t.Error("an engine was written")
	}
	assertNoTempFiles(t, filepath.Dir(model))
}

func assertUnchanged(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s was changed: %q, %v", path, got, err)
	}
}

// assertNoTempFiles checks that no temporary engine file was left behind.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestVersionWithoutTensorRT(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	r := trtbuild(t, nil, "version")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{"trtbuild ", "go        go1.", "tensorrt  compiled for TensorRT 10.16 and 11.1 (CUDA 13.0); not found: TensorRT library not found: cannot load libnvinfer.so.11 or libnvinfer.so.10"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("version output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestCheckBuilderWithoutTensorRT: where no TensorRT is found no builder can be made, so
// `version --check-builder`, which gates GPU jobs, fails in one line that says where it looked
// and how to point trtbuild at TensorRT.
func TestCheckBuilderWithoutTensorRT(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	r := trtbuild(t, nil, "version", "--check-builder")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "tensorrt  compiled for TensorRT 10.16 and 11.1") {
		t.Errorf("the version lines are missing:\n%s", r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "trtbuild: --check-builder: cannot use TensorRT: TensorRT library not found") ||
		!strings.Contains(lines[0], "point --tensorrt-lib") {
		t.Errorf("stderr is not the one-line explanation:\n%s", r.stderr)
	}
}
