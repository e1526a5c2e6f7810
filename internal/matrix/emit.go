package matrix

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// K8sOptions shape the emitted Jobs.
type K8sOptions struct {
	// Image is the trtbuild image (Dockerfile.cuda; its entrypoint is trtbuild), as the
	// cluster pulls it: there is no default, since no registry holds one.
	Image string
	// Claim is the PersistentVolumeClaim that holds the matrix file, the models, the output
	// folder and the engine cache, mounted at MountPath in every pod.
	Claim string
	// FileInVolume is the matrix file's path inside that volume; default its base name.
	FileInVolume string
	// Namespace, when set, is written into the Jobs.
	Namespace string
	// Parallelism bounds the pods of one Job that run at once; 0 means all its cells.
	Parallelism int
	// BackoffLimitPerIndex is how often one failed cell is retried.
	BackoffLimitPerIndex int
	// CPU and Memory are each pod's requests, Kubernetes quantities ("4", "16Gi"); "" for
	// DefaultCPU and DefaultMemory.
	CPU, Memory string
}

// DefaultCPU and DefaultMemory are a pod's requests when none are given: TensorRT parses,
// converts and serializes on the CPU, and holds the network, its weights and the engine in
// host memory while it builds.
const (
	DefaultCPU    = "4"
	DefaultMemory = "16Gi"
)

// MountPath is where the shared volume is mounted in every pod.
const MountPath = "/matrix"

// IndexEnv is the variable Kubernetes sets to a pod's completion index in an Indexed Job.
const IndexEnv = "JOB_COMPLETION_INDEX"

// ContainerName is the name of the container that builds the cell in every pod.
const ContainerName = "trtbuild"

// The labels of every emitted Job and its pods: AppLabel is AppName on all of them (kubectl
// delete jobs -l app.kubernetes.io/name=trtbuild-matrix removes them all), HashLabel the
// ShortHash of the matrix file they were emitted from, TargetLabel the target.
const (
	AppLabel    = "app.kubernetes.io/name"
	AppName     = "trtbuild-matrix"
	HashLabel   = "trtbuild.dev/matrix-hash"
	TargetLabel = "trtbuild.dev/target"
)

// ResourceName is the extended resource a cell's pod asks for: one whole GPU (nvidia.com/gpu),
// or one MIG slice of the target's profile (nvidia.com/mig-<profile>, the device plugin's
// "mixed" strategy).
func (t Target) ResourceName() corev1.ResourceName {
	if t.MIG != "" {
		return corev1.ResourceName("nvidia.com/mig-" + t.MIG)
	}
	return "nvidia.com/gpu"
}

// ProductLabel is the node label GPU Feature Discovery sets to the GPU's product name.
const ProductLabel = "nvidia.com/gpu.product"

// GPUTaint is the taint GPU nodes usually carry (nvidia.com/gpu=present:NoSchedule, as GKE,
// AKS and the GPU Operator's guides set it), which every pod tolerates.
const GPUTaint = "nvidia.com/gpu"

// checkShared fails when a path of the matrix lies outside the matrix file's folder: a pod or
// task sees only the shared folder.
func (f *File) checkShared() error {
	paths := []struct{ what, p string }{{"output", f.Output}, {"engine_cache", f.EngineCache}}
	for _, m := range f.Models {
		paths = append(paths, struct{ what, p string }{"model " + m.Name, m.Path})
	}
	for _, p := range paths {
		if !filepath.IsLocal(p.p) {
			return fmt.Errorf("%s %q is outside the matrix file's folder; for a cluster, keep the models, output and engine_cache in that folder (on the shared volume) and give relative paths", p.what, p.p)
		}
	}
	return nil
}

// JobName is the name of target's Job: trtbuild-TARGET-HASH, HASH the matrix file's
// ShortHash, so that the Jobs of a changed matrix never collide with those of the old one.
func (f *File) JobName(target string) string {
	return "trtbuild-" + target + "-" + f.ShortHash()
}

