package matrix

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// K8sOptions shape the emitted Jobs.
type K8sOptions struct {
	// Image is the trtbuild image (Dockerfile.cuda; its entrypoint is trtbuild).
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
}

// MountPath is where the shared volume is mounted in every pod.
const MountPath = "/matrix"

// IndexEnv is the variable Kubernetes sets to a pod's completion index in an Indexed Job.
const IndexEnv = "JOB_COMPLETION_INDEX"

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

// K8sJobs returns one Indexed Job per target.
func (f *File) K8sJobs(o K8sOptions) ([]*batchv1.Job, error) {
	if err := f.checkShared(); err != nil {
		return nil, err
	}
	if o.Image == "" || o.Claim == "" {
		return nil, fmt.Errorf("an image and a volume claim are needed")
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
		labels := map[string]string{
			"app.kubernetes.io/name":      "trtbuild-matrix",
			"app.kubernetes.io/component": "engine-build",
			"trtbuild.dev/target":         t.Name,
		}
		job := &batchv1.Job{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Name: "trtbuild-" + t.Name, Namespace: o.Namespace, Labels: labels},
			Spec: batchv1.JobSpec{
				CompletionMode:       &mode,
				Completions:          &n,
				Parallelism:          &par,
				BackoffLimitPerIndex: &backoff,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						NodeSelector:  map[string]string{ProductLabel: t.GPU},
						Containers: []corev1.Container{{
							Name:       "trtbuild",
							Image:      o.Image,
							WorkingDir: MountPath,
							Args: []string{"matrix", "cell", file, "--target", t.Name,
								"--index", "$(" + IndexEnv + ")", "--progress", "json"},
							Env: []corev1.EnvVar{{
								Name: IndexEnv,
								ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
									FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
								}},
							}},
							Resources: corev1.ResourceRequirements{
								Limits: corev1.ResourceList{t.ResourceName(): resource.MustParse("1")},
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
	for i, j := range jobs {
		y, err := yaml.Marshal(j)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "# target %s: %d cells\n", j.Labels["trtbuild.dev/target"], *j.Spec.Completions)
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

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
