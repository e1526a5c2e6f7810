package matrix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// failedPod is a pod of a Job as the Job controller sees it after it failed: the exit code
// of the trtbuild container and the pod's conditions.
type failedPod struct {
	exit       int32
	disruption bool
}

// policyAction is the action of the first rule of p that matches pod, as the Job controller
// picks it (pkg/controller/job/pod_failure_policy.go: rules in order, the first match wins;
// no match: Count, i.e. counted against backoffLimitPerIndex).
func policyAction(p *batchv1.PodFailurePolicy, pod failedPod) batchv1.PodFailurePolicyAction {
	for _, r := range p.Rules {
		if e := r.OnExitCodes; e != nil {
			if e.ContainerName != nil && *e.ContainerName != ContainerName {
				continue
			}
			in := false
			for _, v := range e.Values {
				in = in || v == pod.exit
			}
			if in == (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
				return r.Action
			}
		}
		for _, c := range r.OnPodConditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && pod.disruption {
				return r.Action
			}
		}
	}
	return batchv1.PodFailurePolicyActionCount
}

// TestPodFailurePolicy: a usage error (exit 2) fails the cell's index without a retry, an
// eviction or a termination is not counted against backoffLimitPerIndex, and a failed build
// (exit 1), a crash or a kill is retried as usual.
func TestPodFailurePolicy(t *testing.T) {
	f := load(t)
	jobs, err := f.K8sJobs(K8sOptions{Image: "registry.example/trtbuild:cuda", Claim: "engines"})
	if err != nil {
		t.Fatal(err)
	}
	p := jobs[0].Spec.PodFailurePolicy
	if p == nil {
		t.Fatal("no podFailurePolicy")
	}
	for _, c := range []struct {
		what string
		pod  failedPod
		want batchv1.PodFailurePolicyAction
	}{
		{"usage error: wrong or changed matrix, wrong GPU", failedPod{exit: 2}, batchv1.PodFailurePolicyActionFailIndex},
		{"terminated by SIGTERM: pod deleted, node shut down", failedPod{exit: 143}, batchv1.PodFailurePolicyActionIgnore},
		{"interrupted by SIGINT", failedPod{exit: 130}, batchv1.PodFailurePolicyActionIgnore},
		{"evicted or preempted while building", failedPod{exit: 143, disruption: true}, batchv1.PodFailurePolicyActionIgnore},
		{"evicted with a usage error's exit", failedPod{exit: 2, disruption: true}, batchv1.PodFailurePolicyActionIgnore},
		{"evicted after the grace period (SIGKILL)", failedPod{exit: 137, disruption: true}, batchv1.PodFailurePolicyActionIgnore},
		{"build failed", failedPod{exit: 1}, batchv1.PodFailurePolicyActionCount},
		{"killed: out of memory or past the grace period", failedPod{exit: 137}, batchv1.PodFailurePolicyActionCount},
		{"worker crashed (SIGSEGV)", failedPod{exit: 139}, batchv1.PodFailurePolicyActionCount},
	} {
		if got := policyAction(p, c.pod); got != c.want {
			t.Errorf("%s (exit %d, disruption %v): %s, want %s", c.what, c.pod.exit, c.pod.disruption, got, c.want)
		}
	}
	if jobs[0].Spec.BackoffLimitPerIndex == nil || *jobs[0].Spec.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex %v, want the 0 given", jobs[0].Spec.BackoffLimitPerIndex)
	}
}

