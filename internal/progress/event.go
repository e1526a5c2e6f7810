package progress

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventType names the kind of an Event. The values are the "type" field of the JSON-lines
// schema (docs/events.md).
type EventType string

// Event types. Consumers must ignore types they do not know.
const (
	EventBuild       EventType = "build"        // first event: what is being built
	EventPhaseStart  EventType = "phase_start"  // a phase began
	EventStep        EventType = "step"         // a phase completed a step
	EventPhaseFinish EventType = "phase_finish" // a phase ended (possibly before all steps)
	EventLog         EventType = "log"          // a builder or trtbuild log line
	EventResult      EventType = "result"       // last event: how the build ended
)

// Severity is the level of a log line, most severe first.
type Severity int

// Severities, in the order of TensorRT's ILogger::Severity.
const (
	SeverityInternalError Severity = iota
	SeverityError
	SeverityWarning
	SeverityInfo
	SeverityVerbose
)

var severityNames = [...]string{"internal_error", "error", "warning", "info", "verbose"}

// String returns the severity's name in the JSON schema ("warning", …).
func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity is the inverse of Severity.String.
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if n == name {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown log severity %q", name)
}

// Event is one thing that happened during a build. Which fields are set depends on Type:
//
//	build:        Info
//	phase_start:  ID, Parent (0 for a root phase), Name, Steps, Thread
//	step:         ID, Step (as reported: the index of the completed step)
//	phase_finish: ID, Early (finished before all of its steps were reported)
//	log:          Severity, Message
//	result:       Result
//
// Time is measured from the start of the build on the builder's clock.
type Event struct {
	Type     EventType
	Time     time.Duration
	ID       int
	Parent   int
	Name     string
	Steps    int
	Step     int
	Early    bool
	Thread   uint64
	Severity Severity
	Message  string
	Info     *BuildInfo
	Result   *Result
}

// BuildInfo describes a build for headers and reports.
type BuildInfo struct {
	Model     string `json:"model"`
	Engine    string `json:"engine"`
	Backend   string `json:"backend"`
	Precision string `json:"precision,omitempty"`
	Layers    int    `json:"layers,omitempty"`
	Version   string `json:"trtbuild_version,omitempty"`
	TensorRT  string `json:"tensorrt_version,omitempty"`
	// GPU names the device the build ran on, when known.
	GPU string `json:"gpu,omitempty"`
	// Command is the command line that started the build, and Settings every setting the
	// build ran with (the worker's request: shapes, precision, flags), so that a report or a
	// trace says how to build the same engine again.
	Command  []string        `json:"command,omitempty"`
	Settings json.RawMessage `json:"settings,omitempty"`
	// Target is what a TensorRT build's worker loaded, as the build key names it (TensorRT,
	// its ONNX parser, the GPU; buildkey.Target's JSON): the worker's first event says it, and
	// the parent keys the build by it instead of asking a probe. The parent takes it out of
	// the stream: a view's build line never has it.
	Target json.RawMessage `json:"target,omitempty"`
}

// Status says how a build ended.
type Status string

// Build outcomes.
const (
	StatusBuilt     Status = "built"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	StatusTimedOut  Status = "timed_out"
)

// Result is how a build ended.
type Result struct {
	Status       Status        `json:"status"`
	Error        string        `json:"error,omitempty"`
	Engine       string        `json:"engine,omitempty"`
	EngineBytes  int64         `json:"engine_bytes,omitempty"`
	Duration     time.Duration `json:"-"`
	CacheHits    uint64        `json:"cache_hits,omitempty"`
	CacheMisses  uint64        `json:"cache_misses,omitempty"`
	CacheUsed    bool          `json:"cache_used,omitempty"`
	DroppedSteps uint64        `json:"dropped_steps,omitempty"`
	PeakRSS      int64         `json:"peak_rss_bytes,omitempty"`
	// CancelSeen is the builder's CLOCK_MONOTONIC time, in nanoseconds, when a builder thread
	// first saw the cancel request; 0 if none did. Used to measure cancel latency.
	CancelSeen int64 `json:"cancel_seen_ns,omitempty"`
	// UsageError marks a failed build that could not start because of the input or the
	// environment, which the user must fix (TensorRT not found, say): exit code 2, not 1.
	UsageError bool `json:"usage_error,omitempty"`
	// TensorRT and GPU are what the worker found when it loaded the builder: the full TensorRT
	// version with its build number ("10.16.0.72") and the device's name and compute capability
	// ("NVIDIA H200, compute capability 9.0"). Empty for the simulated builder, or when not
	// known. The session copies them into the BuildInfo (State.End), so reports record them.
	TensorRT string `json:"tensorrt_version,omitempty"`
	GPU      string `json:"gpu,omitempty"`
	// Where names the phase a failed, cancelled or timed-out build ended in, and Hint says
	// what to try after a failure. The session derives both once (State.End); the worker
	// leaves them empty.
	Where *Where `json:"where,omitempty"`
	Hint  string `json:"hint,omitempty"`
	// Cached marks a built result whose engine was copied from the engine cache: nothing was
	// built (added within v1).
	Cached bool `json:"cached,omitempty"`
}
