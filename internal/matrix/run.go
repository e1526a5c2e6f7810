package matrix

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// RunOptions say how a matrix's cells are built: on which builder, with which engine cache,
// and how one cell's build is shown.
type RunOptions struct {
	// Base are the builder options every cell starts from: the matrix's build_flags, read by
	// the build's own flag set. A cell sets its own fields (model, engine, precision, profile,
	// device, backend, engine cache, report) on a copy.
	Base builder.Options
	// Backend is auto, tensorrt or sim; SimSpeed, when not 0, the simulated builder's speed.
	Backend  string
	SimSpeed float64
	// EngineCache is the engine cache folder ("": the matrix file's engine_cache), and
	// EngineCacheSize its bound.
	EngineCache, EngineCacheSize string
	// Build runs one cell's build with its options on CUDA device dev, shown as the front
	// end shows builds; signals are the cell's share of the run's signals.
	Build func(dev int, signals <-chan os.Signal, o builder.Options) error
}

// CellOptions are the builder options of one cell: Base with the cell's model, engine,
// precision, profile and target, the run's backend and engine cache, device, and report (a
// file name in the output folder; "" for none). The cell's engine and report are trtbuild's own
// files (no link followed).
func CellOptions(f *File, cell Cell, o RunOptions, device int, report string) (builder.Options, error) {
	b := o.Base
	out := f.OutputDir()
	b.Model = cell.ModelPath(f)
	b.Engine = filepath.Join(out, cell.Engine())
	b.Backend = o.Backend
	b.Device = device
	if o.SimSpeed != 0 {
		b.Sim.Speed = o.SimSpeed
	}
	b.EngineCache.Dir = o.EngineCache
	if b.EngineCache.Dir == "" {
		b.EngineCache.Dir = f.CacheDir()
	}
	b.EngineCache.Size = o.EngineCacheSize
	if report != "" {
		b.Report = filepath.Join(out, report)
	}
	if cell.Precision != "fp32" {
		for _, p := range strings.Split(cell.Precision, "+") {
			switch p {
			case "fp16":
				b.FP16 = true
			case "bf16":
				b.BF16 = true
			case "int8":
				b.INT8 = true
			case "fp8":
				b.FP8 = true
			}
		}
	}
	b.Profiles = nil
	if p := cell.Profile; p != nil {
		b.Profiles = []builder.Profile{{Shapes: p.Shapes, Min: p.Min, Opt: p.Opt, Max: p.Max}}
	}
	if _, err := os.Stat(b.Model); err != nil {
		return b, exitcode.Usagef("matrix %s, model %s: %v", pathtext.Q(f.Path), pathtext.Q(cell.Model.Path), exitcode.PathCause(err)).Hintf("fix its path (relative to the matrix file)")
	}
	b.OwnOutputs = true
	b.KeyTarget = &buildkey.Target{GPU: cell.Target.GPU, ComputeCapability: cell.Target.ComputeCapability, MIG: cell.Target.MIG}
	return b, nil
}

// CheckTarget fails when TensorRT would build a cell on a GPU of another type than its
// target's, or on a MIG slice of another profile (Target.Mismatch): the engine would be wrong
// for the target. It asks the probe (internal/probe), which loads TensorRT in a short-lived
// child, as a build's worker does.
func CheckTarget(backend string, t Target, device int, libDir string) error {
	if backend == "sim" {
		return nil
	}
	got, err := probeDevice(device, libDir)
	if err != nil {
		return err
	}
	if why := t.Mismatch(got); why != "" {
		return exitcode.Usagef("GPU %d is %s", device, why)
	}
	return nil
}

// Device is a CUDA device as a matrix target names it: its GPU type (the GPULabel of the
// device name without its MIG part) and, for a MIG slice, the slice's profile.
type Device struct {
	GPU, MIG string
}

// DeviceOf reads a CUDA device name ("NVIDIA A100-SXM4-40GB MIG 1g.5gb").
func DeviceOf(name string) Device {
	gpu, mig := buildkey.SplitMIG(name)
	return Device{GPU: GPULabel(gpu), MIG: mig}
}

// String names d as messages do: the GPU type, or "a MIG 1g.5gb slice of" it.
func (d Device) String() string {
	if d.MIG == "" {
		return d.GPU
	}
	return "a MIG " + d.MIG + " slice of " + d.GPU
}