// TestK8sOptionsRefused: no image (there is no default image any registry holds), no claim, and
// requests that are no Kubernetes quantity are refused, naming the flag and the fix.
func TestK8sOptionsRefused(t *testing.T) {
	ok := K8sOptions{Image: "registry.example/trtbuild:cuda", Claim: "engines"}
	for _, c := range []struct {
		what string
		edit func(o *K8sOptions)
		want string
	}{
		{"no image", func(o *K8sOptions) { o.Image = "" }, "--image is needed: the trtbuild image as the cluster pulls it; build it from Dockerfile.cuda and push it"},
		{"an image with a space", func(o *K8sOptions) { o.Image = "registry.example/trtbuild cuda" }, `invalid --image "registry.example/trtbuild cuda"`},
		{"no claim", func(o *K8sOptions) { o.Claim = "" }, "--claim is needed"},
		{"cpu not a quantity", func(o *K8sOptions) { o.CPU = "four" }, `invalid --cpu "four": give a positive Kubernetes quantity, such as 4 or 500m`},
		{"cpu zero", func(o *K8sOptions) { o.CPU = "0" }, `invalid --cpu "0"`},
		{"memory not a quantity", func(o *K8sOptions) { o.Memory = "16 GB" }, `invalid --memory "16 GB": give a positive Kubernetes quantity, such as 16Gi`},
		{"memory negative", func(o *K8sOptions) { o.Memory = "-1Gi" }, `invalid --memory "-1Gi"`},
		{"negative retries", func(o *K8sOptions) { o.BackoffLimitPerIndex = -1 }, "--retries take 0 or more"},
		{"retries past an int32", func(o *K8sOptions) { o.BackoffLimitPerIndex = 1 << 32 }, "--retries take 0 or more"},
		{"parallelism past an int32", func(o *K8sOptions) { o.Parallelism = 1 << 32 }, "--parallelism and --retries take 0 or more"},
		{"a namespace that is no DNS label", func(o *K8sOptions) { o.Namespace = "My Team" }, `invalid --namespace "My Team": give a Kubernetes namespace name`},
		{"a claim that is no DNS subdomain", func(o *K8sOptions) { o.Claim = "engines;x" }, `invalid --claim "engines;x": give the PersistentVolumeClaim's name`},
	} {
		o := ok
		c.edit(&o)
		if _, err := load(t).K8sJobs(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	o := ok
	o.CPU, o.Memory = "500m", "64Gi"
	jobs, err := load(t).K8sJobs(o)
	if err != nil {
		t.Fatal(err)
	}
	r := jobs[0].Spec.Template.Spec.Containers[0].Resources.Requests
	if cpu, mem := r[corev1.ResourceCPU], r[corev1.ResourceMemory]; cpu.String() != "500m" || mem.String() != "64Gi" {
		t.Errorf("requests %v, want cpu 500m, memory 64Gi", r)
	}
}

// TestJobNamesPerMatrixVersion: the Jobs of a changed matrix file are named apart from the old
// ones (kubectl apply creates them, never patches a finished Job), within the 63 characters of
// a label value that the Job controller copies the name into, and a pod of an old Job refuses
// the changed file.
func TestJobNamesPerMatrixVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "matrix.yaml")
	names := func(body string) []string {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := f.K8sJobs(K8sOptions{Image: "registry.example/trtbuild:cuda", Claim: "engines"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range jobs {
			out = append(out, j.Name)
		}
		return out
	}
	old := names(string(data))
	oldFile, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := names(strings.Replace(string(data), "precisions: [fp32, fp16]", "precisions: [fp32, bf16, fp16]", 1))
	for i := range old {
		if old[i] == changed[i] || !strings.HasPrefix(changed[i], "trtbuild-"+[]string{"h100", "a100-mig"}[i]+"-") {
			t.Errorf("job %d: %s before the change, %s after", i, old[i], changed[i])
		}
	}
	long := strings.Replace(string(data), "name: a100-mig", "name: "+strings.Repeat("x", 32), 1)
	if n := names(long)[1]; len(n) > 63 {
		t.Errorf("job name %s is %d characters, more than a label value holds", n, len(n))
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSHA256(f.SHA256); err != nil {
		t.Errorf("the file's own hash: %v", err)
	}
	err = f.CheckSHA256(oldFile.SHA256)
	if err == nil || !strings.Contains(err.Error(), "has changed since this script or Job was emitted from it") || !strings.Contains(err.Error(), "emit again") {
		t.Errorf("an old Job's hash: %v", err)
	}
}
