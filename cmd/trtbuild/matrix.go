package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/matrix"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// matrixOptions are the flags of matrix build and matrix cell: how every cell is built (its
// builder options get them, matrix.RunOptions), and how the run is shown.
type matrixOptions struct {
	backend, progress string
	simSpeed          float64
	engineCache       string
	engineCacheSize   string
	gpus              string
	target            string
	index             int
	sha256            string
}

func addMatrixRunFlags(cmd *cobra.Command, o *matrixOptions) {
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "", "builder: auto, tensorrt or sim (default: the matrix file's backend, which is auto unless it says)")
	f.StringVar(&o.progress, "progress", "auto", "progress output: auto, tty, plain, json or quiet")
	f.Float64Var(&o.simSpeed, "sim-speed", 0, "with --backend sim: run the simulation this many times faster (default: build_flags' --sim-speed, or 1)")
	f.StringVar(&o.engineCache, "engine-cache", "", "engine cache `DIR` (default: the matrix file's engine_cache)")
	f.StringVar(&o.engineCacheSize, "engine-cache-size", "20G", "remove the least recently used engines beyond this size")
}

// fromFile completes the options from the matrix file: its backend, unless --backend was
// given, and the --sim-speed of its build_flags, unless --sim-speed was given (SimSpeed 0
// keeps the build_flags' speed, which the build checks).
func (o *matrixOptions) fromFile(cmd *cobra.Command, f *matrix.File) error {
	if !cmd.Flags().Changed("backend") {
		o.backend = f.Backend
	}
	if cmd.Flags().Changed("sim-speed") && !(o.simSpeed > 0) {
		return exitcode.Usagef("invalid --sim-speed %g: use a number above 0, like 1 or 20", o.simSpeed)
	}
	return nil
}

func newMatrixCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Build a matrix of engines (models × precisions × profiles × GPU types), here or on a cluster",
		Long: `matrix reads a matrix file (YAML, see docs/matrix.md) that names models, precisions,
profiles and GPU targets, and builds every cell: here with 'matrix build', or on a cluster
through the Kubernetes Jobs or Slurm array scripts that 'matrix emit' writes, whose tasks each
run 'matrix cell'. Engines are kept in an engine cache by build key, so a cell whose inputs did
not change is copied, not built.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitcode.Usagef("matrix needs a subcommand: build, cell, list, index or emit").Hintf("run 'trtbuild matrix --help'")
		},
	}
	cmd.AddCommand(newMatrixBuildCmd(s), newMatrixCellCmd(s), newMatrixListCmd(s), newMatrixIndexCmd(s), newMatrixEmitCmd(s))
	return cmd
}

// loadMatrix reads the matrix file and checks it, build_flags included, for every subcommand
// that reads one, with errors that say what to fix (exit status 2). The file is opened as
// every input is (internal/regfile): a FIFO, a device or a folder is refused at once, and a
// file larger than matrix.MaxFileSize is not read.
func loadMatrix(path string) (*matrix.File, error) {
	f, _, err := loadMatrixBase(path)
	return f, err
}

// loadMatrixBase is loadMatrix that also returns the builder options of the matrix's
// build_flags, which every cell starts from.
func loadMatrixBase(path string) (*matrix.File, builder.Options, error) {
	return loadMatrixChecked(path, "")
}

// loadMatrixChecked is loadMatrixBase that first, when sha256 is not "", refuses a matrix
// file whose SHA-256 is not sha256 (matrix.File.CheckSHA256): a changed file is refused as
// changed, whatever else is wrong with it now.
func loadMatrixChecked(path, sha256 string) (*matrix.File, builder.Options, error) {
	f, err := matrix.Open(path)
	if err != nil {
		return nil, builder.Options{}, err
	}
	if sha256 != "" {
		if err := f.CheckSHA256(sha256); err != nil {
			return nil, builder.Options{}, err
		}
	}
	base, err := checkBuildFlags(f)
	if err != nil {
		return nil, builder.Options{}, err
	}
	return f, base, nil
}

// checkBuildFlags checks a matrix's build_flags as every cell's build reads them: parsed by
// the build's own flag set, so a flag is known by the name it resolves to, however it is
// spelt (--FP16, --Fp16, --fp16=false, --saveEngine, -o, -vo): none may be one that trtbuild
// sets per cell (matrix.ReservedFlags), and none may be an argument, which would be taken
// for a model, or "--", after which pflag reads no flag. It returns the
// options they set, which every cell's build starts from.
func checkBuildFlags(f *matrix.File) (builder.Options, error) {
	fl, bf := buildflags.NewFlagSet("build_flags")
	if err := fl.Parse(f.BuildFlags); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			err = errors.New("--help is not a build flag")
		}
		return builder.Options{}, exitcode.Usagef("matrix file %s: build_flags: %v", q(f.Path), err).Hintf("check build_flags")
	}
	if fl.ArgsLenAtDash() >= 0 {
		return builder.Options{}, exitcode.Usagef("matrix file %s: build_flags: \"--\" would make the flags trtbuild adds per cell arguments", q(f.Path)).Hintf("remove it from build_flags")
	}
	if args := fl.Args(); len(args) > 0 {
		return builder.Options{}, exitcode.Usagef("matrix file %s: build_flags: %q is not a flag (or is a value without its flag)", q(f.Path), args[0]).Hintf("give models under models:, and each flag's value after it")
	}
	var reserved []string
	fl.Visit(func(flag *pflag.Flag) {
		if matrix.Reserved(flag.Name) {
			name := "--" + flag.Name
			if flag.Shorthand != "" {
				name += " (-" + flag.Shorthand + ")"
			}
			reserved = append(reserved, name)
		}
	})
	if len(reserved) > 0 {
		verb := "is"
		if len(reserved) > 1 {
			verb = "are"
		}
		return builder.Options{}, exitcode.Usagef("matrix file %s: build_flags: %s %s set per cell by trtbuild (in any spelling)", q(f.Path), strings.Join(reserved, ", "), verb).Hintf("use precisions, profiles and targets, and the options of trtbuild matrix, instead")
	}
	base := bf.Opts
	base.Command = append([]string{"trtbuild"}, os.Args[1:]...)
	return base, nil
}

func oneFileArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return exitcode.Usagef("%s takes one matrix file, got %d arguments", what, len(args)).Hintf("run 'trtbuild %s --help'", what)
		}
		return nil
	}
}

func newMatrixListCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "list FILE",
		Short: "List the cells of a matrix with their numbers",
		Args:  oneFileArg("matrix list"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadMatrix(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "%-5s %-7s %-40s %s\n", "cell", "target#", "id", "flags")
			for _, c := range f.Cells() {
				fmt.Fprintf(s.Out, "%-5d %-7d %-40s %s\n", c.Index, c.TargetIndex, c.ID(), c.FlagsText(f))
			}
			return nil
		},
	}
}

func newMatrixIndexCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "index FILE",
		Short: "Write the index of a matrix run on a cluster from the cells' manifests",
		Long: `index reads what the cells of a matrix left in its output folder after a run elsewhere (a
Slurm array, Kubernetes Jobs), each engine's manifest, and writes index.json (cell → key →
engine → report) and index.html into the output folder, as 'matrix build' does here. A cell
without an engine is "missing" (see its task's log); then the exit status is 1.`,
		Example: `  trtbuild matrix index matrix.yaml`,
		Args:    oneFileArg("matrix index"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, base, err := loadMatrixBase(args[0])
			if err != nil {
				return err
			}
			if err := matrix.CheckIndexPaths(f.OutputDir()); err != nil {
				return exitcode.Wrap(exitcode.Usage, err)
			}
			if _, err := os.Stat(f.OutputDir()); err != nil {
				return exitcode.Usagef("the output folder %s: %v", q(f.OutputDir()), exitcode.PathCause(err)).Hintf("run the matrix first (matrix build, or the Jobs or scripts of matrix emit)")
			}
			if f.OutputDefaulted {
				// The default output folder is trtbuild's own, as the cells made it: no link followed.
				if err := outpath.MkdirOwn(f.Dir, f.Output); err != nil {
					return exitcode.Wrap(exitcode.Usage, err)
				}
			}
			x := matrix.Collect(f, base)
			if err := matrix.WriteIndex(f.OutputDir(), x); err != nil {
				return exitcode.Wrap(exitcode.Failed, err)
			}
			if err := matrix.WriteTable(s.Out, x); err != nil {
				return err
			}
			page := filepath.Join(f.OutputDir(), matrix.PageName)
			fmt.Fprintf(s.Out, "Matrix %s: %d cells, %d built, %d from the engine cache, %d missing. Index: %s\n",
				q(f.Path), len(x.Cells), x.Built, x.Cached, x.Missing, q(page))
			if x.Missing > 0 {
				return exitcode.Wrap(exitcode.Failed, fmt.Errorf("%d of %d cells have no engine; see %s and the tasks' logs", x.Missing, len(x.Cells), q(filepath.Join(f.OutputDir(), matrix.IndexName))))
			}
			return nil
		},
	}
}

