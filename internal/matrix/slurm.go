package matrix

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SlurmOptions shape the emitted scripts.
type SlurmOptions struct {
	// Trtbuild is the absolute path of the trtbuild binary on the cluster's nodes: a batch
	// task's PATH need not hold it.
	Trtbuild string
	// MatrixDir is the matrix file's folder as the nodes see it, absolute; default: the
	// folder's absolute path here. Every task runs there (#SBATCH --chdir), and every path of
	// the matrix is resolved against it.
	MatrixDir string
	Partition string
	Time      string // --time, e.g. "02:00:00"
	// MaxParallel bounds the tasks of one array that run at once (--array=0-N%M); 0: no bound.
	MaxParallel int
	// LogDir is where each task's JSON-lines log goes, relative to the matrix folder; default
	// DefaultLogDir. Slurm opens a task's log before the script runs, so the folder must exist
	// when the task starts: WriteSlurmScripts makes it.
	LogDir string
}

// DefaultLogDir is the tasks' log folder in the matrix folder when none is given.
const DefaultLogDir = "logs"

// ArrayEnv is the variable Slurm sets to a task's index in a job array.
const ArrayEnv = "SLURM_ARRAY_TASK_ID"

// SlurmScriptName is the file name of one target's script.
func SlurmScriptName(target string) string { return "trtbuild-" + target + ".sbatch" }

// slurmUnsafe are the characters an emitted script does not hold in a path or option: an
// #SBATCH line is split at white space, Slurm expands % in file names, and the shell would
// read the rest.
const slurmUnsafe = "\n\r\t '\"$`\\%;&|<>*?!#(){}[]~"