// podFailurePolicy says what a failed pod means. A disruption (the pod evicted, preempted or
// its node drained: the DisruptionTarget condition) and a termination by SIGTERM or SIGINT
// (exit 143 or 130: the pod deleted, its node shut down) are not the cell's fault: the pod is
// replaced without using up backoffLimitPerIndex. A usage error (exit 2: a wrong matrix, a
// changed matrix file, a cell's GPU not the target's) fails again however often it runs, so
// its index fails at once, not retried; the other cells go on. Any other failure is counted
// against backoffLimitPerIndex.
// terminationGrace is how long Kubernetes waits after SIGTERM before it kills a pod: long enough
// for a cancel to reach a step boundary through TensorRT's long silent phases.
const terminationGrace = 300

func podFailurePolicy() *batchv1.PodFailurePolicy {
	container := ContainerName
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue},
		}},
		{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: &container, Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{int32(exitcode.Usage)},
		}},
		{Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: &container, Operator: batchv1.PodFailurePolicyOnExitCodesOpIn,
			Values: []int32{int32(exitcode.Interrupted), int32(exitcode.Terminated)},
		}},
	}}
}

// quantity parses a request flag's value.
func quantity(flag, s, example string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() <= 0 {
		return q, fmt.Errorf("invalid --%s %q: give a positive Kubernetes quantity, such as %s", flag, s, example)
	}
	return q, nil
}

