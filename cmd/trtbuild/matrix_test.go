package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/matrix"
)

const testMatrix = `version: 1
models:
  - path: models/convnet.onnx
  - name: classifier
    path: models/dynamic_batch.onnx
    profiles: [b8]
  - path: models/external_data.onnx
precisions: [fp32, fp16]
profiles:
  - name: b8
    min: images:1x3x64x64
    opt: images:8x3x64x64
    max: images:16x3x64x64
targets:
  - name: l4
    gpu: NVIDIA-L4
    compute_capability: "8.9"
`

// matrixDir makes a matrix folder: three bundled models (one with external data) and the
// matrix file, 3 models × 2 precisions on one target.
func matrixDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"convnet.onnx", "dynamic_batch.onnx", "external_data.onnx", "external_data.bin"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "models", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeMatrix(t, dir, testMatrix)
	return dir
}

func writeMatrix(t testing.TB, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "matrix.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildMatrix runs `matrix build` with the simulated builder and returns the index it wrote.
func buildMatrix(t *testing.T, dir string, extra ...string) matrix.Index {
	t.Helper()
	args := append([]string{"matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1000", "--progress", "plain"}, extra...)
	r := trtbuild(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("matrix build: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "engines", matrix.IndexName))
	if err != nil {
		t.Fatal(err)
	}
	var x matrix.Index
	if err := json.Unmarshal(data, &x); err != nil {
		t.Fatal(err)
	}
	if len(x.Cells) != 6 {
		t.Fatalf("index has %d cells, want 6", len(x.Cells))
	}
	return x
}

// statuses returns "id=status" for every cell, sorted.
func statuses(x matrix.Index) map[string]string {
	out := map[string]string{}
	for _, c := range x.Cells {
		out[c.ID] = c.Status
	}
	return out
}

func built(x matrix.Index) []string {
	var ids []string
	for _, c := range x.Cells {
		if c.Status == matrix.StatusBuilt {
			ids = append(ids, c.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// TestMatrixBuild is the "done means" with the simulated builder: 3 models × 2
// precisions build; a second run builds nothing; changing one weight rebuilds exactly the
// cells of that model; renaming model files rebuilds nothing.
func TestMatrixBuild(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := matrixDir(t)
	first := buildMatrix(t, dir)
	if got := built(first); len(got) != 6 {
		t.Fatalf("first run built %v, want all 6 cells", got)
	}
	keys := map[string]string{}
	for _, c := range first.Cells {
		if !buildkey.Valid(c.Key) || c.Engine == "" || c.Manifest == "" || c.Report == "" {
			t.Errorf("cell %s: index entry %+v lacks key, engine, manifest or report", c.ID, c)
		}
		if other, dup := keys[c.Key]; dup {
			t.Errorf("cells %s and %s share key %s", c.ID, other, c.Key)
		}
		keys[c.Key] = c.ID
		m, err := manifest.Read(filepath.Join(dir, "engines", c.Manifest))
		if err != nil || m.Key != c.Key || m.Parts.GPU != "NVIDIA-L4" {
			t.Errorf("cell %s: manifest %+v, %v", c.ID, m, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "engines", matrix.PageName))
	if err != nil || !bytes.Contains(page, []byte("6 built")) {
		t.Errorf("index.html: %v\n%s", err, page)
	}

	second := buildMatrix(t, dir)
	for id, st := range statuses(second) {
		if st != matrix.StatusCached {
			t.Errorf("second run: cell %s %s, want cached", id, st)
		}
	}
	for i, c := range second.Cells {
		if c.Key != first.Cells[i].Key {
			t.Errorf("cell %s: key changed between runs", c.ID)
		}
	}

	// One weight of the external-data model changes: only its two cells are rebuilt.
	flipFirstByte(t, filepath.Join(dir, "models", "external_data.bin"))
	third := buildMatrix(t, dir)
	if got, want := built(third), []string{"l4/external-data/fp16", "l4/external-data/fp32"}; !equal(got, want) {
		t.Errorf("after changing one weight, built %v, want %v", got, want)
	}
	for i, c := range third.Cells {
		m, err := manifest.Read(filepath.Join(dir, "engines", c.Manifest))
		if err != nil {
			t.Fatal(err)
		}
		old := first.Cells[i]
		if strings.HasPrefix(c.ID, "l4/external-data/") {
			if c.Key == old.Key {
				t.Errorf("cell %s: key did not change with its weights", c.ID)
			}
			if m.Parts.Graph != firstGraph(t, first, dir, i) {
				t.Errorf("cell %s: the graph hash changed with a weight", c.ID)
			}
		} else if c.Key != old.Key {
			t.Errorf("cell %s: key changed although its model did not", c.ID)
		}
	}

	// Rename two model files (one whose cells are named after the file) and point the matrix
	// at the new names: nothing is built.
	for _, mv := range [][2]string{{"convnet.onnx", "resnet-lite.onnx"}, {"dynamic_batch.onnx", "clf.onnx"}} {
		if err := os.Rename(filepath.Join(dir, "models", mv[0]), filepath.Join(dir, "models", mv[1])); err != nil {
			t.Fatal(err)
		}
	}
	renamed := strings.NewReplacer("models/convnet.onnx", "models/resnet-lite.onnx", "models/dynamic_batch.onnx", "models/clf.onnx").Replace(testMatrix)
	writeMatrix(t, dir, renamed)
	fourth := buildMatrix(t, dir)
	if got := built(fourth); len(got) != 0 {
		t.Errorf("after renaming model files, built %v, want none", got)
	}
	if fourth.Cached != 6 {
		t.Errorf("after renaming, %d cells from the cache, want 6", fourth.Cached)
	}
	if _, err := os.Stat(filepath.Join(dir, "engines", "l4", "resnet-lite", "fp16.engine")); err != nil {
		t.Errorf("the renamed model's engine was not written: %v", err)
	}
}

func firstGraph(t *testing.T, x matrix.Index, dir string, i int) string {
	t.Helper()
	m, err := manifest.Read(filepath.Join(dir, "engines", x.Cells[i].Manifest))
	if err != nil {
		t.Fatal(err)
	}
	return m.Parts.Graph
}

func equal(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// TestMatrixParallelSim runs the simulated matrix with two workers.
func TestMatrixParallelSim(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := matrixDir(t)
	x := buildMatrix(t, dir, "--gpus", "0,1")
	if len(built(x)) != 6 {
		t.Fatalf("two workers built %v", built(x))
	}
}

func TestMatrixBadInput(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := matrixDir(t)
	bad := filepath.Join(dir, "bad.yaml")
	cases := []struct {
		name string
		body string
		args []string
		want string
	}{
		{"missing file", "", []string{"matrix", "build", filepath.Join(dir, "none.yaml"), "--backend", "sim"}, "does not exist"},
		{"unknown field", testMatrix + "colour: blue\n", nil, `unknown field "colour"`},
		{"bad build flag", testMatrix + "build_flags: [--opt-level, \"9\"]\n", nil, "check build_flags"},
		{"missing model", strings.Replace(testMatrix, "models/convnet.onnx", "models/gone.onnx", 1), nil, "gone.onnx"},
		{"no tensorrt", testMatrix, []string{"matrix", "build", bad}, "no GPU here can build a cell: GPU 0: cannot use TensorRT: TensorRT library not found"},
		{"bad gpus", testMatrix, []string{"matrix", "build", bad, "--backend", "sim", "--gpus", "0,x"}, "invalid --gpus"},
		{"cell without index", testMatrix, []string{"matrix", "cell", bad, "--backend", "sim"}, "needs --index"},
		{"cell out of range", testMatrix, []string{"matrix", "cell", bad, "--backend", "sim", "--index", "6"}, "0 to 5"},
		{"cell of unknown target", testMatrix, []string{"matrix", "cell", bad, "--backend", "sim", "--target", "h100", "--index", "0"}, `no target "h100"`},
		{"k8s with a cache outside", testMatrix + "engine_cache: /tmp/x\n", []string{"matrix", "emit", "k8s", bad, "--image", "registry.example/trtbuild:cuda"}, "outside the matrix file's folder"},
		{"k8s without an image", testMatrix, []string{"matrix", "emit", "k8s", bad}, "--image is needed: the trtbuild image as the cluster pulls it; build it from Dockerfile.cuda and push it"},
		{"k8s with a cpu request not a quantity", testMatrix, []string{"matrix", "emit", "k8s", bad, "--image", "registry.example/trtbuild:cuda", "--cpu", "lots"}, `invalid --cpu "lots"`},
		{"a compute capability Triton never matches", strings.Replace(testMatrix, `"8.9"`, `"8.90"`, 1), nil, `compute_capability "8.90": write major.minor as CUDA and Triton name it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.body != "" {
				if err := os.WriteFile(bad, []byte(c.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := c.args
			if args == nil {
				args = []string{"matrix", "build", bad, "--backend", "sim"}
			}
			r := trtbuild(t, nil, args...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line containing %q", r.code, r.stderr, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "engines")); err == nil {
				t.Fatalf("something was built")
			}
		})
	}
}

// TestEmitK8sRunsCells decodes the emitted Jobs strictly, then runs each pod's command as the
// pod would (the completion index substituted, the volume at the matrix folder), with the
// simulated builder: pod N of a target builds exactly that target's cell N.
func TestEmitK8sRunsCells(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := matrixDir(t)
	writeMatrix(t, dir, testMatrix+`  - name: h100
    gpu: NVIDIA-H100-80GB-HBM3
    mig: 1g.10gb
`)
	r := trtbuild(t, nil, "matrix", "emit", "k8s", filepath.Join(dir, "matrix.yaml"), "--image", "registry.example/trtbuild:cuda", "--claim", "matrix")
	if r.code != 0 {
		t.Fatalf("emit k8s: %d %s", r.code, r.stderr)
	}
	docs := strings.Split(r.stdout, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a Job per target", len(docs))
	}
	for ti, doc := range docs {
		var job batchv1.Job
		if err := yaml.UnmarshalStrict([]byte(doc), &job); err != nil {
			t.Fatalf("strict decode: %v", err)
		}
		target := []string{"l4", "h100"}[ti]
		gpu := []string{"NVIDIA-L4", "NVIDIA-H100-80GB-HBM3"}[ti]
		pod := job.Spec.Template.Spec
		if pod.NodeSelector["nvidia.com/gpu.product"] != gpu || *job.Spec.Completions != 6 || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
			t.Fatalf("job %s: selector %v completions %d", job.Name, pod.NodeSelector, *job.Spec.Completions)
		}
		if _, ok := pod.Containers[0].Resources.Limits[corev1.ResourceName([]string{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"}[ti])]; !ok {
			t.Fatalf("job %s: limits %v", job.Name, pod.Containers[0].Resources.Limits)
		}
		if ti == 0 {
			for index := 0; index < 6; index += 5 {
				var args []string
				for _, a := range pod.Containers[0].Args {
					a = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(index))
					a = strings.Replace(a, "/matrix/", dir+"/", 1)
					args = append(args, a)
				}
				runPod(t, dir, target, index, append(args, "--backend", "sim", "--sim-speed", "1000"))
			}
		}
	}
}

// podArgs returns the args of each emitted Job's container, as a pod of completion index
// index in a volume mounted at dir runs them.
func podArgs(t *testing.T, stream, dir string, index int) (names []string, args [][]string) {
	t.Helper()
	for _, doc := range strings.Split(stream, "\n---\n") {
		var job batchv1.Job
		if err := yaml.UnmarshalStrict([]byte(doc), &job); err != nil {
			t.Fatalf("strict decode: %v", err)
		}
		var a []string
		for _, s := range job.Spec.Template.Spec.Containers[0].Args {
			s = strings.ReplaceAll(s, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(index))
			a = append(a, strings.Replace(s, "/matrix/", dir+"/", 1))
		}
		names, args = append(names, job.Name), append(args, a)
	}
	return names, args
}

// TestOldJobRefusesChangedMatrix: a pod of a Job emitted before the matrix file changed (a
// precision added, so that its index now names another cell) refuses to build, exit 2, one
// line saying to emit again, and builds nothing; the Jobs emitted again are named apart from
// the old ones, and their pods build.
func TestOldJobRefusesChangedMatrix(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	file := filepath.Join(dir, "matrix.yaml")
	emit := func() result {
		r := trtbuild(t, nil, "matrix", "emit", "k8s", file, "--image", "registry.example/trtbuild:cuda", "--claim", "matrix")
		if r.code != 0 {
			t.Fatalf("emit k8s: %d %s", r.code, r.stderr)
		}
		return r
	}
	oldNames, oldArgs := podArgs(t, emit().stdout, dir, 1)
	writeMatrix(t, dir, strings.Replace(testMatrix, "precisions: [fp32, fp16]", "precisions: [fp32, bf16, fp16]", 1))
	cmd := exec.Command(binary, append(oldArgs[0], "--backend", "sim", "--sim-speed", "1000")...)
	cmd.Dir = dir
	cmd.Env = testEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	wantRefused(t, result{code: code, stdout: stdout.String(), stderr: stderr.String()},
		"has changed since this script or Job was emitted from it", "emit again")
	assertNothingWritten(t, dir)

	newNames, newArgs := podArgs(t, emit().stdout, dir, 1)
	if newNames[0] == oldNames[0] || !strings.HasPrefix(newNames[0], "trtbuild-l4-") {
		t.Errorf("the Job of the changed matrix is named %s, the old one %s", newNames[0], oldNames[0])
	}
	runPod(t, dir, "l4", 1, append(newArgs[0], "--backend", "sim", "--sim-speed", "1000"))
}

// runPod runs one pod's or task's trtbuild command and checks it built the right cell.
func runPod(t *testing.T, dir, target string, index int, args []string) {
	t.Helper()
	runPodOf(t, dir, "matrix.yaml", target, index, args)
}

// runPodOf is runPod for the matrix file name in dir.
func runPodOf(t *testing.T, dir, name, target string, index int, args []string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = testEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s cell %d: %v", target, index, err)
	}
	if !strings.Contains(string(out), `"type":"result"`) || !strings.Contains(string(out), `"status":"built"`) {
		t.Fatalf("%s cell %d: the log is not the build's JSON lines:\n%s", target, index, out)
	}
	f, err := matrix.Load(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	cell, err := f.Find(target, index)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Read(manifest.Path(filepath.Join(dir, "engines", cell.Engine())))
	if err != nil {
		t.Fatalf("%s cell %d (%s): %v", target, index, cell.ID(), err)
	}
	want := cell.Precision
	if want == "fp32" {
		want = "as typed in the model"
	}
	if m.Precision != want || m.Parts.GPU != cell.Target.GPU || filepath.Base(m.Model.Path) != filepath.Base(cell.Model.Path) {
		t.Fatalf("%s cell %d: manifest %+v is not cell %s's", target, index, m, cell.ID())
	}
}

// BenchmarkMatrixCachedRun measures a second `matrix build` of 3 models × 2 precisions, when
// every cell is in the engine cache: the whole process (start, hashing the models, copying six
// engines, writing manifests and the index). It fails if any cell was built.
func BenchmarkMatrixCachedRun(b *testing.B) {
	dir := matrixDir(b)
	file := filepath.Join(dir, "matrix.yaml")
	run := func() {
		cmd := exec.Command(binary, "matrix", "build", file, "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + dir}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("matrix build: %v\n%s", err, out)
		}
	}
	run()
	for b.Loop() {
		run()
		data, err := os.ReadFile(filepath.Join(dir, "engines", matrix.IndexName))
		if err != nil {
			b.Fatal(err)
		}
		var x matrix.Index
		if err := json.Unmarshal(data, &x); err != nil || x.Cached != 6 {
			b.Fatalf("a cached run built cells: %+v %v", x, err)
		}
	}
}

// TestEmitTriton builds a two-target matrix and writes a Triton model of one model's engines.
func TestEmitTriton(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := matrixDir(t)
	writeMatrix(t, dir, strings.Replace(testMatrix, "precisions: [fp32, fp16]", "precisions: [fp16]", 1)+`  - name: h100
    gpu: NVIDIA-H100-80GB-HBM3
    compute_capability: "9.0"
`)
	file := filepath.Join(dir, "matrix.yaml")
	repo := filepath.Join(dir, "repo")
	r := trtbuild(t, nil, "matrix", "emit", "triton", file, "--model", "classifier", "--precision", "fp16", "--profile", "b8", "-o", repo)
	if r.code != 2 || !strings.Contains(r.stderr, "build the matrix first") {
		t.Fatalf("emit before building: %d %s", r.code, r.stderr)
	}
	if r := trtbuild(t, nil, "matrix", "build", file, "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet"); r.code != 0 {
		t.Fatalf("matrix build: %d %s", r.code, r.stderr)
	}
	r = trtbuild(t, nil, "matrix", "emit", "triton", file, "--model", "classifier", "--precision", "fp16", "--profile", "b8", "-o", repo)
	if r.code != 0 {
		t.Fatalf("emit triton: %d %s", r.code, r.stderr)
	}
	config, err := os.ReadFile(filepath.Join(repo, "classifier", "config.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(config), `{ key: "8.9" value: "l4.plan" },`) || !strings.Contains(string(config), `{ key: "9.0" value: "h100.plan" }`) {
		t.Errorf("config.pbtxt:\n%s", config)
	}
	for _, target := range []string{"l4", "h100"} {
		got, err := os.ReadFile(filepath.Join(repo, "classifier", "1", target+".plan"))
		want, _ := os.ReadFile(filepath.Join(dir, "engines", target, "classifier", "b8-fp16.engine"))
		if err != nil || len(got) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s.plan is not the cell's engine: %v", target, err)
		}
	}
}

// TestEmitTritonRefusesStaleEngines: after a weight of a model changed, its engines (built from
// the old weights, their manifests' keys not the cells' keys now) are refused, naming the
// cells, the change and the fix, and the repository stays as it was; --allow-stale ships them
// with a warning each. Rebuilt, they are emitted without a word. A changed build flag is
// caught the same way.
func TestEmitTritonRefusesStaleEngines(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	writeMatrix(t, dir, strings.Replace(testMatrix, "precisions: [fp32, fp16]", "precisions: [fp16]", 1)+`  - name: h100
    gpu: NVIDIA-H100-80GB-HBM3
    compute_capability: "9.0"
`)
	file := filepath.Join(dir, "matrix.yaml")
	repo := filepath.Join(dir, "repo")
	emit := func(extra ...string) result {
		return trtbuild(t, nil, append([]string{"matrix", "emit", "triton", file, "--model", "external-data", "--precision", "fp16", "-o", repo}, extra...)...)
	}
	build := func() {
		if r := trtbuild(t, nil, "matrix", "build", file, "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet"); r.code != 0 {
			t.Fatalf("matrix build: %d %s", r.code, r.stderr)
		}
	}
	build()
	if r := emit(); r.code != 0 || r.stderr != "" {
		t.Fatalf("emit triton of fresh engines: %d %q", r.code, r.stderr)
	}
	plan := filepath.Join(repo, "external-data", "1", "l4.plan")
	before, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	flipFirstByte(t, filepath.Join(dir, "models", "external_data.bin"))
	r := emit()
	wantRefused(t, r, "cell l4/external-data/fp16: its engine was built from other weights than the matrix gives now (key trtb",
		"cell h100/external-data/fp16: its engine was built from other weights", "rebuild the matrix", "or give --allow-stale")
	assertUnchanged(t, plan, string(before))

	r = emit("--allow-stale")
	if r.code != 0 || strings.Count(r.stderr, "trtbuild: warning: cell ") != 2 || !strings.Contains(r.stderr, "shipped as it is (--allow-stale)") {
		t.Fatalf("--allow-stale: exit %d, stderr %q", r.code, r.stderr)
	}
	build()
	if r := emit(); r.code != 0 || r.stderr != "" {
		t.Fatalf("emit triton of the rebuilt engines: %d %q", r.code, r.stderr)
	}

	writeMatrix(t, dir, strings.Replace(testMatrix, "precisions: [fp32, fp16]", "precisions: [fp16]", 1)+`  - name: h100
    gpu: NVIDIA-H100-80GB-HBM3
    compute_capability: "9.0"
build_flags: [--opt-level, "2"]
`)
	wantRefused(t, emit(), "its engine was built from other build settings than the matrix gives now")
}

// TestEmitTritonOneModelPerProfile: a second profile of the same model does not replace the
// first's Triton model: it is refused, naming --name, and with --name it is a model of its
// own; the first is left as it was.
func TestEmitTritonOneModelPerProfile(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	body := strings.Replace(testMatrix, "profiles: [b8]", "profiles: [b1, b8]", 1)
	body = strings.Replace(body, "profiles:\n  - name: b8", "profiles:\n  - name: b1\n    shapes: images:1x3x64x64\n  - name: b8", 1)
	writeMatrix(t, dir, strings.Replace(body, "precisions: [fp32, fp16]", "precisions: [fp16]", 1))
	file := filepath.Join(dir, "matrix.yaml")
	repo := filepath.Join(dir, "repo")
	if r := trtbuild(t, nil, "matrix", "build", file, "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet"); r.code != 0 {
		t.Fatalf("matrix build: %d %s", r.code, r.stderr)
	}
	emit := func(profile string, extra ...string) result {
		return trtbuild(t, nil, append([]string{"matrix", "emit", "triton", file, "--model", "classifier", "--precision", "fp16", "--profile", profile, "-o", repo}, extra...)...)
	}
	if r := emit("b8"); r.code != 0 {
		t.Fatalf("emit b8: %d %s", r.code, r.stderr)
	}
	config := filepath.Join(repo, "classifier", "config.pbtxt")
	first, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(repo, "classifier", "1", "l4.plan")
	firstPlan, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, emit("b1"), "holds the engines of classifier/b8/fp16, not classifier/b1/fp16", "--name classifier-b1-fp16")
	assertUnchanged(t, config, string(first))
	assertUnchanged(t, plan, string(firstPlan))
	if r := emit("b1", "--name", "classifier-b1"); r.code != 0 {
		t.Fatalf("emit b1 --name classifier-b1: %d %s", r.code, r.stderr)
	}
	second, err := os.ReadFile(filepath.Join(repo, "classifier-b1", "config.pbtxt"))
	if err != nil || !strings.Contains(string(second), `name: "classifier-b1"`) || !strings.Contains(string(second), "# engines of: classifier/b1/fp16") {
		t.Fatalf("the second model's config: %v\n%s", err, second)
	}
	b1, _ := os.ReadFile(filepath.Join(dir, "engines", "l4", "classifier", "b1-fp16.engine"))
	if got, _ := os.ReadFile(filepath.Join(repo, "classifier-b1", "1", "l4.plan")); !bytes.Equal(got, b1) {
		t.Errorf("classifier-b1 does not hold the b1 engine")
	}
	assertUnchanged(t, config, string(first))
	wantRefused(t, emit("b1", "--name", "../up"), `invalid Triton model name "../up"`)
}

// TestMatrixFollowsNoPlantedLinks: the files a matrix names itself (index.json, index.html,
// the Slurm scripts, a cell's engine) are never written through a link planted in their
// folder: the target stays as it was.
func TestMatrixFollowsNoPlantedLinks(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	secret := filepath.Join(t.TempDir(), "secret")
	for _, tc := range []struct {
		name string
		link func(dir string) string // where the link is planted
		args func(dir string) []string
	}{
		{"index.json", func(dir string) string { return filepath.Join(dir, "engines", "index.json") },
			func(dir string) []string {
				return []string{"matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet"}
			}},
		{"the default output folder", func(dir string) string { return filepath.Join(dir, "engines") },
			func(dir string) []string {
				return []string{"matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet"}
			}},
		{"a target folder", func(dir string) string { return filepath.Join(dir, "engines", "l4") },
			func(dir string) []string {
				return []string{"matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet"}
			}},
		{"the default cache folder", func(dir string) string { return filepath.Join(dir, "cache") },
			func(dir string) []string {
				return []string{"matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet"}
			}},
		{"sbatch", func(dir string) string { return filepath.Join(dir, "trtbuild-l4.sbatch") },
			func(dir string) []string {
				return []string{"matrix", "emit", "slurm", filepath.Join(dir, "matrix.yaml")}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
				t.Fatal(err)
			}
			dir := matrixDir(t)
			link := tc.link(dir)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secret, link); err != nil {
				t.Fatal(err)
			}
			r := trtbuild(t, nil, tc.args(dir)...)
			said := r.stderr
			if index, err := os.ReadFile(filepath.Join(dir, "engines", matrix.IndexName)); err == nil {
				said += string(index) // a cell's error is in the index
			}
			if r.code == 0 || !(strings.Contains(said, "symbolic link") || strings.Contains(said, "a link")) {
				t.Fatalf("exit %d with a planted %s link; want a refusal naming the link\n%s", r.code, tc.name, r.stderr)
			}
			assertUnchanged(t, secret, "root only")
			if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the planted link was followed or replaced: %v", err)
			}
		})
	}
}

// TestMatrixKeepsForeignIndexFiles: an index.html or index.json of the user's own where the
// matrix writes its index is refused before anything is built, and left as it was.
func TestMatrixKeepsForeignIndexFiles(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	for _, name := range []string{matrix.IndexName, matrix.PageName} {
		t.Run(name, func(t *testing.T) {
			dir := matrixDir(t)
			if err := os.MkdirAll(filepath.Join(dir, "engines"), 0o755); err != nil {
				t.Fatal(err)
			}
			mine := filepath.Join(dir, "engines", name)
			if err := os.WriteFile(mine, []byte("my own page"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := trtbuild(t, nil, "matrix", "build", filepath.Join(dir, "matrix.yaml"), "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet")
			if r.code != 2 || !strings.Contains(r.stderr, "not a file trtbuild wrote") {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			assertUnchanged(t, mine, "my own page")
			if _, err := os.Stat(filepath.Join(dir, "engines", "l4")); err == nil {
				t.Fatal("cells were built")
			}
		})
	}
}

// matrixCommands are the subcommands that read a matrix file, each with what it needs besides
// the file; all of them check the file the same way (loadMatrix).
func matrixCommands(dir string) []struct {
	name string
	args func(file string) []string
} {
	return []struct {
		name string
		args func(file string) []string
	}{
		{"list", func(file string) []string { return []string{"matrix", "list", file} }},
		{"build", func(file string) []string {
			return []string{"matrix", "build", file, "--backend", "sim", "--sim-speed", "1000"}
		}},
		{"cell", func(file string) []string {
			return []string{"matrix", "cell", file, "--index", "0", "--backend", "sim", "--sim-speed", "1000"}
		}},
		{"emit k8s", func(file string) []string {
			return []string{"matrix", "emit", "k8s", file, "--image", "registry.example/trtbuild:cuda"}
		}},
		{"emit slurm", func(file string) []string { return []string{"matrix", "emit", "slurm", file} }},
		{"emit triton", func(file string) []string {
			return []string{"matrix", "emit", "triton", file, "--model", "convnet", "--precision", "fp16", "-o", filepath.Join(dir, "repo")}
		}},
	}
}

// wantRefused checks that a run exited 2 with one line on stderr containing each of want.
func wantRefused(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q; want exit 2 and one line", r.code, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr %q lacks %q", r.stderr, w)
		}
	}
}

// assertNothingWritten checks that a refused run left the matrix folder as matrixDir made it.
func assertNothingWritten(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "models" && e.Name() != "matrix.yaml" {
			t.Fatalf("a refused run wrote %s", e.Name())
		}
	}
}

// TestMatrixReservedBuildFlags: build_flags may not set what trtbuild sets per cell in any
// spelling the build accepts: trtexec's camelCase, capitals, a value after "=", a shorthand.
// (--FP16 used to build the "fp32" cell in FP16, and --Trace wrote outside the output folder.)
func TestMatrixReservedBuildFlags(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	file := filepath.Join(dir, "matrix.yaml")
	outside := filepath.Join(t.TempDir(), "trace.jsonl")
	for _, tc := range []struct{ flags, want string }{
		{`[--fp16]`, "--fp16 is"},
		{`[--FP16]`, "--fp16 is"},
		{`[--Fp16]`, "--fp16 is"},
		{`[--fp16=true]`, "--fp16 is"},
		{`[--fp16=false]`, "--fp16 is"},
		{`[--opt-level, "4", --BF16]`, "--bf16 is"},
		{`[--Int8]`, "--int8 is"},
		{`[--FP8]`, "--fp8 is"},
		{`[--best]`, "--best is"},
		{`[--trace, ` + outside + `]`, "--trace is"},
		{`[--Trace, ` + outside + `]`, "--trace is"},
		{`[--trace=` + outside + `]`, "--trace is"},
		{`[--saveEngine, x.engine]`, "--save-engine (-o) is"},
		{`[--SaveEngine=x.engine]`, "--save-engine (-o) is"},
		{`[-o, x.engine]`, "--save-engine (-o) is"},
		{`[-o=x.engine]`, "--save-engine (-o) is"},
		{`[-ox.engine]`, "--save-engine (-o) is"},
		{`[-vo, x.engine]`, "--save-engine (-o) is"},
		{`[--onnx, models/convnet.onnx]`, "--onnx is"},
		{`[--minShapes, "images:1x3x64x64"]`, "--min-shapes is"},
		{`[--Shapes, "images:1x3x64x64"]`, "--shapes is"},
		{`[--profile, "0"]`, "--profile is"},
		{`[--Report, r.json]`, "--report is"},
		{`[--device, "1"]`, "--device is"},
		{`[--Backend, tensorrt]`, "--backend is"},
		{`[--progress, json]`, "--progress is"},
		{`[--engineCache, c]`, "--engine-cache is"},
		{`[--engine-cache-size, 1G]`, "--engine-cache-size is"},
		{`[--FP16, --Trace, x]`, "--fp16, --trace are"},
	} {
		t.Run(tc.flags, func(t *testing.T) {
			writeMatrix(t, dir, testMatrix+"build_flags: "+tc.flags+"\n")
			r := trtbuild(t, nil, "matrix", "build", file, "--backend", "sim", "--sim-speed", "1000")
			wantRefused(t, r, tc.want, "set per cell by trtbuild")
			assertNothingWritten(t, dir)
			if _, err := os.Stat(outside); err == nil {
				t.Fatal("the build wrote a trace outside the matrix folder")
			}
		})
	}
	// Flags trtbuild does not set pass in every spelling the build accepts.
	writeMatrix(t, dir, testMatrix+`build_flags: [--builderOptimizationLevel=4, --Workspace, 1G, -v, --noTF32, --timing-cache, t.cache, --sim-speed, "50"]`+"\n")
	if r := trtbuild(t, nil, "matrix", "list", file); r.code != 0 || !strings.Contains(r.stdout, "--fp16 --builderOptimizationLevel=4 --Workspace 1G -v --noTF32 --timing-cache t.cache --sim-speed 50") {
		t.Fatalf("matrix list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A value with a space is quoted as a shell reads it, so the line can be pasted.
	writeMatrix(t, dir, testMatrix+`build_flags: [--timing-cache, "my cache.bin"]`+"\n")
	if r := trtbuild(t, nil, "matrix", "list", file); r.code != 0 || !strings.Contains(r.stdout, "--fp16 --timing-cache 'my cache.bin'") {
		t.Fatalf("matrix list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestMatrixBuildFlagsCheckedByEveryCommand: every subcommand that reads the matrix file
// refuses the build_flags that matrix build refuses, with the same one line and exit 2, before
// it writes anything: emit does not hand a cluster the jobs of a matrix that cannot build.
func TestMatrixBuildFlagsCheckedByEveryCommand(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	file := filepath.Join(dir, "matrix.yaml")
	for _, tc := range []struct{ flags, want string }{
		{`[--FP16]`, "--fp16 is set per cell"},
		{`[--opt-level, "9"]`, `invalid argument "9" for "--opt-level" flag: use 0 to 5; check build_flags`},
		{`[--frobnicate]`, "unknown flag: --frobnicate; check build_flags"},
		{`[--workspace]`, "flag needs an argument: --workspace; check build_flags"},
		{`[--opt-level, "4", other.onnx]`, `"other.onnx" is not a flag`},
		{`["--"]`, `"--" would make the flags trtbuild adds per cell arguments`},
	} {
		for _, c := range matrixCommands(dir) {
			t.Run(c.name+" "+tc.flags, func(t *testing.T) {
				writeMatrix(t, dir, testMatrix+"build_flags: "+tc.flags+"\n")
				r := trtbuild(t, nil, c.args(file)...)
				wantRefused(t, r, "build_flags: ", tc.want)
				assertNothingWritten(t, dir)
			})
		}
	}
}

// TestEmitDashFileName: a matrix file named -x.yaml is passed to every emitted command so that
// it cannot be read as an option: the Slurm script, run as Slurm would with a trtbuild
// stand-in, passes ./-x.yaml, and that command builds the task's cell; a pod's command names
// the file by its absolute path in the volume.
func TestEmitDashFileName(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	dir := matrixDir(t)
	const name = "-x.yaml"
	if err := os.Rename(filepath.Join(dir, "matrix.yaml"), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name)
	bin := t.TempDir()
	record := filepath.Join(bin, "args")
	fake := filepath.Join(bin, "trtbuild")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > "+record+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := trtbuild(t, nil, "matrix", "emit", "slurm", file, "--trtbuild", fake); r.code != 0 {
		t.Fatalf("emit slurm: %d %s", r.code, r.stderr)
	}
	if r := runAsSlurm(t, filepath.Join(dir, "trtbuild-l4.sbatch"), 1); r.code != 0 {
		t.Fatalf("running the script: exit %d\n%s", r.code, r.stderr)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(args) < 3 || args[0] != "matrix" || args[1] != "cell" || args[2] != "./"+name {
		t.Fatalf("the script ran trtbuild %q; want the file passed as ./%s", args, name)
	}
	runPodOf(t, dir, name, "l4", 1, append(args, "--backend", "sim", "--sim-speed", "1000"))

	r := trtbuild(t, nil, "matrix", "emit", "k8s", file, "--image", "registry.example/trtbuild:cuda")
	if r.code != 0 {
		t.Fatalf("emit k8s: %d %s", r.code, r.stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(r.stdout), &job); err != nil {
		t.Fatal(err)
	}
	podArgs := job.Spec.Template.Spec.Containers[0].Args
	if len(podArgs) < 3 || podArgs[2] != matrix.MountPath+"/"+name {
		t.Fatalf("the pod runs trtbuild %q; want the file as %s/%s", podArgs, matrix.MountPath, name)
	}
	var local []string
	for _, a := range podArgs {
		a = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", "4")
		local = append(local, strings.Replace(a, matrix.MountPath+"/", dir+"/", 1))
	}
	runPodOf(t, dir, name, "l4", 4, append(local, "--backend", "sim", "--sim-speed", "1000"))
}

// flipFirstByte changes one bit of the file's first byte: a model's weights as a retrained
// model would change them.
func flipFirstByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