// SlurmScript returns the sbatch array script of one target. It runs as written from any
// folder: each task runs in the matrix folder o.MatrixDir (#SBATCH --chdir, which
// `sbatch --chdir` overrides for nodes that mount it elsewhere), writes its log in o.LogDir
// there (%A_%a: one per job and task), and runs o.Trtbuild, which passes the matrix file's
// SHA-256: a task of a script emitted from another version of the file builds nothing.
func (f *File) SlurmScript(target string, o SlurmOptions) (string, error) {
	if err := f.checkShared(); err != nil {
		return "", err
	}
	cells, ok := f.TargetCells(target)
	if !ok {
		return "", fmt.Errorf("no target %q in the matrix; targets: %s", target, f.targetNames())
	}
	var t Target
	for _, x := range f.Targets {
		if x.Name == target {
			t = x
		}
	}
	if t.MIG != "" && t.GresDefaulted {
		// Slurm has no one name for a slice: AutoDetect=nvml types it after the GPU's name up to
		// its first '-', in lower case with spaces as '_', and the slice's size (gpu_nvml.c:
		// "nvidia_a100_1g.5gb" for an NVIDIA A100-SXM4-40GB's 1g.5gb), and sites name their
		// types in slurm.conf as they like ("a100_1g.5gb"); --gres must give that type.
		return "", fmt.Errorf("target %s is a MIG %s slice: give it gres: the Slurm GPU type slurm.conf names the slice by "+
			"(sinfo -o '%%G' lists them; AutoDetect=nvml detects it as e.g. nvidia_a100_%s), so that each task asks for one slice, not a whole GPU", t.Name, t.MIG, t.MIG)
	}
	if f.SHA256 == "" {
		return "", fmt.Errorf("the matrix file was not read from a file (no SHA-256 to check its tasks against)")
	}
	if !filepath.IsAbs(o.Trtbuild) {
		return "", fmt.Errorf("--trtbuild %q: give the absolute path of trtbuild on the cluster's nodes (the same path on every node, e.g. on the shared storage); a batch task's PATH need not hold it", o.Trtbuild)
	}
	if o.MatrixDir == "" {
		abs, err := filepath.Abs(f.Dir)
		if err != nil {
			return "", fmt.Errorf("the matrix folder %q: %w", f.Dir, err)
		}
		o.MatrixDir = abs
	}
	if !filepath.IsAbs(o.MatrixDir) {
		return "", fmt.Errorf("--matrix-dir %q: give the matrix folder's absolute path on the cluster's nodes", o.MatrixDir)
	}
	o.MatrixDir = filepath.Clean(o.MatrixDir)
	if o.MaxParallel < 0 {
		return "", fmt.Errorf("--max-parallel %d: give 1 or more tasks at once (0: no bound)", o.MaxParallel)
	}
	if o.LogDir == "" {
		o.LogDir = DefaultLogDir
	}
	if !filepath.IsLocal(o.LogDir) {
		return "", fmt.Errorf("--log-dir %q: give a folder inside the matrix folder, as a relative path", o.LogDir)
	}
	for _, v := range []struct{ what, s, fix string }{
		{"the matrix folder", o.MatrixDir, "move the matrix to a folder whose path has none, or give --matrix-dir"},
		{"--trtbuild", o.Trtbuild, "install trtbuild at a path without them"},
		{"--log-dir", o.LogDir, "name another folder"},
		{"--partition", o.Partition, "give the partition's name"},
		{"--time", o.Time, "give a time like 02:00:00"},
		{"the matrix file's name", filepath.Base(f.Path), "rename it"},
	} {
		if strings.ContainsAny(v.s, slurmUnsafe) {
			return "", fmt.Errorf("%s %q has characters an sbatch script cannot hold as they are (white space, quotes, %%, $ and other shell characters); %s", v.what, v.s, v.fix)
		}
	}
	array := fmt.Sprintf("0-%d", len(cells)-1)
	if o.MaxParallel > 0 {
		array += fmt.Sprintf("%%%d", o.MaxParallel)
	}
	file := fileArg(filepath.Base(f.Path))
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=trtbuild-%s\n", t.Name)
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", array)
	fmt.Fprintf(&b, "#SBATCH --gres=gpu:%s:1\n", t.Gres)
	b.WriteString("#SBATCH --ntasks=1\n")
	if o.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", o.Partition)
	}
	if o.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", o.Time)
	}
	fmt.Fprintf(&b, "#SBATCH --chdir=%s\n", o.MatrixDir)
	fmt.Fprintf(&b, "#SBATCH --output=%s/%%x-%%A_%%a.jsonl\n", o.LogDir)
	fmt.Fprintf(&b, "#SBATCH --error=%s/%%x-%%A_%%a.err\n", o.LogDir)
	what := t.GPU
	if t.MIG != "" {
		what = "a MIG " + t.MIG + " slice of " + t.GPU + ", one slice per task"
	}
	fmt.Fprintf(&b, "# Written by trtbuild matrix emit slurm from %s (sha256 %s).\n", file, f.SHA256)
	fmt.Fprintf(&b, "# Target %s (%s): %d cells, one per array task. Submit it from any folder: sbatch THIS_FILE.\n", t.Name, what, len(cells))
	fmt.Fprintf(&b, "# Each task runs in the matrix folder above (--chdir; if the nodes mount it elsewhere, submit with\n")
	fmt.Fprintf(&b, "# sbatch --chdir=THAT_PATH), logs to %s/ there (JOBNAME-JOB_TASK.jsonl; emit made the folder, which\n", o.LogDir)
	fmt.Fprintf(&b, "# Slurm needs before a task starts), and runs %s, which every node must have.\n", o.Trtbuild)
	fmt.Fprintf(&b, "# A changed matrix file is refused (exit 2): emit again.\n")
	for _, c := range cells {
		fmt.Fprintf(&b, "#   task %d: %s\n", c.TargetIndex, c.ID())
	}
	b.WriteString("set -euo pipefail\n")
	fmt.Fprintf(&b, "trtbuild=%s\n", shellQuote(o.Trtbuild))
	fmt.Fprintf(&b, "if [ ! -f %s ]; then\n", shellQuote(file))
	fmt.Fprintf(&b, "\techo \"trtbuild-%s: no %s in $PWD on $(hostname): run the task in the matrix folder (sbatch --chdir=DIR, or emit again with --matrix-dir DIR)\" >&2\n", t.Name, file)
	b.WriteString("\texit 2\nfi\n")
	b.WriteString("if [ ! -x \"$trtbuild\" ]; then\n")
	fmt.Fprintf(&b, "\techo \"trtbuild-%s: $trtbuild is not an executable on $(hostname): install trtbuild at that path on every node, or emit again with --trtbuild PATH\" >&2\n", t.Name)
	b.WriteString("\texit 2\nfi\n")
	fmt.Fprintf(&b, "exec \"$trtbuild\" matrix cell %s --%s %s --target %s --index \"${%s:?not run as a Slurm array task}\" --progress json\n",
		shellQuote(file), SHA256Flag, f.SHA256, t.Name, ArrayEnv)
	return b.String(), nil
}
