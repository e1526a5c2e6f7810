// Package testtraces holds recorded-build fixtures made from real TensorRT 10.16 and 11.0
// progress: the IProgressMonitor event sequences reconstructed from NVIDIA's TensorRT cookbook
// (its progress-monitor example on MNIST, Apache-2.0; testdata/*.tsv, each with its origin in
// its header), converted to trtbuild's v1 JSON lines (docs/events.md) with synthetic times.
// The sources hold no times, so each fixture assigns them by a stated model (see About and
// testdata/README.md): the two regimes real builds show, thousands of short phases in bursts,
// and one step that takes nearly all the time with no callback at all (Myelin).
//
// Every view's tests replay these fixtures: the live view, the plain log, the report, the
// time-left estimate, failure attribution, MCP progress. The JSON lines are generated from the
// .tsv files by this package's test (go test ./internal/testtraces -update).
package testtraces

import (
	"bytes"
	"embed"
	"fmt"

	"github.com/trtbuild/trtbuild/internal/trace"
)

//go:embed testdata/*.jsonl
var files embed.FS

// Fixture names.
const (
	// TRT10160 is TensorRT 10.16.0's sequence (601 phases) with realistic times (bursts).
	TRT10160 = "trt-10.16.0-mnist"
	// TRT10161 is TensorRT 10.16.1's sequence (1,164 phases, 6,439 callbacks) with realistic
	// times (bursts).
	TRT10161 = "trt-10.16.1-mnist"
	// TRT10161Paced is TensorRT 10.16.1's sequence at 5 ms per callback: the 29 s of "Timing
	// graph nodes" in which a plain log used to go quiet.
	TRT10161Paced = "trt-10.16.1-mnist-5ms"
	// TRT10161Failed is TensorRT 10.16.1's sequence cut short by a failure inside tactic
	// timing, with TensorRT's error naming the node.
	TRT10161Failed = "trt-10.16.1-mnist-failed"
	// TRT10161Opt5 is three engine generations in one build, as TensorRT 10.16.1 runs at
	// --builderOptimizationLevel=5 (hypothetical as a phase tree: see About).
	TRT10161Opt5 = "trt-10.16.1-mnist-opt5"
	// TRT1100 is TensorRT 11.0.0's sequence on a B200 (22 phases), 4.7 s of its 5.3 s in one
	// step (Myelin), with the verbose log lines of that build.
	TRT1100 = "trt-11.0.0-b200-mnist"
	// TRT1100Silent110 is TensorRT 11.0.0's sequence with that one step lasting 110 s, the
	// silent window a measured 111 s build had.
	TRT1100Silent110 = "trt-11.0.0-b200-myelin-110s"
)

// Names lists every fixture, in a fixed order.
func Names() []string {
	return []string{TRT10160, TRT10161, TRT10161Paced, TRT10161Failed, TRT10161Opt5, TRT1100, TRT1100Silent110}
}

// About says where a fixture comes from and how its times were assigned.
func About(name string) string { return about[name] }

var about = map[string]string{
	TRT10160: "TensorRT 10.16.0, MNIST built with the layer API, on a Hopper GPU: the sequence reconstructed from " +
		"NVIDIA's TensorRT cookbook (NVIDIA/trt-samples-for-hackathon-cn@fe36094). Times: " + realisticTimes,
	TRT10161: "TensorRT 10.16.1, MNIST from ONNX, on a Hopper GPU: the sequence reconstructed from NVIDIA's " +
		"TensorRT cookbook (NVIDIA/trt-samples-for-hackathon-cn@9a88e26). Times: " + realisticTimes,
	TRT10161Paced: "TensorRT 10.16.1's sequence (as " + TRT10161 + ") with one callback every 5 ms, as the cookbook " +
		"sample's own sleep per step paces it.",
	TRT10161Failed: "TensorRT 10.16.1's sequence (as " + TRT10161 + ", same times) cut in the fourth \"Evaluating tactic " +
		"times\" of the first pass: every open phase finishes early, innermost first, then TensorRT's error, whose text is " +
		"verbatim from a TensorRT 10.4 build (ComfyUI-Upscaler-Tensorrt#36), as TensorRT reports a failure after it has " +
		"finished its phases.",
	TRT10161Opt5: "Three engine generations in one build, as TensorRT 10.16.1 ran at --builderOptimizationLevel=5 " +
		"(cookbook 07-Tool/trtexec/result-02.log: backend strategies 4, 3 and 2 in 15.5 s, 7.8 s and 0.4 s, with those " +
		"log lines verbatim). Hypothetical as a phase tree: that TensorRT reports each generation as a new root phase is " +
		"not verified. Generation 1 is " + TRT10161 + "'s sequence, generations 2 and 3 are " + TRT1100 + "'s (the " +
		"strategy that offloads to Myelin), each scaled to its generation's time.",
	TRT1100: "TensorRT 11.0.0, MNIST, on an NVIDIA B200: the sequence reconstructed from the cookbook maintainer's " +
		"fork (wili-65535/trt-samples-for-hackathon-cn@6373fd2), where Myelin takes the whole network as one node. " +
		"Times: the first \"Evaluating tactic times\" step lasts 4.7 s (that build's \"profiling completed in 4.712 " +
		"seconds\"), the rest as " + TRT10161 + " at a tenth; the verbose log lines of that build are placed around the step " +
		"(the \"Timing Runner:\" line's form is TensorRT's, its place assumed).",
	TRT1100Silent110: "TensorRT 11.0.0's sequence (as " + TRT1100 + ", without its log lines) with the Myelin step lasting " +
		"110 s: the one silent window of a measured 111 s TensorRT build (rerun-io/examples-monorepo#90).",
}

// realisticTimes describes the realistic timing model.
const realisticTimes = "the first phase 0.5 s after the start; each \"Measuring tactic time\" step 1.2 ms times a factor " +
	"that differs between the nodes evaluated (0.5 to 2.4), each \"Evaluating tactic times\" step 0.15 ms, \"Cloning network " +
	"graph\" steps 2 ms, \"Preparing graph for optimization\" 40 ms, \"Optimizing graph\" 60 ms (graph optimization, about " +
	"2 s), \"Computing reformatting costs\" 3 ms, \"Determining refit engines\" 8 ms, other steps 1 ms, phase starts and " +
	"finishes 30 µs; the root's last step 0.9 s (engine generation after timing) and the result 0.65 s after the last " +
	"phase: 8.6 s in all for 10.16.1's sequence (6.4 s for 10.16.0's), as trtexec 10.16.1 built this model in 8.1 s " +
	"(\"Engine built in 8.09138 sec.\"), 5 s of it between its log lines before and after tactic timing."

// Bytes returns a fixture's JSON lines.
func Bytes(name string) ([]byte, error) {
	data, err := files.ReadFile("testdata/" + name + ".jsonl")
	if err != nil {
		return nil, fmt.Errorf("no fixture %q: %w", name, err)
	}
	return data, nil
}

// Read decodes a fixture.
func Read(name string) (*trace.Trace, error) {
	data, err := Bytes(name)
	if err != nil {
		return nil, err
	}
	return trace.Read(bytes.NewReader(data))
}

// Must is Read for tests: it panics when the fixture is missing or does not decode.
func Must(name string) *trace.Trace {
	tr, err := Read(name)
	if err != nil {
		panic(err)
	}
	return tr
}
