package builder

import (
	"sort"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// simScenarios are the situations --sim-scenario plays with the simulated builder, so that the
// views of a silent builder, a cancel, a failure and a crash can be seen without a GPU. Each
// maps onto the hidden --sim-* knobs; durations shrink with --sim-speed.
var simScenarios = map[string]string{
	"silence":     "the builder reports nothing for 20 s when it starts timing layers, as TensorRT can for minutes",
	"fail":        "the builder fails while timing the model's middle layer",
	"crash":       "the build worker aborts (SIGABRT) while timing the model's middle layer",
	"slow-cancel": "every measuring step takes 2 s, so after Ctrl-C the builder takes up to 2 s to stop at its next step boundary (a second Ctrl-C stops it at once)",
}

// Durations of the scenarios at --sim-speed 1.
const (
	scenarioSilence  = 20 * time.Second
	scenarioSlowStep = 2 * time.Second
)

// SimScenarioNames are the situations Sim.Scenario (--sim-scenario) plays, sorted.
func SimScenarioNames() []string {
	names := make([]string, 0, len(simScenarios))
	for n := range simScenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// applyScenario sets the simulated builder's knobs for scenario on req, after the model's
// layers are known. Knobs given on the command line win.
func applyScenario(scenario, backend string, speed float64, given Sim, req *worker.Request) error {
	if scenario == "" {
		return nil
	}
	if _, ok := simScenarios[scenario]; !ok {
		return exitcode.Usagef("invalid --sim-scenario %q: use %s", scenario, strings.Join(SimScenarioNames(), ", "))
	}
	if backend != "sim" {
		return exitcode.Usagef("--sim-scenario plays a situation with the simulated builder: add --backend sim")
	}
	scale := func(d time.Duration) time.Duration { return max(time.Duration(float64(d)/speed), time.Millisecond) }
	// The model's middle timed node: TensorRT names no layer in its phases, so the stand-in
	// picks the node by its place in the graph it times.
	middle := 0.5
	s := &req.Sim
	switch scenario {
	case "silence":
		if given.Silent == 0 {
			s.Silent = scale(scenarioSilence)
		}
	case "fail":
		if given.FailPhase == "" {
			s.FailAt = &middle
		}
	case "crash":
		if given.AbortPhase == "" {
			s.AbortAt = &middle
		}
	case "slow-cancel":
		if given.Step == 0 {
			s.Step = scale(scenarioSlowStep)
		}
	}
	return nil
}
