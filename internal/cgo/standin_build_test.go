package cgo

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/trt"
)

// Builds over the stand-in TensorRT (trtfake/), through the TensorRT shim, run by a child
// process of the test binary: the stand-in, once installed, is the process's TensorRT for
// good, which the other tests of this package must not see.

// standinBuildChildEnv makes the test binary run standinBuildChild with the job it holds
// (JSON).
const standinBuildChildEnv = "TRTBUILD_STANDIN_BUILD_CHILD"

func init() { childHelpers[standinBuildChildEnv] = standinBuildChild }

// standinJob is one build over the stand-in.
type standinJob struct {
	Major    int    // the stand-in installed in the binary, of this major
	Settings string // its settings
	// Libraries, when set, is a folder of stand-in libraries (standin.ShimLibs) loaded as
	// TensorRT instead: the build goes through the run-time loader too.
	Libraries   string
	Model       string
	Plan        string // the plan file to create
	OptLevel    int    // -1: default
	Flags       uint32
	Precision   uint32
	Build       BuildSettings
	CacheIn     string // a timing cache file to start from ("": none)
	CacheOut    string // where to write the build's merged cache ("": nowhere)
	CancelAt    string // cancel when a phase of this name starts ("": never)
	CancelAfter int    // cancel when this many events were drained (0: never)
	// Refused: NewBuild is to refuse the job, and that refusal is the outcome (Error, Code);
	// a NewBuild that takes it is a setup failure.
	Refused bool
	// MaxAuxStreams is Options.MaxAuxStreams; nil: the builder's default (-1).
	MaxAuxStreams *int
	// NoBuiltinPlugins loads the Libraries without libnvinfer_plugin (--no-builtin-plugins).
	NoBuiltinPlugins bool
}

// standinOutcome is what the child saw.
type standinOutcome struct {
	Setup    string // why the build could not be made
	Error    string
	Code     Code
	Result   Result
	Events   []RawEvent
	Plan     string
	Changed  bool   // the cache file would change
	CacheErr string // writing the cache failed
	Version  VersionInfo
}

// standinBuild runs job in a child and returns what it saw.
func standinBuild(t *testing.T, job standinJob) standinOutcome {
	t.Helper()
	if job.Plan == "" {
		job.Plan = filepath.Join(testDir(t), "model.plan")
	}
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), standinBuildChildEnv+"="+string(b))
	if job.Libraries != "" {
		cmd.Env = append(cmd.Env, "LD_LIBRARY_PATH="+job.Libraries)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	var got standinOutcome
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("child said %q: %v\n%s", out, err, stderr.String())
	}
	if got.Setup != "" {
		t.Fatalf("child: %s", got.Setup)
	}
	return got
}

// standinBuildChild installs the stand-in (or loads the stand-in libraries) and runs the
// build of its job as the worker does, and writes the outcome as JSON.
func standinBuildChild() int {
	var job standinJob
	var out standinOutcome
	say := func() int {
		if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	if err := json.Unmarshal([]byte(os.Getenv(standinBuildChildEnv)), &job); err != nil {
		out.Setup = err.Error()
		return say()
	}
	if job.Libraries != "" {
		loc := trt.SearchFromEnv(CompiledMajors(), 13, job.Libraries, func(string) string { return "" }).Locate()
		if err := LoadTensorRT(loc, !job.NoBuiltinPlugins); err != nil {
			out.Setup = err.Error()
			return say()
		}
		driver, err := OpenLibrary(trt.LibCUDADriver, filepath.Join(job.Libraries, trt.FileName(trt.LibCUDADriver, 0)))
		if err == nil {
			err = driver.install()
		}
		if err != nil {
			out.Setup = err.Error()
			return say()
		}
	} else if err := InstallStandIn(job.Major, job.Settings); err != nil {
		out.Setup = err.Error()
		return say()
	}
	var err error
	if out.Version, err = Version(BackendTensorRT, 0); err != nil {
		out.Setup = "version: " + err.Error()
		return say()
	}
	plan, err := os.Create(job.Plan)
	if err != nil {
		out.Setup = err.Error()
		return say()
	}
	defer plan.Close()
	o := Options{
		ModelPath: job.Model, PlanFile: plan, LogSeverity: SeverityVerbose, OptLevel: job.OptLevel,
		MaxAuxStreams: -1, Flags: job.Flags, Precision: job.Precision, BuildSettings: job.Build,
	}
	if job.MaxAuxStreams != nil {
		o.MaxAuxStreams = *job.MaxAuxStreams
	}
	if job.CacheIn != "" {
		data, err := os.ReadFile(job.CacheIn)
		if err != nil {
			out.Setup = err.Error()
			return say()
		}
		c, cerr := NewCBuffer(len(data))
		if cerr != nil {
			out.Setup = cerr.Error()
			return say()
		}
		copy(c.Bytes(), data)
		o.TimingCache = c
	}
	b, err := NewBuild(BackendTensorRT, o)
	if job.Refused {
		if err == nil {
			b.Close()
			out.Setup = "NewBuild took a job it was to refuse"
		} else {
			out.Error = err.Error()
			if e, ok := err.(*Error); ok {
				out.Code = e.Code
			}
		}
		return say()
	}
	if err != nil {
		out.Setup = "NewBuild: " + err.Error()
		return say()
	}
	defer b.Close()
	ran := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		out.Result, err = b.Run()
		if job.CacheOut != "" {
			// As the worker does, on the thread of the build, once Run has returned.
			f, cerr := os.Create(job.CacheOut)
			if cerr == nil {
				out.Changed, cerr = b.WriteTimingCache(DiskCache{Given: true}, f)
				f.Close()
			}
			if cerr != nil {
				out.CacheErr = cerr.Error()
			}
		}
		close(ran)
	}()
	var batch []RawEvent
	for {
		var done bool
		var derr error
		batch, done, _, derr = b.Drain(batch, 50*time.Millisecond)
		if derr != nil {
			out.Setup = "Drain: " + derr.Error()
			return say()
		}
		for _, ev := range batch {
			out.Events = append(out.Events, ev)
			if (job.CancelAt != "" && ev.Kind == EventPhaseStart && ev.Name == job.CancelAt) ||
				(job.CancelAfter > 0 && len(out.Events) == job.CancelAfter) {
				b.Cancel()
			}
		}
		if done {
			break
		}
	}
	<-ran
	if err != nil {
		out.Error = err.Error()
		if e, ok := err.(*Error); ok {
			out.Code = e.Code
		}
	}
	if data, rerr := os.ReadFile(job.Plan); rerr == nil {
		out.Plan = string(data)
	}
	return say()
}
