package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/matrix"
)

// runAsSlurm runs an emitted script as slurmd runs a batch task: a copy of the script in a
// spool folder of its own (Slurm never runs the file that was submitted), in the folder of
// its #SBATCH --chdir, from a submit folder elsewhere, with SLURM_ARRAY_TASK_ID set to index
// (-1: unset). It returns the exit status and the task's output.
func runAsSlurm(t *testing.T, script string, index int, env ...string) result {
	t.Helper()
	text, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	chdir := ""
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, "#SBATCH --chdir="); ok {
			chdir = v
		}
	}
	if chdir == "" {
		t.Fatalf("%s has no #SBATCH --chdir:\n%s", script, text)
	}
	return runScriptIn(t, text, chdir, index, env...)
}

// runScriptIn runs a script's text as a Slurm task in dir.
func runScriptIn(t *testing.T, text []byte, dir string, index int, env ...string) result {
	t.Helper()
	spooled := filepath.Join(t.TempDir(), "slurm_script")
	if err := os.WriteFile(spooled, text, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", spooled)
	cmd.Dir = dir
	cmd.Env = append(testEnv(t), "SLURM_SUBMIT_DIR="+t.TempDir())
	if index >= 0 {
		cmd.Env = append(cmd.Env, "SLURM_ARRAY_TASK_ID="+strconv.Itoa(index))
	}
	cmd.Env = append(cmd.Env, env...)
	return runResult(t, cmd)
}

// emitSlurm runs `matrix emit slurm` in the folder cwd with args, as a user would.
func emitSlurm(t *testing.T, cwd string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"matrix", "emit", "slurm"}, args...)...)
	cmd.Dir = cwd
	cmd.Env = testEnv(t)
	return runResult(t, cmd)
}

// engines lists the engine files below a matrix's output folder, relative to it.
func engines(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	root := filepath.Join(dir, "engines")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".engine") {
			rel, _ := filepath.Rel(root, p)
			got = append(got, rel)
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestEmitSlurmRunsCells checks the scripts' directives, then runs a script as Slurm would
// (a spooled copy, in its --chdir, submitted from elsewhere) with a trtbuild stand-in that
// records its arguments; the recorded command, run with the simulated builder, builds that
// task's cell. Emit runs in the matrix folder's parent with a relative path: the script
// records the folder's absolute path.
func TestEmitSlurmRunsCells(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	bin := t.TempDir()
	record := filepath.Join(bin, "args")
	fake := filepath.Join(bin, "trtbuild")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > "+record+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := emitSlurm(t, filepath.Dir(dir), filepath.Join(filepath.Base(dir), "matrix.yaml"), "--trtbuild", fake, "--partition", "gpu")
	if r.code != 0 {
		t.Fatalf("emit slurm: %d %s", r.code, r.stderr)
	}
	script := filepath.Join(dir, "trtbuild-l4.sbatch")
	text, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-5\n", "#SBATCH --gres=gpu:l4:1\n", "#SBATCH --partition=gpu\n",
		"#SBATCH --chdir=" + dir + "\n", "#SBATCH --output=logs/%x-%A_%a.jsonl\n", "\ntrtbuild=" + fake + "\n"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("script lacks %q:\n%s", want, text)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "logs")); err != nil || !st.IsDir() {
		t.Errorf("emit made no log folder: %v", err)
	}
	f, err := matrix.Load(filepath.Join(dir, "matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, index := range []int{2, 3} {
		if r := runAsSlurm(t, script, index); r.code != 0 {
			t.Fatalf("running the script: exit %d\n%s", r.code, r.stderr)
		}
		data, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimSpace(string(data)), "\n")
		want := []string{"matrix", "cell", "matrix.yaml", "--matrix-sha256", f.SHA256, "--target", "l4", "--index", strconv.Itoa(index), "--progress", "json"}
		if strings.Join(args, " ") != strings.Join(want, " ") {
			t.Fatalf("task %d ran trtbuild %q\nwant %q", index, args, want)
		}
		runPod(t, dir, "l4", index, append(args, "--backend", "sim", "--sim-speed", "1000"))
	}
	if r := runAsSlurm(t, script, -1); r.code == 0 || !strings.Contains(r.stderr, "not run as a Slurm array task") {
		t.Errorf("the script ran without SLURM_ARRAY_TASK_ID: exit %d %s", r.code, r.stderr)
	}
}