func newMatrixCellCmd(s *streams) *cobra.Command {
	o := &matrixOptions{}
	cmd := &cobra.Command{
		Use:   "cell FILE --index N [--target T]",
		Short: "Build one cell of a matrix (what each Kubernetes pod or Slurm task runs)",
		Long: `cell builds the cell numbered N of the matrix file, or the Nth cell of target T with
--target (what JOB_COMPLETION_INDEX and SLURM_ARRAY_TASK_ID count), as 'trtbuild' would with
the cell's flags: the engine goes to the matrix's output folder with a manifest beside it, and
the engine cache is used (a hit copies the engine). With --progress json the output is the
cell's log. --matrix-sha256 (which emitted scripts pass) refuses a matrix file that changed
since they were emitted.`,
		Args: oneFileArg("matrix cell"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("index") {
				return exitcode.Usagef("matrix cell needs --index N (0 to the number of cells less one").Hintf("see trtbuild matrix list)")
			}
			if cmd.Flags().Changed(matrix.SHA256Flag) && o.sha256 == "" {
				return exitcode.Usagef("--%s needs the 64 hex digits that emit wrote", matrix.SHA256Flag)
			}
			f, base, err := loadMatrixChecked(args[0], o.sha256)
			if err != nil {
				return err
			}
			if err := o.fromFile(cmd, f); err != nil {
				return err
			}
			cell, err := f.Find(o.target, o.index)
			if err != nil {
				return exitcode.Wrap(exitcode.Usage, err)
			}
			if err := matrix.CheckTarget(o.backend, cell.Target, 0, base.TensorRTLib); err != nil {
				return err
			}
			_, err = matrix.RunCell(f, cell, o.run(s, base, nil), 0, nil, cell.Engine()+".report.json")
			return err
		},
	}
	addMatrixRunFlags(cmd, o)
	cmd.Flags().IntVar(&o.index, "index", 0, "the cell's number (within --target when given)")
	cmd.Flags().StringVar(&o.target, "target", "", "count --index within this target's cells")
	cmd.Flags().StringVar(&o.sha256, matrix.SHA256Flag, "", "build only if the matrix file's SHA-256 is this `HEX` (the file a script or Job was emitted from)")
	return cmd
}

func newMatrixBuildCmd(s *streams) *cobra.Command {
	o := &matrixOptions{}
	cmd := &cobra.Command{
		Use:   "build FILE",
		Short: "Build the cells of a matrix that this machine can build, skipping those in the engine cache",
		Long: `build runs every cell whose GPU type is on this machine (with --backend sim, every cell):
one build per GPU at a time, as TensorRT requires; --gpus 0,1 runs one worker per GPU. A cell
whose build key is in the engine cache is copied instead of built. It shows each cell as it
runs (with the phase tree of the running cell on a terminal, when one worker runs), and
writes index.json (cell → key → engine → report) and index.html into the output folder.`,
		Example: `  trtbuild matrix build matrix.yaml
  trtbuild matrix build matrix.yaml --backend sim --sim-speed 50
  trtbuild matrix build matrix.yaml --gpus 0,1`,
		Args: oneFileArg("matrix build"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return matrixBuildRun(cmd, s, o, args[0])
		},
	}
	addMatrixRunFlags(cmd, o)
	cmd.Flags().StringVar(&o.gpus, "gpus", "0", "CUDA devices to build on, one worker each, e.g. 0,1 (with --backend sim: that many workers)")
	return cmd
}

