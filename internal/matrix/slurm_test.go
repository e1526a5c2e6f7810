package matrix

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/goldenfile"
)

// clusterOptions are the options of a script as a site would emit it.
var clusterOptions = SlurmOptions{Trtbuild: "/shared/bin/trtbuild", MatrixDir: "/shared/matrix", Partition: "gpu", Time: "01:00:00", MaxParallel: 2}

// directives returns a script's #SBATCH options and its exec line.
func directives(s string) (map[string]string, string) {
	d := map[string]string{}
	var command string
	for _, line := range strings.Split(s, "\n") {
		if opt, ok := strings.CutPrefix(line, "#SBATCH --"); ok {
			k, v, _ := strings.Cut(opt, "=")
			d[k] = v
		}
		if strings.HasPrefix(line, "exec ") {
			command = line
		}
	}
	return d, command
}

// TestSlurmScript: the script of a MIG target, whole (a golden file: go test -update rewrites
// it), and the directives that make it run as emitted: the matrix folder as an absolute
// --chdir, logs per job and task, one slice per task, and the matrix file's SHA-256 passed to
// the task.
func TestSlurmScript(t *testing.T) {
	f := load(t)
	s, err := f.SlurmScript("a100-mig", clusterOptions)
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("testdata", "a100-mig.sbatch"), []byte(s))
	got, command := directives(s)
	want := map[string]string{
		"job-name": "trtbuild-a100-mig", "array": "0-7%2", "gres": "gpu:a100_1g.5gb:1", "ntasks": "1",
		"partition": "gpu", "time": "01:00:00", "chdir": "/shared/matrix",
		"output": "logs/%x-%A_%a.jsonl", "error": "logs/%x-%A_%a.err",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("directives %v\nwant %v", got, want)
	}
	if want := `exec "$trtbuild" matrix cell matrix.yaml --matrix-sha256 ` + f.SHA256 +
		` --target a100-mig --index "${SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}" --progress json`; command != want {
		t.Errorf("command %q\nwant    %q", command, want)
	}
	if len(f.SHA256) != 64 {
		t.Errorf("SHA256 %q", f.SHA256)
	}
	if !strings.Contains(s, "\ntrtbuild=/shared/bin/trtbuild\n") || !strings.Contains(s, "#   task 7: a100-mig/external-data/plain/fp16\n") ||
		!strings.Contains(s, "Target a100-mig (a MIG 1g.5gb slice of NVIDIA-A100-SXM4-40GB, one slice per task): 8 cells") {
		t.Errorf("script:\n%s", s)
	}
}

// TestSlurmScriptDefaults: without --matrix-dir the tasks run in the matrix folder's absolute
// path here, whatever folder emit ran in and the script is submitted from.
func TestSlurmScriptDefaults(t *testing.T) {
	f := load(t) // testdata/matrix.yaml, relative
	s, err := f.SlurmScript("h100", SlurmOptions{Trtbuild: "/opt/trtbuild"})
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := directives(s)
	if d["chdir"] != abs || d["output"] != "logs/%x-%A_%a.jsonl" || d["partition"] != "" {
		t.Errorf("directives %v; want --chdir=%s", d, abs)
	}
}

// TestSlurmScriptRefuses: what a script cannot hold, or what would not run on the nodes, is
// refused in one line that names it and the fix.
func TestSlurmScriptRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target string
		edit   func(*File, *SlurmOptions)
		want   string
	}{
		{"trtbuild from PATH", "h100", func(f *File, o *SlurmOptions) { o.Trtbuild = "trtbuild" },
			`--trtbuild "trtbuild": give the absolute path of trtbuild on the cluster's nodes`},
		{"no trtbuild", "h100", func(f *File, o *SlurmOptions) { o.Trtbuild = "" }, `--trtbuild "": give the absolute path`},
		{"relative matrix folder", "h100", func(f *File, o *SlurmOptions) { o.MatrixDir = "shared/matrix" },
			`--matrix-dir "shared/matrix": give the matrix folder's absolute path on the cluster's nodes`},
		{"matrix folder with a space", "h100", func(f *File, o *SlurmOptions) { o.MatrixDir = "/shared/my matrix" },
			`the matrix folder "/shared/my matrix" has characters an sbatch script cannot hold`},
		{"matrix folder with %", "h100", func(f *File, o *SlurmOptions) { o.MatrixDir = "/shared/%u" }, `"/shared/%u" has characters`},
		{"log folder outside", "h100", func(f *File, o *SlurmOptions) { o.LogDir = "../logs" }, `--log-dir "../logs": give a folder inside the matrix folder`},
		{"absolute log folder", "h100", func(f *File, o *SlurmOptions) { o.LogDir = "/var/log/x" }, `--log-dir "/var/log/x": give a folder inside`},
		{"partition with a command", "h100", func(f *File, o *SlurmOptions) { o.Partition = "gpu; rm -rf /" }, `--partition "gpu; rm -rf /" has characters`},
		{"trtbuild with arguments", "h100", func(f *File, o *SlurmOptions) { o.Trtbuild = "/bin/trtbuild --backend sim" }, `--trtbuild "/bin/trtbuild --backend sim" has characters`},
		{"negative max-parallel", "h100", func(f *File, o *SlurmOptions) { o.MaxParallel = -1 }, `--max-parallel -1: give 1 or more tasks at once (0: no bound)`},
		{"model outside", "h100", func(f *File, o *SlurmOptions) { f.Models[0].Path = "../elsewhere/m.onnx" }, `is outside the matrix file's folder`},
		{"unknown target", "v100", func(f *File, o *SlurmOptions) {}, `no target "v100" in the matrix; targets: h100, a100-mig`},
		// A MIG target without gres: no guessed type, which might name a whole GPU.
		{"MIG without gres", "a100-mig", func(f *File, o *SlurmOptions) { f.Targets[1].Gres, f.Targets[1].GresDefaulted = "a100-mig", true },
			"target a100-mig is a MIG 1g.5gb slice: give it gres: the Slurm GPU type slurm.conf names the slice by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := load(t)
			o := clusterOptions
			tc.edit(f, &o)
			_, err := f.SlurmScript(tc.target, o)
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant one line with %q", err, tc.want)
			}
		})
	}
}