// TestSlurmScriptAsEmitted runs the script of a matrix whose file selects the simulated
// builder, as emitted, with the real trtbuild: each defect found on a real Slurm, in turn.
func TestSlurmScriptAsEmitted(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	file := filepath.Join(dir, "matrix.yaml")
	writeMatrix(t, dir, testMatrix+"backend: sim\nbuild_flags: [--sim-speed, \"1000\"]\n")
	if r := emitSlurm(t, t.TempDir(), file, "--trtbuild", binary); r.code != 0 || !strings.Contains(r.stdout, "Each task runs "+binary+", which every node must have at that path") {
		t.Fatalf("emit slurm: %d %s%s", r.code, r.stdout, r.stderr)
	}
	script := filepath.Join(dir, "trtbuild-l4.sbatch")
	old, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	// The backend comes from the matrix file: no wrapper, no --backend.
	r := runAsSlurm(t, script, 1)
	if r.code != 0 || !strings.Contains(r.stdout, `"type":"result"`) || !strings.Contains(r.stdout, `"backend":"sim"`) {
		t.Fatalf("task 1: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := engines(t, dir); strings.Join(got, ",") != "l4/convnet/fp16.engine" {
		t.Fatalf("task 1 built %v, want l4/convnet/fp16.engine", got)
	}

	// A precision added to the matrix moves the cells: task 1 of the old script is now
	// l4/convnet/bf16. The old script builds nothing, and says to emit again.
	writeMatrix(t, dir, strings.Replace(testMatrix, "precisions: [fp32, fp16]", "precisions: [fp32, bf16, fp16]", 1)+"backend: sim\nbuild_flags: [--sim-speed, \"1000\"]\n")
	for _, index := range []int{0, 1, 2, 5} {
		r := runScriptIn(t, old, dir, index)
		if r.code != 2 || !strings.Contains(r.stderr, "has changed since this script or Job was emitted from it") || !strings.Contains(r.stderr, "emit again") ||
			strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("old script, task %d, changed matrix: exit %d\n%s", index, r.code, r.stderr)
		}
	}
	if got := engines(t, dir); strings.Join(got, ",") != "l4/convnet/fp16.engine" {
		t.Fatalf("the old script built %v", got)
	}
	// Emitted again, task 1 is the new matrix's cell 1.
	if r := emitSlurm(t, dir, "matrix.yaml", "--trtbuild", binary); r.code != 0 {
		t.Fatalf("emit again: %d %s", r.code, r.stderr)
	}
	if r := runAsSlurm(t, script, 1); r.code != 0 {
		t.Fatalf("new script, task 1: exit %d\n%s", r.code, r.stderr)
	}
	if got := engines(t, dir); strings.Join(got, ",") != "l4/convnet/bf16.engine,l4/convnet/fp16.engine" {
		t.Fatalf("the new script's task 1 built %v, want l4/convnet/bf16.engine", got)
	}

	// A task that Slurm could not start in the matrix folder (a node that mounts it
	// elsewhere) says where it ran and how to fix it, instead of "does not exist".
	text, _ := os.ReadFile(script)
	if r := runScriptIn(t, text, t.TempDir(), 0); r.code != 2 || !strings.Contains(r.stderr, "no matrix.yaml in ") || !strings.Contains(r.stderr, "sbatch --chdir=DIR") {
		t.Errorf("a task outside the matrix folder: exit %d %s", r.code, r.stderr)
	}
	// A node without trtbuild at the script's path: exit 2 and the fix, not 127.
	if r := emitSlurm(t, dir, "matrix.yaml", "--trtbuild", "/nonexistent/bin/trtbuild"); r.code != 0 {
		t.Fatalf("emit: %d %s", r.code, r.stderr)
	}
	if r := runAsSlurm(t, script, 0); r.code != 2 || !strings.Contains(r.stderr, "/nonexistent/bin/trtbuild is not an executable on ") || !strings.Contains(r.stderr, "--trtbuild PATH") {
		t.Errorf("a node without trtbuild: exit %d %s", r.code, r.stderr)
	}
}