// Mismatch says why a cell of t cannot be built on d, after "GPU N is ", or "" when it can.
// A target with a mig is built only on a slice of that profile of its GPU. A target without
// one means the whole GPU, and a slice does not do: TensorRT times tactics on the device it
// builds on, so an engine built on a slice is tuned for the slice's SMs, L2 and memory
// bandwidth (and keys apart from the whole GPU's), not for the whole GPU that the target names.
func (t Target) Mismatch(d Device) string {
	want := Device{GPU: t.GPU, MIG: t.MIG}
	switch {
	case d == want:
		return ""
	case d.GPU != t.GPU:
		return fmt.Sprintf("%s, but target %s is %s; run the cell on its GPU type (the Jobs and scripts of 'matrix emit' select it)", d, t.Name, want)
	case t.MIG == "":
		return fmt.Sprintf("%s, but target %s is the whole GPU, and an engine is tuned for the SMs and memory it is built on; "+
			"run the cell on a GPU without MIG, or give a target mig: %s for this slice", d, t.Name, d.MIG)
	case d.MIG == "":
		return fmt.Sprintf("the whole %s, but target %s is %s, and an engine is tuned for the SMs and memory it is built on; "+
			"run the cell on such a slice (the Jobs and scripts of 'matrix emit' request one)", d.GPU, t.Name, want)
	}
	return fmt.Sprintf("%s, but target %s is %s; run the cell on a %s slice (the Jobs and scripts of 'matrix emit' request one)", d, t.Name, want, t.MIG)
}

// probeDevice is CUDA device d as the probe finds it.
func probeDevice(device int, libDir string) (Device, error) {
	r, err := builder.DescribeTarget(device, libDir, false)
	switch {
	case err != nil:
		return Device{}, exitcode.Wrap(exitcode.Failed, err)
	case r.LoadError != "":
		return Device{}, exitcode.Wrap(exitcode.Failed, fmt.Errorf("cannot use TensorRT: %s", r.LoadError))
	case r.GPUError != "":
		return Device{}, exitcode.Wrap(exitcode.Failed, fmt.Errorf("asking the driver about GPU %d: %s", device, r.GPUError))
	}
	return DeviceOf(r.DeviceName), nil
}

// makeOutputDir makes the matrix's output folder: one the file names follows links, as every
// path a user names; the default ("engines" beside the file) is trtbuild's own and follows none.
func makeOutputDir(f *File) error {
	var err error
	if f.OutputDefaulted {
		err = outpath.MkdirOwn(f.Dir, f.Output)
	} else {
		err = os.MkdirAll(f.OutputDir(), 0o755)
	}
	if err != nil {
		return exitcode.Usagef("cannot create the output folder %s: %v", pathtext.Q(f.OutputDir()), exitcode.PathCause(err))
	}
	return nil
}

// makeCellDirs makes the folders a cell writes into, trtbuild's own below the output folder
// (TARGET/MODEL), and the default engine cache folder, none of them through a link.
func makeCellDirs(f *File, cell Cell, o RunOptions) error {
	if err := makeOutputDir(f); err != nil {
		return err
	}
	if err := outpath.MkdirOwn(f.OutputDir(), filepath.Dir(cell.Engine())); err != nil {
		return exitcode.Usagef("cannot create the output folder of cell %s: %v", cell.ID(), exitcode.PathCause(err))
	}
	if o.EngineCache == "" && f.CacheDefaulted {
		if err := outpath.MkdirOwn(f.Dir, f.EngineCache); err != nil {
			return exitcode.Usagef("cannot use the engine cache %s: %v", pathtext.Q(f.CacheDir()), exitcode.PathCause(err))
		}
	}
	return nil
}

// RunCell builds one cell through the build (o.Build) on device dev, and returns its index
// entry; report is the report's file name in the output folder ("" for none).
func RunCell(f *File, cell Cell, o RunOptions, dev int, signals <-chan os.Signal, report string) (IndexCell, error) {
	return runCell(f, cell, o, dev, signals, report, nil)
}