// TestWriteSlurmScriptsMakesLogFolder: Slurm opens a task's log before the script runs, so
// emit makes the log folder (the defect: every task JobLaunchFailure 0:53, logging nothing).
func TestWriteSlurmScriptsMakesLogFolder(t *testing.T) {
	for _, logDir := range []string{"", "logs", "out/slurm-logs"} {
		t.Run("log-dir="+logDir, func(t *testing.T) {
			dir := t.TempDir()
			data, err := os.ReadFile(filepath.Join("testdata", "matrix.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "matrix.yaml"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Load(filepath.Join(dir, "matrix.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			scripts := t.TempDir()
			written, err := f.WriteSlurmScripts(scripts, SlurmOptions{Trtbuild: "/opt/trtbuild", LogDir: logDir})
			if err != nil || len(written) != 2 {
				t.Fatalf("wrote %v: %v", written, err)
			}
			want := logDir
			if want == "" {
				want = DefaultLogDir
			}
			if st, err := os.Stat(filepath.Join(dir, want)); err != nil || !st.IsDir() {
				t.Errorf("the log folder %s was not made: %v", want, err)
			}
			s, err := os.ReadFile(filepath.Join(scripts, "trtbuild-h100.sbatch"))
			if err != nil {
				t.Fatal(err)
			}
			if d, _ := directives(string(s)); d["output"] != want+"/%x-%A_%a.jsonl" || d["chdir"] != dir {
				t.Errorf("directives %v", d)
			}
		})
	}
}

// TestCheckSHA256: a task runs only against the matrix file its script was emitted from.
func TestCheckSHA256(t *testing.T) {
	f := load(t)
	other := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name, want, err string
	}{
		{"the same file", f.SHA256, ""},
		{"a changed file", other, "has changed since this script or Job was emitted from it (sha256 " + f.SHA256[:12] + ", emitted from 000000000000), so its task numbers may name other cells: nothing was built; emit again"},
		{"upper case", strings.ToUpper(f.SHA256), "give the 64 lowercase hex digits"},
		{"short", f.SHA256[:12], "give the 64 lowercase hex digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := f.CheckSHA256(tc.want)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || exitcode.Of(err) != exitcode.Usage):
				t.Errorf("got %v (exit %d)\nwant exit 2 with %q", err, exitcode.Of(err), tc.err)
			}
		})
	}
}

// TestBackendField: the matrix file names the builder of its cells; auto by default.
func TestBackendField(t *testing.T) {
	const body = "version: 1\nmodels: [{path: m.onnx}]\nprecisions: [fp32]\ntargets: [{name: l4, gpu: NVIDIA-L4}]\n"
	for _, tc := range []struct{ line, want, err string }{
		{"", "auto", ""},
		{"backend: auto\n", "auto", ""},
		{"backend: tensorrt\n", "tensorrt", ""},
		{"backend: sim\n", "sim", ""},
		{"backend: gpu\n", "", `backend "gpu": use auto, tensorrt or sim`},
		{"backend: SIM\n", "", `backend "SIM": use auto, tensorrt or sim`},
	} {
		t.Run(tc.line, func(t *testing.T) {
			f, err := Parse([]byte(body + tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || f.Backend != tc.want {
				t.Errorf("backend %q, %v; want %q", f.Backend, err, tc.want)
			}
		})
	}
}