// TestEmitSlurmRefuses: what would not run on the nodes is refused when emitting, in one line
// with the fix, and no script is written.
func TestEmitSlurmRefuses(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"trtbuild from PATH", []string{"--trtbuild", "trtbuild"}, `--trtbuild "trtbuild": give the absolute path of trtbuild on the cluster's nodes`},
		{"trtbuild with arguments", []string{"--trtbuild", "/opt/trtbuild --backend sim"}, "has characters an sbatch script cannot hold"},
		{"relative matrix folder", []string{"--matrix-dir", "data/matrix"}, `--matrix-dir "data/matrix": give the matrix folder's absolute path`},
		{"log folder outside", []string{"--log-dir", "../logs"}, `--log-dir "../logs": give a folder inside the matrix folder`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := matrixDir(t)
			r := trtbuild(t, nil, append([]string{"matrix", "emit", "slurm", filepath.Join(dir, "matrix.yaml")}, tc.args...)...)
			wantRefused(t, r, tc.want)
			assertNothingWritten(t, dir)
		})
	}
}

// TestMatrixBackendFromFile: the matrix file's backend is every cell's, for matrix cell (what
// the emitted tasks run) and matrix build; --backend overrides it, and build_flags'
// --sim-speed sets the simulation's speed unless --sim-speed is given.
func TestMatrixBackendFromFile(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	for _, tc := range []struct {
		name, file string
		args       []string
		speed      int // the simulated step is builder.DefaultSimStep / speed
	}{
		{"file says sim", "backend: sim\nbuild_flags: [--sim-speed, \"1000\"]\n", nil, 1000},
		{"--sim-speed overrides build_flags", "backend: sim\nbuild_flags: [--sim-speed, \"1000\"]\n", []string{"--sim-speed", "500"}, 500},
		{"--backend overrides the file", "backend: tensorrt\nbuild_flags: [--sim-speed, \"1000\"]\n", []string{"--backend", "sim"}, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := matrixDir(t)
			writeMatrix(t, dir, testMatrix+tc.file)
			r := trtbuild(t, nil, append([]string{"matrix", "cell", filepath.Join(dir, "matrix.yaml"), "--index", "0", "--progress", "json"}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			var first struct {
				Type     string `json:"type"`
				Backend  string `json:"backend"`
				Settings struct {
					Sim struct {
						StepNS int `json:"step_ns"`
					} `json:"sim"`
				} `json:"settings"`
			}
			line, _, _ := strings.Cut(r.stdout, "\n")
			if err := json.Unmarshal([]byte(line), &first); err != nil || first.Type != "build" || first.Backend != "sim" || first.Settings.Sim.StepNS != int(builder.DefaultSimStep)/tc.speed {
				t.Fatalf("first event %s (%v); want a sim build with step %d ns", line, err, int(builder.DefaultSimStep)/tc.speed)
			}
		})
	}
	dir := matrixDir(t)
	writeMatrix(t, dir, testMatrix+"backend: sim\nbuild_flags: [--sim-speed, \"1000\"]\n")
	r := trtbuild(t, nil, "matrix", "build", filepath.Join(dir, "matrix.yaml"), "--progress", "plain")
	if r.code != 0 || !strings.Contains(r.stdout, "6 built") {
		t.Fatalf("matrix build with the file's backend: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeMatrix(t, dir, testMatrix+"backend: gpu\n")
	wantRefused(t, trtbuild(t, nil, "matrix", "list", filepath.Join(dir, "matrix.yaml")), `backend "gpu": use auto, tensorrt or sim`)
}

// TestMatrixIndex: after the cells ran elsewhere (each a `matrix cell`, as a Slurm task or a
// pod runs it), `matrix index` writes index.json and index.html from their manifests: a cell
// that has not run, or whose engine is gone or is a link, is missing (exit 1); a cell served
// by the engine cache is cached.
func TestMatrixIndex(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	file := filepath.Join(dir, "matrix.yaml")
	writeMatrix(t, dir, testMatrix+"backend: sim\nbuild_flags: [--sim-speed, \"1000\"]\n")
	env := []string{"XDG_CACHE_HOME=" + t.TempDir()}
	cell := func(i int) {
		t.Helper()
		if r := trtbuild(t, env, "matrix", "cell", file, "--index", strconv.Itoa(i), "--progress", "quiet"); r.code != 0 {
			t.Fatalf("cell %d: exit %d %s", i, r.code, r.stderr)
		}
	}
	index := func(wantCode int) matrix.Index {
		t.Helper()
		r := trtbuild(t, nil, "matrix", "index", file)
		if r.code != wantCode {
			t.Fatalf("matrix index: exit %d, want %d\n%s%s", r.code, wantCode, r.stdout, r.stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, "engines", matrix.IndexName))
		if err != nil {
			t.Fatal(err)
		}
		var x matrix.Index
		if err := json.Unmarshal(data, &x); err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(dir, "engines", matrix.PageName))
		if err != nil || !strings.Contains(string(page), "collected from their manifests") {
			t.Fatalf("index.html: %v\n%s", err, page)
		}
		return x
	}
	wantRefused(t, trtbuild(t, nil, "matrix", "index", file), "run the matrix first")
	for i := 0; i < 5; i++ {
		cell(i)
	}
	x := index(1)
	if x.Built != 5 || x.Missing != 1 || !x.Collected || x.Cells[5].Status != matrix.StatusMissing || x.Cells[0].Key == "" || x.Cells[0].Report == "" {
		t.Fatalf("index after 5 of 6 cells: %+v", x)
	}
	cell(5)
	if x := index(0); x.Built != 6 || x.Missing != 0 {
		t.Fatalf("index after all cells: %+v", x)
	}
	// Cell 0 again: copied from the engine cache.
	cell(0)
	x = index(0)
	if got := statuses(x); got["l4/convnet/fp32"] != matrix.StatusCached || got["l4/convnet/fp16"] != matrix.StatusBuilt {
		t.Fatalf("statuses %v", got)
	}
	// An engine gone (its manifest left), and one replaced by a link: missing, not built.
	engine1 := filepath.Join(dir, "engines", "l4", "convnet", "fp16.engine")
	engine2 := filepath.Join(dir, "engines", "l4", "classifier", "b8-fp32.engine")
	if err := os.Remove(engine1); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(engine2); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "models", "convnet.onnx"), engine2); err != nil {
		t.Fatal(err)
	}
	x = index(1)
	if x.Missing != 2 || x.Cells[1].Status != matrix.StatusMissing || x.Cells[2].Status != matrix.StatusMissing || x.Cells[2].Error == "" {
		t.Fatalf("index with an engine gone and one a link: %+v", x)
	}
	// A build flag changed and the cells not run again (or failed): their engines are of the
	// old matrix, whose keys the cells no longer give; missing, not built.
	writeMatrix(t, dir, testMatrix+"backend: sim\nbuild_flags: [--sim-speed, \"1000\", --opt-level, \"5\"]\n")
	x = index(1)
	if x.Built != 0 || x.Cached != 0 || x.Missing != 6 || !strings.Contains(x.Cells[0].Error, "other build settings") {
		t.Fatalf("index after build_flags changed: %+v", x)
	}
}

// TestMatrixIndexRefusesLinkedOutput: the default output folder ("engines" beside the matrix
// file) is trtbuild's own, which matrix build and matrix cell refuse to follow as a link;
// matrix index refuses it too, and writes no index where the link leads.
func TestMatrixIndexRefusesLinkedOutput(t *testing.T) {
	t.Parallel()
	dir := matrixDir(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "engines")); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, trtbuild(t, nil, "matrix", "index", filepath.Join(dir, "matrix.yaml")), "does not follow links")
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("matrix index wrote %v where the link leads", entries)
	}
}