// lockedWriter serialises writes of several cells' output, each prefixed per line.
type lockedWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if _, err := fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i]); err != nil {
			return 0, err
		}
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func matrixBuildRun(cmd *cobra.Command, s *streams, o *matrixOptions, path string) error {
	f, base, err := loadMatrixBase(path)
	if err != nil {
		return err
	}
	if err := o.fromFile(cmd, f); err != nil {
		return err
	}
	devices, err := parseGPUs(o.gpus)
	if err != nil {
		return err
	}
	mode, err := progressMode(s, o.progress, true)
	if err != nil {
		return err
	}
	if mode == tui.ModeJSON && len(devices) > 1 {
		return exitcode.Usagef("--progress json with several --gpus would interleave the cells' logs").Hintf("use one GPU, or run 'trtbuild matrix cell' per cell")
	}
	if o.backend != "sim" {
		if err := builder.CheckBackend(o.backend); err != nil {
			return err
		}
	}
	var mu sync.Mutex // serialises the cells' output and the run's lines
	several := &mu
	if len(devices) == 1 {
		several = nil
	}
	bo := matrix.BuildOptions{RunOptions: o.run(s, base, several), Devices: devices, TensorRTLib: base.TensorRTLib, Signals: s.Signals}
	if mode != tui.ModeJSON && mode != tui.ModeQuiet {
		bo.Say = &lockedWriter{mu: &mu, w: s.Out}
	}
	return matrix.Build(f, bo)
}

// run are the matrix options of this command line. Each cell's build is shown as a build of
// the command line is (runBuild); with mu (several cells at once) as plain lines, each
// prefixed with its GPU.
func (o *matrixOptions) run(s *streams, base builder.Options, mu *sync.Mutex) matrix.RunOptions {
	return matrix.RunOptions{
		Base: base, Backend: o.backend, SimSpeed: o.simSpeed, EngineCache: o.engineCache, EngineCacheSize: o.engineCacheSize,
		Build: func(dev int, sigs <-chan os.Signal, b builder.Options) error {
			cs := *s
			if sigs != nil {
				cs.Signals = sigs
			}
			progress := o.progress
			if mu != nil {
				cs.Out = &lockedWriter{mu: mu, w: s.Out, prefix: fmt.Sprintf("[gpu %d] ", dev)}
				cs.Err = &lockedWriter{mu: mu, w: s.Err, prefix: fmt.Sprintf("[gpu %d] ", dev)}
				cs.OutTTY, cs.OutFile = false, nil
				if mode, err := progressMode(s, progress, false); err == nil && mode == tui.ModeTTY {
					progress = "plain"
				}
			}
			return runBuild(&cs, progress, func() (builder.Options, error) { return b, nil })
		},
	}
}

func parseGPUs(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return nil, exitcode.Usagef("invalid --gpus %q: give CUDA device numbers separated by commas, like 0,1", s)
		}
		if seen[n] {
			return nil, exitcode.Usagef("invalid --gpus %q: device %d given twice", s, n)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

func newMatrixEmitCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "emit",
		Short: "Write what runs a matrix on a cluster (k8s, slurm), or a Triton model of its engines (triton)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitcode.Usagef("matrix emit needs k8s, slurm or triton")
		},
	}
	cmd.AddCommand(newEmitK8sCmd(s), newEmitSlurmCmd(s), newEmitTritonCmd(s))
	return cmd
}

