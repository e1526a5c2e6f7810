//go:build !windows

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// Stand-ins compiled with the vendored headers of each TensorRT major play TensorRT for the
// binary TestMain builds, which has the shims of both. The user sets no LD_LIBRARY_PATH in
// any of them.

// layout is one way TensorRT is installed, and how trtbuild is told (or finds it).
type layout struct {
	name string
	lay  func(t *testing.T, root string, libs []standin.Lib) (env, args []string, dir string)
}

var layouts = []layout{
	{"--tensorrt-lib", func(t *testing.T, root string, libs []standin.Lib) ([]string, []string, string) {
		dir := standin.Build(t, filepath.Join(root, "trt"), libs...)
		return nil, []string{"--tensorrt-lib", dir}, dir
	}},
	{"TENSORRT_ROOT", func(t *testing.T, root string, libs []standin.Lib) ([]string, []string, string) {
		dir := standin.Build(t, filepath.Join(root, "TensorRT", "lib"), libs...)
		return []string{"TENSORRT_ROOT=" + filepath.Join(root, "TensorRT")}, nil, dir
	}},
	{"pip (VIRTUAL_ENV)", func(t *testing.T, root string, libs []standin.Lib) ([]string, []string, string) {
		venv := filepath.Join(root, "venv")
		dir := standin.VirtualEnv(t, venv, libs...)
		return []string{"VIRTUAL_ENV=" + venv}, nil, dir
	}},
}

// TestLoaderLayoutsBuildAnEngine: for each layout, `version --check-builder` creates and
// deletes a builder whose libnvinfer opened its builder resource by bare file name (found
// through the LD_LIBRARY_PATH the parent gave the probe), on the GPU the driver stand-in names
// through the driver API, with no CUDA runtime anywhere; and a build goes through the worker,
// the loader and the shim of the major to an engine: the stand-in TensorRT's plan, written with
// TensorRT's progress tree on the way.
func TestLoaderLayoutsBuildAnEngine(t *testing.T) {
	for _, c := range cgo.CompiledShims() {
		t.Run(fmt.Sprintf("TensorRT %d", c.Major()), func(t *testing.T) { loaderLayoutsBuildAnEngine(t, c) })
	}
}

// builtByStandIn checks that a build over stand-in libraries of version and build exited 0
// and wrote their plan to engine.
func builtByStandIn(t *testing.T, r result, engine string, version, build int) {
	t.Helper()
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "Built "+engine) {
		t.Fatalf("build exited %d, want 0 with the engine built:\n%s%s", r.code, r.stdout, r.stderr)
	}
	plan, err := os.ReadFile(engine)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TRTBUILD-SIMULATED-PLAN 1\n", "\nbuilder trtfake\n", fmt.Sprintf("\ntensorrt %s.%d\n", trtVersion(version), build)} {
		if !strings.Contains(string(plan), want) {
			t.Errorf("the engine lacks %q:\n%s", want, plan)
		}
	}
	// The lines a plain view always prints (phases of the first four levels start and end on
	// lines of their own), however fast the build: TensorRT 11's root, ended at step 5 of 6.
	for _, phase := range []string{"Building engine (6 steps)", "Cloning network graph", "Computing profile costs", "Determining refit engines", "(ended at 5/6)"} {
		if !strings.Contains(r.stdout+r.stderr, phase) {
			t.Errorf("the progress shows no %q:\n%s%s", phase, r.stdout, r.stderr)
		}
	}
}

func loaderLayoutsBuildAnEngine(t *testing.T, c cgo.Compiled) {
	const gpu = "NVIDIA A100-SXM4-40GB MIG 1g.5gb"
	resource := standin.BuilderResourceFile(c.TensorRT, 80)
	model := repoModel(t, "convnet.onnx")
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			env, args, dir := l.lay(t, root, standin.Loading(c.TensorRT, c.Build, 80, gpu))
			log := filepath.Join(root, "standin.log")
			env = append(env, standin.EnvLog+"="+log)

			r := trtbuild(t, env, append([]string{"version", "--check-builder"}, args...)...)
			if r.code != 0 {
				t.Fatalf("version --check-builder exited %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{
				"at " + filepath.Join(dir, "libnvinfer.so."), "(" + l.name + ")",
				"parser    " + filepath.Join(dir, "libnvonnxparser.so."), "(ONNX parser 0.1.0)",
				"cuda      driver 13.0 at " + filepath.Join(dir, "libcuda.so.1"),
				"gpu       0: " + gpu + ", compute capability 8.0, 108 SMs (1 device(s))",
				"builder   created and deleted on GPU 0",
				fmt.Sprintf("shim      builds with the TensorRT %d shim", c.Major()),
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("version does not say %q:\n%s", want, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "libcudart") {
				t.Errorf("version names a libcudart, though there is none:\n%s", r.stdout)
			}
			if got, want := standin.ReadLog(t, log), "builder resource "+resource+" loaded\nbuilder deleted\nprimary context released"; got != want {
				t.Errorf("the stand-ins noted %q, want %q", got, want)
			}

			os.Remove(log)
			engine := filepath.Join(root, "m.engine")
			r = trtbuild(t, env, append([]string{"--backend", "tensorrt", "--no-timing-cache", "--progress", "plain", "-o", engine, model}, args...)...)
			builtByStandIn(t, r, engine, c.TensorRT, c.Build)
			if got, want := standin.ReadLog(t, log), "builder resource "+resource+" loaded\nstream created: non-blocking\nstream destroyed\nbuilder deleted"; got != want {
				t.Errorf("the build's stand-ins noted %q, want %q", got, want)
			}
		})
	}
}

