package matrix

import (
	"bytes"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func load(t *testing.T) *File {
	t.Helper()
	f, err := Load(filepath.Join("testdata", "matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCells(t *testing.T) {
	f := load(t)
	cells := f.Cells()
	// per target: convnet 2 precisions + classifier 2 profiles x 2 + external 1 x 2 = 8
	if len(cells) != 16 {
		t.Fatalf("%d cells, want 16", len(cells))
	}
	var ids []string
	for i, c := range cells {
		if c.Index != i || c.TargetIndex != i%8 {
			t.Errorf("cell %d numbered %d/%d", i, c.Index, c.TargetIndex)
		}
		ids = append(ids, c.ID())
	}
	want := []string{"h100/convnet/fp32", "h100/convnet/fp16", "h100/classifier/b1/fp32", "h100/classifier/b1/fp16",
		"h100/classifier/b8/fp32", "h100/classifier/b8/fp16", "h100/external-data/plain/fp32", "h100/external-data/plain/fp16"}
	if !reflect.DeepEqual(ids[:8], want) {
		t.Errorf("ids %v\nwant %v", ids[:8], want)
	}
	c := cells[5]
	if got := strings.Join(c.Flags(f), " "); got != "--fp16 --min-shapes images:1x3x64x64 --opt-shapes images:8x3x64x64 --max-shapes images:16x3x64x64 --opt-level 3" {
		t.Errorf("flags %q", got)
	}
	if c.Engine() != filepath.Join("h100", "classifier", "b8-fp16.engine") || c.ModelPath(f) != filepath.Join("testdata", "models", "dynamic_batch.onnx") {
		t.Errorf("engine %s model %s", c.Engine(), c.ModelPath(f))
	}
	if got := strings.Join(cells[0].Flags(f), " "); got != "--opt-level 3" {
		t.Errorf("fp32 flags %q", got)
	}
	for _, tc := range []struct {
		target string
		index  int
		want   string
		err    string
	}{
		{"", 9, "a100-mig/convnet/fp16", ""},
		{"a100-mig", 1, "a100-mig/convnet/fp16", ""},
		{"a100-mig", 8, "", "0 to 7"},
		{"v100", 0, "", "no target"},
		{"", -1, "", "no cell"},
	} {
		c, err := f.Find(tc.target, tc.index)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Find(%q, %d): %v, want %q", tc.target, tc.index, err, tc.err)
			}
			continue
		}
		if err != nil || c.ID() != tc.want {
			t.Errorf("Find(%q, %d) = %s, %v; want %s", tc.target, tc.index, c.ID(), err, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good := "version: 1\nmodels: [{path: m.onnx}]\nprecisions: [fp16]\ntargets: [{name: t4, gpu: Tesla-T4}]\n"
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatalf("good file: %v", err)
	}
	cases := []struct{ name, body, want string }{
		{"unknown field", good + "frobnicate: 1\n", "unknown field"},
		{"typo in a model", strings.Replace(good, "path:", "pth:", 1), "unknown field"},
		{"no version", strings.Replace(good, "version: 1\n", "", 1), "version"},
		{"newer version", strings.Replace(good, "version: 1", "version: 2", 1), "version: 2"},
		{"no models", strings.Replace(good, "models: [{path: m.onnx}]", "models: []", 1), "at least one"},
		{"bad precision", strings.Replace(good, "[fp16]", "[fp17]", 1), "fp17"},
		{"twice a precision", strings.Replace(good, "[fp16]", "[fp16, fp16]", 1), "twice"},
		{"bad target name", strings.Replace(good, "name: t4", "name: T4!", 1), "T4!"},
		{"bad gpu label", strings.Replace(good, "gpu: Tesla-T4", "gpu: Tesla T4", 1), "nvidia.com/gpu.product"},
		{"bad mig", strings.Replace(good, "gpu: Tesla-T4", "gpu: Tesla-T4, mig: big", 1), "MIG profile"},
		{"unknown profile", strings.Replace(good, "{path: m.onnx}", "{path: m.onnx, profiles: [b1]}", 1), `profile "b1"`},
		{"two models one name", strings.Replace(good, "[{path: m.onnx}]", "[{path: m.onnx}, {path: x/M.onnx}]", 1),
			`models[0] and models[1] have the same name "m" (models[0]'s derived from the file name of m.onnx, models[1]'s derived from the file name of x/M.onnx); give one of them another name:`},
		{"a given name and a derived one", strings.Replace(good, "[{path: m.onnx}]", "[{path: a.onnx, name: m}, {path: x/m.onnx}]", 1),
			`models[0] and models[1] have the same name "m" (models[0]'s given as name:, models[1]'s derived from the file name of x/m.onnx)`},
		{"a derived name that is none", strings.Replace(good, "m.onnx", "nets/_m.onnx", 1),
			`models[0]: name "-m", derived from the file name of nets/_m.onnx, is not a valid name: use lowercase letters, digits and dashes (up to 32, no dash first or last); give the model a name:`},
		{"a given name that is none", strings.Replace(good, "{path: m.onnx}", "{path: m.onnx, name: M}", 1),
			`models[0]: name "M": use lowercase letters`},
		{"unknown profile of a derived name", strings.Replace(good, "{path: m.onnx}", "{path: m.onnx, profiles: [b1]}", 1),
			`models[0] ("m", derived from the file name of m.onnx): profile "b1" is not in profiles`},
		{"unknown profile of a given name", strings.Replace(good, "{path: m.onnx}", "{path: m.onnx, name: net, profiles: [b1]}", 1),
			`models[0] ("net"): profile "b1" is not in profiles`},
		{"an unquoted compute capability keeps its text", strings.Replace(good, "gpu: Tesla-T4", "gpu: Tesla-T4, compute_capability: 7.50", 1),
			`compute_capability "7.50": write major.minor`},
		{"an unquoted integer compute capability", strings.Replace(good, "gpu: Tesla-T4", "gpu: Tesla-T4, compute_capability: 7", 1),
			`compute_capability "7": write major.minor as CUDA and Triton name it, one digit after the point and no leading zero (Triton looks engines up by that text), e.g. "9.0"`},
		{"not yaml", "\t:::", "not a valid matrix file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// strictJobs decodes a YAML stream strictly into Jobs: an unknown or misspelt field fails.
func strictJobs(t *testing.T, stream []byte) []batchv1.Job {
	t.Helper()
	var jobs []batchv1.Job
	for _, doc := range bytes.Split(stream, []byte("\n---\n")) {
		var j batchv1.Job
		if err := yaml.UnmarshalStrict(doc, &j); err != nil {
			t.Fatalf("strict decode: %v\n%s", err, doc)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

func TestK8s(t *testing.T) {
	f := load(t)
	jobs, err := f.K8sJobs(K8sOptions{Image: "registry.example/trtbuild:cuda", Claim: "engines", Parallelism: 3, BackoffLimitPerIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	out, err := K8sYAML(jobs)
	if err != nil {
		t.Fatal(err)
	}
	decoded := strictJobs(t, out)
	if len(decoded) != 2 {
		t.Fatalf("%d jobs, want one per target", len(decoded))
	}
	for i, j := range decoded {
		target := f.Targets[i]
		cells, _ := f.TargetCells(target.Name)
		if j.APIVersion != "batch/v1" || j.Kind != "Job" || j.Name != "trtbuild-"+target.Name+"-"+f.SHA256[:10] {
			t.Errorf("job %d: %s %s %s", i, j.APIVersion, j.Kind, j.Name)
		}
		s := j.Spec
		if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != int32(len(cells)) || *s.Parallelism != 3 {
			t.Errorf("job %s: mode %v completions %d parallelism %d", j.Name, s.CompletionMode, *s.Completions, *s.Parallelism)
		}
		pod := s.Template.Spec
		if pod.RestartPolicy != corev1.RestartPolicyNever || pod.NodeSelector[ProductLabel] != target.GPU || len(pod.NodeSelector) != 1 {
			t.Errorf("job %s: restart %s selector %v", j.Name, pod.RestartPolicy, pod.NodeSelector)
		}
		c := pod.Containers[0]
		wantRes := corev1.ResourceName("nvidia.com/gpu")
		if target.MIG != "" {
			wantRes = corev1.ResourceName("nvidia.com/mig-" + target.MIG)
		}
		if q, ok := c.Resources.Limits[wantRes]; !ok || q.Value() != 1 || len(c.Resources.Limits) != 1 {
			t.Errorf("job %s: limits %v, want %s: 1", j.Name, c.Resources.Limits, wantRes)
		}
		if cpu, mem := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Requests[corev1.ResourceMemory]; cpu.String() != "4" || mem.String() != "16Gi" || len(c.Resources.Requests) != 2 {
			t.Errorf("job %s: requests %v, want the defaults cpu 4, memory 16Gi", j.Name, c.Resources.Requests)
		}
		wantTol := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 120 {
			t.Errorf("job %s: terminationGracePeriodSeconds %v: a cancel needs minutes to reach a step boundary", j.Name, g)
		}
		if !reflect.DeepEqual(pod.Tolerations, wantTol) {
			t.Errorf("job %s: tolerations %+v, want %+v", j.Name, pod.Tolerations, wantTol)
		}
		if j.Labels[HashLabel] != f.ShortHash() || pod.Containers[0].Name != ContainerName {
			t.Errorf("job %s: labels %v", j.Name, j.Labels)
		}
		wantArgs := []string{"matrix", "cell", "/matrix/matrix.yaml", "--target", target.Name, "--index", "$(JOB_COMPLETION_INDEX)", "--matrix-sha256", f.SHA256, "--progress", "json"}
		if !reflect.DeepEqual(c.Args, wantArgs) || c.Image != "registry.example/trtbuild:cuda" || c.WorkingDir != MountPath {
			t.Errorf("job %s: args %q image %s", j.Name, c.Args, c.Image)
		}
		if len(c.Env) != 1 || c.Env[0].Name != IndexEnv || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			t.Errorf("job %s: env %+v", j.Name, c.Env)
		}
		if pod.Volumes[0].PersistentVolumeClaim.ClaimName != "engines" || c.VolumeMounts[0].MountPath != MountPath {
			t.Errorf("job %s: volume %+v mounts %+v", j.Name, pod.Volumes, c.VolumeMounts)
		}
	}
}

func TestSharedPathsRequired(t *testing.T) {
	f := load(t)
	f.EngineCache = "/var/cache/engines"
	if _, err := f.K8sJobs(K8sOptions{Image: "i", Claim: "c"}); err == nil || !strings.Contains(err.Error(), "engine_cache") {
		t.Errorf("K8sJobs with an absolute cache: %v", err)
	}
	f = load(t)
	f.Models[0].Path = "../elsewhere/m.onnx"
	if _, err := f.SlurmScript("h100", SlurmOptions{}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("SlurmScript with a model outside: %v", err)
	}
}

// TestFileArg: a matrix file whose name starts with a dash is passed to the emitted commands
// so that it cannot be read as an option, in the Slurm script and in the Jobs.
// TestTargetMismatch: which CUDA devices build a target's cells. A MIG target takes only a
// slice of its profile of its GPU; a target without mig takes only the whole GPU.
func TestTargetMismatch(t *testing.T) {
	whole := Target{Name: "a100", GPU: "NVIDIA-A100-SXM4-40GB"}
	slice := Target{Name: "a100-1g", GPU: "NVIDIA-A100-SXM4-40GB", MIG: "1g.5gb"}
	h100 := Target{Name: "h100", GPU: "NVIDIA-H100-80GB-HBM3"}
	cases := []struct {
		target Target
		device string
		want   string // "" matches; else a part of the reason
	}{
		{whole, "NVIDIA A100-SXM4-40GB", ""},
		{slice, "NVIDIA A100-SXM4-40GB MIG 1g.5gb", ""},
		{slice, "NVIDIA A100-SXM4-40GB MIG 1G.5GB", ""},
		{h100, "NVIDIA H100 80GB HBM3", ""},
		{whole, "NVIDIA A100-SXM4-40GB MIG 1g.5gb", "a MIG 1g.5gb slice of NVIDIA-A100-SXM4-40GB, but target a100 is the whole GPU, and an engine is tuned for the SMs and memory it is built on; run the cell on a GPU without MIG, or give a target mig: 1g.5gb for this slice"},
		{slice, "NVIDIA A100-SXM4-40GB", "the whole NVIDIA-A100-SXM4-40GB, but target a100-1g is a MIG 1g.5gb slice of NVIDIA-A100-SXM4-40GB"},
		{slice, "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "a MIG 3g.20gb slice of NVIDIA-A100-SXM4-40GB, but target a100-1g is a MIG 1g.5gb slice of NVIDIA-A100-SXM4-40GB; run the cell on a 1g.5gb slice"},
		{slice, "NVIDIA A100-SXM4-40GB MIG 1g.5gb+me", "a MIG 1g.5gb+me slice"},
		{slice, "NVIDIA A100-SXM4-80GB MIG 1g.5gb", "a MIG 1g.5gb slice of NVIDIA-A100-SXM4-80GB, but target a100-1g is a MIG 1g.5gb slice of NVIDIA-A100-SXM4-40GB; run the cell on its GPU type"},
		{h100, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "target h100 is the whole GPU"},
		{h100, "NVIDIA A100-SXM4-40GB", "NVIDIA-A100-SXM4-40GB, but target h100 is NVIDIA-H100-80GB-HBM3; run the cell on its GPU type"},
	}
	for _, c := range cases {
		got := c.target.Mismatch(DeviceOf(c.device))
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("target %s on %q: %q, want %q", c.target.Name, c.device, got, c.want)
		}
	}
}

func TestFileArg(t *testing.T) {
	for _, tc := range []struct{ path, inVolume, slurm, pod string }{ // slurm: as the script quotes it
		{"matrix.yaml", "", "matrix.yaml", "/matrix/matrix.yaml"},
		{"-x.yaml", "", "./-x.yaml", "/matrix/-x.yaml"},
		{filepath.Join("some", "-x.yaml"), "", "./-x.yaml", "/matrix/-x.yaml"},
		{"--index=3.yaml", "", "'./--index=3.yaml'", "/matrix/--index=3.yaml"},
		{"m.yaml", "-sub/m.yaml", "m.yaml", "/matrix/-sub/m.yaml"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			f := load(t)
			f.Path = tc.path
			s, err := f.SlurmScript("h100", SlurmOptions{Trtbuild: "/opt/trtbuild/bin/trtbuild"})
			if err != nil {
				t.Fatal(err)
			}
			if want := `exec "$trtbuild" matrix cell ` + tc.slurm + " --matrix-sha256 "; !strings.Contains(s, want) {
				t.Errorf("the script lacks %q:\n%s", want, s)
			}
			jobs, err := f.K8sJobs(K8sOptions{Image: "i", Claim: "c", FileInVolume: tc.inVolume})
			if err != nil {
				t.Fatal(err)
			}
			if got := jobs[0].Spec.Template.Spec.Containers[0].Args[2]; got != tc.pod {
				t.Errorf("the pod's file argument is %q, want %q", got, tc.pod)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"trtbuild": "trtbuild", "/opt/x/trtbuild": "/opt/x/trtbuild", "a b": "'a b'", "--opt=4": "'--opt=4'", "x*": "'x*'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"--opt=4": "--opt=4", "a=b c": "'a=b c'", "input ids:1x3": "'input ids:1x3'"} {
		if got := shellArg(in); got != want {
			t.Errorf("shellArg(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestComputeCapabilityText: an unquoted compute_capability is kept as written (9.0, not the
// number 9), in block and flow style and through an alias; null is no compute capability.
func TestComputeCapabilityText(t *testing.T) {
	head := "version: 1\nmodels: [{path: m.onnx}]\nprecisions: [fp16]\n"
	for _, tc := range []struct {
		name, targets string
		want          []string
	}{
		{"flow, unquoted", "targets: [{name: h100, gpu: H100, compute_capability: 9.0}, {name: a100, gpu: A100, compute_capability: \"8.0\"}]\n", []string{"9.0", "8.0"}},
		{"block, unquoted", "targets:\n  - name: b200\n    gpu: B200\n    compute_capability: 10.0\n  - name: t4\n    gpu: T4\n", []string{"10.0", ""}},
		{"an alias", "targets: [{name: x, gpu: X, compute_capability: &cc 12.0}, {name: y, gpu: Y, compute_capability: *cc}]\n", []string{"12.0", "12.0"}},
		{"null", "targets: [{name: x, gpu: X, compute_capability: null}]\n", []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := head + tc.targets
			f, err := Parse([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tg := range f.Targets {
				got = append(got, tg.ComputeCapability)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("compute capabilities %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFlagsText: matrix list writes a cell's flags as a shell reads them.
func TestFlagsText(t *testing.T) {
	body := "version: 1\nmodels: [{path: m.onnx, profiles: [b8]}]\nprecisions: [fp16+int8]\n" +
		"profiles: [{name: b8, shapes: \"input ids:8x128,mask:8x128\"}]\ntargets: [{name: t4, gpu: Tesla-T4}]\n" +
		"build_flags: [--opt-level, \"4\", --timing-cache, \"my cache.bin\"]\n"
	f, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `--fp16 --int8 --shapes 'input ids:8x128,mask:8x128' --opt-level 4 --timing-cache 'my cache.bin'`
	if got := f.Cells()[0].FlagsText(f); got != want {
		t.Errorf("FlagsText = %s, want %s", got, want)
	}
}