// K8sJobs returns one Indexed Job per target.
func (f *File) K8sJobs(o K8sOptions) ([]*batchv1.Job, error) {
	if err := f.checkShared(); err != nil {
		return nil, err
	}
	if o.Image == "" {
		return nil, fmt.Errorf("--image is needed: the trtbuild image as the cluster pulls it; build it from Dockerfile.cuda and push it to your registry (docker build -f Dockerfile.cuda -t REGISTRY/trtbuild:cuda . && docker push REGISTRY/trtbuild:cuda)")
	}
	if strings.ContainsFunc(o.Image, unicode.IsSpace) {
		return nil, fmt.Errorf("invalid --image %q: an image reference holds no spaces, e.g. registry.example.com/trtbuild:cuda", o.Image)
	}
	if o.Claim == "" {
		return nil, fmt.Errorf("--claim is needed: the PersistentVolumeClaim (ReadWriteMany) that holds the matrix folder")
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return nil, fmt.Errorf("invalid --namespace %q: give a Kubernetes namespace name (%s)", o.Namespace, errs[0])
		}
	}
	if errs := validation.IsDNS1123Subdomain(o.Claim); len(errs) > 0 {
		return nil, fmt.Errorf("invalid --claim %q: give the PersistentVolumeClaim's name (%s)", o.Claim, errs[0])
	}
	if o.Parallelism < 0 || o.BackoffLimitPerIndex < 0 || o.Parallelism > math.MaxInt32 || o.BackoffLimitPerIndex > math.MaxInt32 {
		return nil, fmt.Errorf("--parallelism and --retries take 0 or more, up to %d", math.MaxInt32)
	}
	if o.CPU == "" {
		o.CPU = DefaultCPU
	}
	if o.Memory == "" {
		o.Memory = DefaultMemory
	}
	cpu, err := quantity("cpu", o.CPU, "4 or 500m")
	if err != nil {
		return nil, err
	}
	mem, err := quantity("memory", o.Memory, "16Gi")
	if err != nil {
		return nil, err
	}
	inVolume := o.FileInVolume
	if inVolume == "" {
		inVolume = filepath.Base(f.Path)
	}
	if !filepath.IsLocal(inVolume) {
		return nil, fmt.Errorf("the matrix file's path in the volume, %q, must be relative to the volume", inVolume)
	}
	file := fileArg(path.Join(MountPath, filepath.ToSlash(inVolume)))
	var jobs []*batchv1.Job
	for _, t := range f.Targets {
		cells, _ := f.TargetCells(t.Name)
		n := int32(len(cells))
		par := n
		if o.Parallelism > 0 && int32(o.Parallelism) < n {
			par = int32(o.Parallelism)
		}
		mode := batchv1.IndexedCompletion
		backoff := int32(o.BackoffLimitPerIndex)
		grace := int64(terminationGrace)
		labels := map[string]string{
			AppLabel:                      AppName,
			"app.kubernetes.io/component": "engine-build",
			TargetLabel:                   t.Name,
			HashLabel:                     f.ShortHash(),
		}
		annotations := map[string]string{"trtbuild.dev/matrix-sha256": f.SHA256}
		job := &batchv1.Job{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Name: f.JobName(t.Name), Namespace: o.Namespace, Labels: labels, Annotations: annotations},
			Spec: batchv1.JobSpec{
				CompletionMode:       &mode,
				Completions:          &n,
				Parallelism:          &par,
				BackoffLimitPerIndex: &backoff,
				PodFailurePolicy:     podFailurePolicy(),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						// SIGTERM cancels the build at TensorRT's next step boundary, which can be
						// minutes away in a silent phase: the default 30 s would end most cancels
						// in SIGKILL (exit 137, a retry) instead of a clean exit 143.
						TerminationGracePeriodSeconds: &grace,
						NodeSelector:                  map[string]string{ProductLabel: t.GPU},
						Tolerations: []corev1.Toleration{{
							Key: GPUTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
						}},
						Containers: []corev1.Container{{
							Name:       ContainerName,
							Image:      o.Image,
							WorkingDir: MountPath,
							Args: []string{"matrix", "cell", file, "--target", t.Name,
								"--index", "$(" + IndexEnv + ")", "--" + SHA256Flag, f.SHA256, "--progress", "json"},
							Env: []corev1.EnvVar{{
								Name: IndexEnv,
								ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
									FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
								}},
							}},
							Resources: corev1.ResourceRequirements{
								Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
								Limits:   corev1.ResourceList{t.ResourceName(): resource.MustParse("1")},
							},
							VolumeMounts: []corev1.VolumeMount{{Name: "matrix", MountPath: MountPath}},
						}},
						Volumes: []corev1.Volume{{
							Name: "matrix",
							VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
								ClaimName: o.Claim,
							}},
						}},
					},
				},
			},
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// K8sYAML returns the Jobs as one YAML stream, documents separated by "---".
func K8sYAML(jobs []*batchv1.Job) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Written by trtbuild matrix emit k8s: one Indexed Job per GPU type; each pod builds the\n")
	b.WriteString("# cell numbered by its completion index and logs JSON lines (trtbuild --progress json).\n")
	b.WriteString("# Run: kubectl apply -f THIS_FILE. Rerun (models changed, matrix file not): kubectl replace\n")
	b.WriteString("# --force -f THIS_FILE. Remove: kubectl delete -f THIS_FILE. The names carry the matrix\n")
	b.WriteString("# file's hash: after changing the matrix file, emit again.\n")
	for i, j := range jobs {
		y, err := yaml.Marshal(j)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "# target %s: %d cells\n", j.Labels[TargetLabel], *j.Spec.Completions)
		b.Write(y)
	}
	return b.Bytes(), nil
}

// fileArg is the matrix file as the argument of an emitted command: a name that starts with a
// dash (-x.yaml) would be read as an option, so it is given as ./-x.yaml. The path of a pod's
// file is absolute (below MountPath) and stays as it is.
func fileArg(p string) string {
	if strings.HasPrefix(p, "-") {
		return "./" + p
	}
	return p
}

// shellQuote quotes s for a POSIX shell; a word that needs no quotes stays as it is.
func shellQuote(s string) string { return quoteWord(s, "-_./+:,@") }

// shellArg is shellQuote for an argument after the command's name, where "=" is plain text
// (--opt-level=4 needs no quotes there).
func shellArg(s string) string { return quoteWord(s, "-_./+:,@=") }

func quoteWord(s, plain string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(plain, r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