func runCell(f *File, cell Cell, o RunOptions, dev int, signals <-chan os.Signal, report string, hashes *buildkey.Memo) (IndexCell, error) {
	entry := NewIndexCell(cell)
	out := f.OutputDir()
	engine := filepath.Join(out, cell.Engine())
	if err := makeCellDirs(f, cell, o); err != nil {
		entry.Status, entry.Error = StatusFailed, exitcode.OneLine(err)
		return entry, err
	}
	b, err := CellOptions(f, cell, o, dev, report)
	if err != nil {
		entry.Status, entry.Error = StatusFailed, exitcode.OneLine(err)
		return entry, err
	}
	if hashes != nil {
		b.ModelHashes = hashes.Hash
	}
	start := time.Now()
	err = o.Build(dev, signals, b)
	entry.Seconds = time.Since(start).Seconds()
	rel := func(p string) string {
		if r, err := filepath.Rel(out, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	if err != nil {
		entry.Status, entry.Error = StatusFailed, exitcode.OneLine(err)
		return entry, err
	}
	entry.Status = StatusBuilt
	entry.Engine = rel(engine)
	if m, merr := manifest.Read(manifest.Path(engine)); merr == nil {
		entry.Key, entry.Bytes = m.Key, m.Engine.Bytes
		entry.Manifest = rel(manifest.Path(engine))
		if m.EngineCache != nil && m.EngineCache.Hit {
			entry.Status = StatusCached
		}
	}
	if report != "" {
		if _, serr := os.Stat(filepath.Join(out, report)); serr == nil {
			entry.Report = filepath.ToSlash(report)
		}
	}
	return entry, nil
}

// BuildOptions are how Build runs a whole matrix here.
type BuildOptions struct {
	RunOptions
	// Devices are the CUDA devices to build on, one worker each (with the simulated builder:
	// that many workers).
	Devices []int
	// TensorRTLib is where the target check loads TensorRT from ("": where a build looks).
	TensorRTLib string
	// Say receives the run's lines (each cell as it starts and ends, the table, the summary);
	// nil: none.
	Say io.Writer
	// Signals reach every cell being built (each cancels) and start no new cell; nil: none.
	Signals <-chan os.Signal
}

// Build builds every cell of f that this machine can build (every cell with the simulated
// builder), one build per device at a time, skipping those whose GPU type is not here, and
// writes index.json and index.html into the output folder. A cell cancelled by a signal stops
// the run; its error is returned. Cells that failed make the error of exit status 1.
func Build(f *File, o BuildOptions) error {
	cells := f.Cells()
	// Which GPU type each device is: the probe runs once per device (a child that loads
	// TensorRT), not once per cell. A signal meanwhile ends the run before anything is built.
	gpu := map[int]Device{}
	var probeErrs []string
	if o.Backend != "sim" {
		for _, d := range o.Devices {
			dev, err := probeDevice(d, o.TensorRTLib)
			select {
			case sig := <-o.Signals:
				return exitcode.SignalError(sig, "while the GPUs were probed; nothing was built")
			default:
			}
			if err != nil {
				probeErrs = append(probeErrs, fmt.Sprintf("GPU %d: %s", d, exitcode.OneLine(err)))
				continue
			}
			gpu[d] = dev
		}
		if len(gpu) == 0 {
			// No device here can build anything (no TensorRT found, say): nothing to skip to.
			return exitcode.Usagef("no GPU here can build a cell: %s", strings.Join(probeErrs, "; ")).Hintf("run the matrix where TensorRT and the GPUs are, or preview it with --backend sim")
		}
	}
	deviceFor := make(map[int][]int) // cell index → devices that can build it
	for _, c := range cells {
		for _, d := range o.Devices {
			if dev, ok := gpu[d]; o.Backend == "sim" || ok && c.Target.Mismatch(dev) == "" {
				deviceFor[c.Index] = append(deviceFor[c.Index], d)
			}
		}
	}
	noGPU := func(c Cell) string {
		msg := "no GPU of type " + c.Target.GPU + " here"
		if c.Target.MIG != "" {
			msg = "no MIG " + c.Target.MIG + " slice of " + c.Target.GPU + " here"
		}
		if len(probeErrs) > 0 {
			msg += " (" + strings.Join(probeErrs, "; ") + ")"
		}
		return msg
	}
	start := time.Now()
	index := &Index{Matrix: filepath.Base(f.Path), Cells: make([]IndexCell, len(cells)),
		CacheDir: f.CacheDir(), OutputDir: f.OutputDir()}
	if o.EngineCache != "" {
		index.CacheDir = o.EngineCache
	}
	var todo []Cell
	for _, c := range cells {
		index.Cells[c.Index] = NewIndexCell(c)
		if len(deviceFor[c.Index]) == 0 {
			index.Cells[c.Index].Status = StatusSkipped
			index.Cells[c.Index].Error = noGPU(c)
			continue
		}
		todo = append(todo, c)
	}
	if err := CheckIndexPaths(f.OutputDir()); err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	for _, c := range todo {
		// A mistake in the file (a model path) stops the run before anything is built.
		if _, err := CellOptions(f, c, o.RunOptions, 0, ""); err != nil {
			return err
		}
	}
	if err := makeOutputDir(f); err != nil {
		return err
	}
	var mu sync.Mutex // guards what the workers share, and Say between them
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if o.Say != nil {
			fmt.Fprintf(o.Say, format+"\n", args...)
		}
	}
	say("Matrix %s: %d cells, %d to run here, %d worker(s).", pathtext.Q(f.Path), len(cells), len(todo), len(o.Devices))

	// Each worker takes the next cell its GPU can build; a cancelled cell stops the matrix.
	var stopErr error
	pending := todo
	next := func(dev int) (Cell, bool) {
		mu.Lock()
		defer mu.Unlock()
		if stopErr != nil {
			return Cell{}, false
		}
		for i, c := range pending {
			if slices.Contains(deviceFor[c.Index], dev) {
				pending = slices.Delete(pending, i, i+1)
				return c, true
			}
		}
		return Cell{}, false
	}
	hashes := &buildkey.Memo{}
	var wg sync.WaitGroup
	// A signal reaches every cell being built: each cancels, and no new cell starts.
	stopFan := make(chan struct{})
	defer close(stopFan)
	cellSignals := make([]chan os.Signal, len(o.Devices))
	if o.Signals != nil {
		cellSignals = fanOutSignals(o.Signals, len(o.Devices), stopFan)
	}
	for i, dev := range o.Devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sigs <-chan os.Signal
			if cellSignals[i] != nil {
				sigs = cellSignals[i]
			}
			for {
				c, ok := next(dev)
				if !ok {
					return
				}
				if len(o.Devices) == 1 {
					mu.Lock()
					index.Count()
					so := fmt.Sprintf("so far %d built, %d cached, %d failed", index.Built, index.Cached, index.Failed)
					mu.Unlock()
					say("── cell %d/%d %s (%s)", c.Index+1, len(cells), c.ID(), so)
				}
				entry, err := runCell(f, c, o.RunOptions, dev, sigs, c.Engine()+".report.json", hashes)
				line := fmt.Sprintf("cell %d %s: %s", c.Index, c.ID(), entry.Status)
				if entry.Key != "" {
					line += " (" + buildkey.Short(entry.Key) + ")"
				}
				if entry.Error != "" {
					line += ": " + entry.Error
				}
				mu.Lock()
				index.Cells[c.Index] = entry
				if exitcode.BySignal(exitcode.Of(err)) && stopErr == nil {
					stopErr = err
				}
				mu.Unlock()
				say("%s", line)
			}
		}()
	}
	wg.Wait()
	for _, c := range pending {
		index.Cells[c.Index].Status = StatusSkipped
		index.Cells[c.Index].Error = "cancelled"
	}
	index.Finished = time.Now().UTC().Truncate(time.Second)
	index.Seconds = time.Since(start).Seconds()
	if err := WriteIndex(f.OutputDir(), index); err != nil {
		return exitcode.Wrap(exitcode.Failed, err)
	}
	index.Count()
	if o.Say != nil {
		mu.Lock()
		_ = WriteTable(o.Say, index)
		mu.Unlock()
	}
	say("Matrix done in %s: %d built, %d from the engine cache, %d failed, %d skipped. Index: %s",
		time.Since(start).Round(time.Millisecond), index.Built, index.Cached, index.Failed, index.Skipped,
		pathtext.Q(filepath.Join(f.OutputDir(), PageName)))
	if stopErr != nil {
		return stopErr
	}
	if index.Failed > 0 {
		return exitcode.Wrap(exitcode.Failed, fmt.Errorf("%d of %d cells failed; see %s", index.Failed, len(cells), pathtext.Q(filepath.Join(f.OutputDir(), IndexName))))
	}
	return nil
}

// fanOutSignals delivers each signal from sigs to all n returned channels (the cells a matrix
// builds at once), until stop is closed.
func fanOutSignals(sigs <-chan os.Signal, n int, stop <-chan struct{}) []chan os.Signal {
	outs := make([]chan os.Signal, n)
	for i := range outs {
		outs[i] = make(chan os.Signal, 4)
	}
	go func() {
		for {
			select {
			case sig := <-sigs:
				for _, o := range outs {
					select {
					case o <- sig:
					default: // that cell has signals enough queued
					}
				}
			case <-stop:
				return
			}
		}
	}()
	return outs
}