func newEmitK8sCmd(s *streams) *cobra.Command {
	var o matrix.K8sOptions
	var out string
	cmd := &cobra.Command{
		Use:   "k8s FILE",
		Short: "Write one Kubernetes Indexed Job per GPU type; pod N builds cell N of its type",
		Long: `k8s writes one Kubernetes Job per target (completionMode: Indexed, one completion per cell):
each pod asks for one GPU (nvidia.com/gpu: 1, or the target's MIG slice) and --cpu/--memory,
tolerates the nvidia.com/gpu taint, runs on nodes whose nvidia.com/gpu.product label is the
target's gpu, mounts the volume claim that holds the matrix folder (matrix file, models,
output, engine cache) at /matrix, and runs 'trtbuild matrix cell FILE --target T --index
$(JOB_COMPLETION_INDEX) --matrix-sha256 HEX --progress json', whose output is the pod's log. A
Job is named trtbuild-TARGET-HASH after the matrix file's hash; a pod of a Job emitted from
another version of the file refuses to build (exit 2). Evictions and terminations are
retried without counting against --retries; a usage error (exit 2) fails the cell at once.
Apply it with kubectl apply -f; see docs/matrix.md for rerunning and cleaning up.`,
		Example: `  trtbuild matrix emit k8s matrix.yaml --image registry.example.com/trtbuild:cuda --claim engines > jobs.yaml`,
		Args:    oneFileArg("matrix emit k8s"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadMatrix(args[0])
			if err != nil {
				return err
			}
			jobs, err := f.K8sJobs(o)
			if err != nil {
				return exitcode.Wrap(exitcode.Usage, err)
			}
			data, err := matrix.K8sYAML(jobs)
			if err != nil {
				return err
			}
			return f.WriteOut(s.Out, "-o", out, data)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Image, "image", "", "the trtbuild image, required: built from Dockerfile.cuda and pushed where the cluster pulls from (REGISTRY/trtbuild:cuda)")
	fl.StringVar(&o.Claim, "claim", "trtbuild-matrix", "the PersistentVolumeClaim holding the matrix folder, shared by all pods (ReadWriteMany)")
	fl.StringVar(&o.FileInVolume, "file-in-volume", "", "the matrix file's path inside the volume (default: its file name, at the volume's root)")
	fl.StringVar(&o.Namespace, "namespace", "", "the Jobs' namespace (default: kubectl's)")
	fl.IntVar(&o.Parallelism, "parallelism", 0, "at most this many pods of one Job at once (default: all cells)")
	fl.IntVar(&o.BackoffLimitPerIndex, "retries", 1, "retries of one failed cell (backoffLimitPerIndex; evictions and terminations are not counted, a usage error is not retried)")
	fl.StringVar(&o.CPU, "cpu", matrix.DefaultCPU, "each pod's CPU request (a Kubernetes quantity)")
	fl.StringVar(&o.Memory, "memory", matrix.DefaultMemory, "each pod's memory request (a Kubernetes quantity)")
	fl.StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func newEmitSlurmCmd(s *streams) *cobra.Command {
	var o matrix.SlurmOptions
	var out string
	cmd := &cobra.Command{
		Use:   "slurm FILE",
		Short: "Write one sbatch array script per GPU type; task N builds cell N of its type",
		Long: `slurm writes one sbatch script per target, trtbuild-TARGET.sbatch (into the matrix file's
folder, or -o DIR): a job array with one task per cell (--array=0-N), each on one GPU of the
target's type (--gres=gpu:TYPE:1, TYPE from the target's gres), running in the matrix folder
(--chdir, its absolute path, or --matrix-dir) 'TRTBUILD matrix cell FILE --matrix-sha256 HEX
--target T --index $SLURM_ARRAY_TASK_ID --progress json', with one JSON-lines log per job and
task in the log folder, which it makes. Submit them from any folder. The matrix folder must be
on storage every node shares, and TRTBUILD (--trtbuild, default this binary) at the same path
on every node. A task of a script emitted from another version of the matrix file builds
nothing (exit 2): emit again after changing it.`,
		Example: `  trtbuild matrix emit slurm matrix.yaml --partition gpu --time 02:00:00 --trtbuild /shared/bin/trtbuild
  sbatch trtbuild-h100.sbatch`,
		Args: oneFileArg("matrix emit slurm"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadMatrix(args[0])
			if err != nil {
				return err
			}
			if o.Trtbuild == "" {
				self, err := os.Executable()
				if err != nil {
					return exitcode.Usagef("cannot tell where this trtbuild is (%v)", err).Hintf("give --trtbuild PATH, its path on the nodes")
				}
				o.Trtbuild = self
			}
			written, err := f.WriteSlurmScripts(out, o)
			for _, p := range written {
				fmt.Fprintf(s.Out, "Wrote %s\n", q(p))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Each task runs %s, which every node must have at that path.\n", q(o.Trtbuild))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Trtbuild, "trtbuild", "", "the absolute `PATH` of trtbuild on the cluster's nodes (default: this binary's path, which the nodes must share)")
	fl.StringVar(&o.MatrixDir, "matrix-dir", "", "the matrix file's folder as the nodes see it, absolute (default: its absolute path here)")
	fl.StringVar(&o.Partition, "partition", "", "the Slurm partition")
	fl.StringVar(&o.Time, "time", "", "the time limit of one task, e.g. 02:00:00")
	fl.IntVar(&o.MaxParallel, "max-parallel", 0, "at most this many tasks of one array at once")
	fl.StringVar(&o.LogDir, "log-dir", matrix.DefaultLogDir, "the tasks' logs, relative to the matrix folder (made by emit)")
	fl.StringVarP(&out, "output", "o", "", "the folder for the scripts (default: the matrix file's)")
	return cmd
}

func newEmitTritonCmd(s *streams) *cobra.Command {
	var model, precision, profile, out, name string
	var targets []string
	var allowStale bool
	cmd := &cobra.Command{
		Use:   "triton FILE --model M --precision P [--profile X] [--name N] -o REPOSITORY",
		Short: "Write a Triton model of one model's engines, picked by compute capability",
		Long: `triton writes REPOSITORY/M/config.pbtxt (platform tensorrt_plan, cc_model_filenames mapping
each target's compute_capability to its engine) and copies the built engines of model M,
precision P and profile X into REPOSITORY/M/1/TARGET.plan, so one Triton model serves the
GPU types of the matrix. Build the matrix first. An engine whose manifest's key is not the key
its cell gives now (a weight or a build flag changed since it was built) is refused, unless
--allow-stale. One Triton model holds one profile and precision: --name N names another
(REPOSITORY/N), and a model folder holding other engines is not replaced. Inputs and outputs
are left to Triton's auto-complete, which reads them from the engine.`,
		Example: `  trtbuild matrix emit triton matrix.yaml --model classifier --precision fp16 --profile b8 -o model_repository
  trtbuild matrix emit triton matrix.yaml --model classifier --precision fp16 --profile b1 --name classifier-b1 -o model_repository`,
		Args: oneFileArg("matrix emit triton"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, base, err := loadMatrixBase(args[0])
			if err != nil {
				return err
			}
			if model == "" || precision == "" || out == "" {
				return exitcode.Usagef("matrix emit triton needs --model, --precision and -o REPOSITORY")
			}
			if name == "" {
				name = model
			}
			if err := matrix.CheckTritonName(name); err != nil {
				return exitcode.Hinted(exitcode.Wrap(exitcode.Usage, err), "give --name")
			}
			if len(targets) > 0 {
				var keep []matrix.Target
				for _, t := range f.Targets {
					if slices.Contains(targets, t.Name) {
						keep = append(keep, t)
					}
				}
				if len(keep) != len(targets) {
					return exitcode.Usagef("--targets %s names a target the matrix does not have", strings.Join(targets, ",")).Hintf("see trtbuild matrix list")
				}
				f.Targets = keep
			}
			engines, err := f.TritonEngines(model, precision, profile)
			if err != nil {
				return exitcode.Wrap(exitcode.Usage, err)
			}
			for _, e := range engines {
				if _, err := os.Stat(filepath.Join(f.OutputDir(), e.Cell.Engine())); err != nil {
					return exitcode.Usagef("cell %s has no engine (%s)", e.Cell.ID(), filepath.Join(f.OutputDir(), e.Cell.Engine())).Hintf("build the matrix first")
				}
			}
			stale, err := f.StaleEngines(engines, base)
			if err != nil {
				return err
			}
			if len(stale) > 0 && !allowStale {
				return exitcode.Usagef("%s", strings.Join(stale, "; ")).Hintf("rebuild the matrix (trtbuild matrix build, or run its Jobs or scripts again) and emit again, or give --allow-stale to ship the engines as they are")
			}
			for _, why := range stale {
				fmt.Fprintf(s.Err, "trtbuild: warning: %s; shipped as it is (--allow-stale)\n", escapeControls(why))
			}
			config, err := f.WriteTriton(out, name, engines)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Wrote %s with %d engines\n", q(config), len(engines))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&model, "model", "", "the model's name in the matrix")
	fl.StringVar(&precision, "precision", "", "the precision, as in the matrix (fp32, fp16 …)")
	fl.StringVar(&profile, "profile", "", "the profile, for a model built with profiles")
	fl.StringSliceVar(&targets, "targets", nil, "only these targets (when two share a compute capability)")
	fl.StringVarP(&out, "output", "o", "", "the Triton model repository")
	fl.StringVar(&name, "name", "", "the Triton model's name, its folder in the repository (default: --model)")
	fl.BoolVar(&allowStale, "allow-stale", false, "ship engines built from other inputs than the matrix gives now (a changed weight or flag), with a warning each")
	return cmd
}