// TestCheckBuilderNamesTheMissingResource: a TensorRT folder without its builder resource
// fails `version --check-builder` with exit 1, TensorRT's error and a hint naming the file
// and the folder where it is; a build fails the same way with the builder-resource hint.
func TestCheckBuilderNamesTheMissingResource(t *testing.T) {
	t.Parallel()
	c := cgo.CompiledShims()[0]
	root := t.TempDir()
	libs := standin.Loading(c.TensorRT, c.Build, 90, "NVIDIA H200")
	resource := standin.BuilderResourceFile(c.TensorRT, 90)
	var without []standin.Lib
	for _, l := range libs {
		if l.File != resource {
			without = append(without, l)
		}
	}
	dir := standin.Build(t, filepath.Join(root, "incomplete"), without...)
	other := standin.Build(t, filepath.Join(root, "TensorRT", "lib"), libs...)
	env := []string{"TENSORRT_ROOT=" + filepath.Dir(other)}
	r := trtbuild(t, env, "version", "--check-builder", "--tensorrt-lib", dir)
	if r.code != 1 {
		t.Fatalf("version --check-builder exited %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"builder   failed: TensorRT could not create a builder: createInferBuilder: Error Code 6: API Usage Error (Unable to load library: " + resource,
		"hint      TensorRT loads " + resource + " by file name and it is not in " + dir + " but in " + other + " (TENSORRT_ROOT): point --tensorrt-lib at " + other,
		"seen      TENSORRT_ROOT " + filepath.Join(other, "libnvinfer.so."),
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("version does not say %q:\n%s", want, r.stdout)
		}
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "trtbuild: --check-builder: TensorRT could not create a builder") {
		t.Errorf("stderr is not the one line of the failed check: %q", r.stderr)
	}
}

// flagArgs are the arguments that turn on each build option a table of older minors can
// refuse (trt.FlagsNeedingMinors).
var flagArgs = map[string][]string{
	"--set-build-route": {"--set-build-route", "-conv_use_long_w=off"},
}

// TestOlderMinorsWithStandIns: libraries of older minors of the major the backend was compiled
// for, played by stand-ins, as internal/trt's table of older minors for these headers says:
// the oldest minor the headers drive loads, and a build builds an engine; the minor
// before it is refused, exit 2, with the table's reason; and a build with an option that needs
// a newer minor than the library's is refused, exit 2, in one line naming the option and both
// versions, while the same build on that newer minor builds an engine.
func TestOlderMinorsWithStandIns(t *testing.T) {
	for _, c := range cgo.CompiledShims() {
		t.Run(fmt.Sprintf("TensorRT %d", c.Major()), func(t *testing.T) { olderMinorsWithStandIns(t, c) })
	}
}

func olderMinorsWithStandIns(t *testing.T, c cgo.Compiled) {
	table, ok := trt.OlderMinorsFor(c.TensorRT)
	if !ok {
		t.Fatalf("no table of older minors for the headers compiled (TensorRT %d)", c.TensorRT)
	}
	model := repoModel(t, "convnet.onnx")
	version := func(minor, patch int) int { return table.Major*10000 + minor*100 + patch }
	engines := map[*testing.T]string{}
	var mu sync.Mutex
	build := func(t *testing.T, loaded int, extra ...string) result {
		t.Helper()
		root := t.TempDir()
		dir := standin.Build(t, filepath.Join(root, "trt"), standin.Loading(loaded, 7, 80, "NVIDIA A100-SXM4-40GB")...)
		engine := filepath.Join(root, "m.engine")
		mu.Lock()
		engines[t] = engine
		mu.Unlock()
		args := []string{"--backend", "tensorrt", "--no-timing-cache", "--progress", "plain", "--tensorrt-lib", dir, "-o", engine, model}
		return trtbuild(t, nil, append(args, extra...)...)
	}
	buildsEngine := func(t *testing.T, r result, loaded int) {
		t.Helper()
		mu.Lock()
		engine := engines[t]
		mu.Unlock()
		builtByStandIn(t, r, engine, loaded, 7)
	}
	if table.Oldest < table.HeaderMinor {
		t.Run(fmt.Sprintf("%d.%d is driven", table.Major, table.Oldest), func(t *testing.T) {
			t.Parallel()
			buildsEngine(t, build(t, version(table.Oldest, 0)), version(table.Oldest, 0))
		})
	}
	if table.Oldest > 0 {
		t.Run(fmt.Sprintf("%d.%d is refused", table.Major, table.Oldest-1), func(t *testing.T) {
			t.Parallel()
			r := build(t, version(table.Oldest-1, 3))
			want := fmt.Sprintf(" %d.%d.3 is older than TensorRT %d.%d, the oldest the TensorRT %s headers trtbuild was compiled against can drive (%s)",
				table.Major, table.Oldest-1, table.Major, table.Oldest, trtVersion(c.TensorRT), table.Why)
			if r.code != 2 || !strings.Contains(r.stderr, want) {
				t.Errorf("build exited %d, want 2 saying %q:\n%s%s", r.code, want, r.stdout, r.stderr)
			}
		})
	}
	for _, f := range table.Flags {
		args := flagArgs[f.Flag]
		if args == nil {
			t.Errorf("the table says %s needs %d.%d; add the arguments that use it to flagArgs", f.Flag, table.Major, f.Minor)
			continue
		}
		t.Run(f.Flag, func(t *testing.T) {
			t.Parallel()
			r := build(t, version(f.Minor-1, 0), args...)
			want := fmt.Sprintf("%s needs TensorRT %d.%d or newer; this is %d.%d.0", f.Flag, table.Major, f.Minor, table.Major, f.Minor-1)
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != 2 || !strings.HasSuffix(lines[len(lines)-1], want) {
				t.Errorf("build exited %d, want 2 ending with the line %q:\n%s%s", r.code, want, r.stdout, r.stderr)
			}
			buildsEngine(t, build(t, version(f.Minor, 0), args...), version(f.Minor, 0))
		})
	}
}

// trtVersion formats an NV_TENSORRT_VERSION integer as trt.Version does.
func trtVersion(v int) string {
	ver, err := trt.FromInt(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return ver.String()
}

// TestNoLibraryFromTheModelsFolder: the build worker works in the model's folder, which others
// may write; a library planted there (libcuda.so.1, which the backend opens by bare name) is
// never loaded, even where the user's LD_LIBRARY_PATH has an empty entry (glibc's "the working
// folder", as `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64` leaves it): the entry
// keeps naming the folder trtbuild was started in.
func TestNoLibraryFromTheModelsFolder(t *testing.T) {
	t.Parallel()
	c := cgo.CompiledShims()[0]
	root := t.TempDir()
	var tensorrt, driver []standin.Lib
	for _, l := range standin.Loading(c.TensorRT, c.Build, 80, "NVIDIA A100-SXM4-40GB") {
		if l.File == trt.CUDADriverFile {
			driver = append(driver, l)
		} else {
			tensorrt = append(tensorrt, l)
		}
	}
	trtDir := standin.Build(t, filepath.Join(root, "trt"), tensorrt...)
	driverDir := standin.Build(t, filepath.Join(root, "driver"), driver...)
	marker := filepath.Join(root, "planted-library-ran")
	models := filepath.Join(root, "models")
	standin.Build(t, models, standin.Lib{File: trt.CUDADriverFile, Src: `#include <stdio.h>
__attribute__((constructor)) static void planted() { FILE* f = fopen("` + marker + `", "w"); if (f) fclose(f); }
`})
	data, err := os.ReadFile(repoModel(t, "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(models, "convnet.onnx")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "work") // where trtbuild starts: the empty entry's folder
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--backend", "tensorrt", "--tensorrt-lib", trtDir, "--no-timing-cache", "--progress", "plain", "-o", filepath.Join(root, "m.engine"), model)
	cmd.Dir = work
	cmd.Env = append(testEnv(t), standin.EnvLog+"="+filepath.Join(root, "standin.log"), "LD_LIBRARY_PATH=:"+driverDir)
	r := runResult(t, cmd)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the libcuda.so.1 planted in the model's folder was loaded (exit %d)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "loaded libcuda (CUDA driver 13.0) from "+filepath.Join(driverDir, trt.CUDADriverFile)) {
		t.Fatalf("build exited %d, want an engine built over the stand-in with the driver of %s:\n%s%s", r.code, driverDir, r.stdout, r.stderr)
	}
}
