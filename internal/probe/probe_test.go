package probe

import "testing"

// TestLocalTargetSim: the simulated builder is described without starting a probe.
func TestLocalTargetSim(t *testing.T) {
	got, err := Target("sim", 0, "")
	if err != nil || got.Backend != "sim" {
		t.Fatalf("Target(sim) = %+v, %v; want the sim target", got, err)
	}
}
