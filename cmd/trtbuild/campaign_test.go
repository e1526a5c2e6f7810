//go:build linux

package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fullCampaign runs scripts/fault-campaign.sh in full as TestFaultCampaign.
var fullCampaign = flag.Bool("campaign", false, "run the full fault campaign (scripts/fault-campaign.sh: every stage, full counts) as TestFaultCampaign")

// TestFaultCampaign runs the fault campaign in full: every way of losing data, leaking files
// or hanging, against real processes, with the full counts of its storms. The test command runs
// its quick form; this is the flag for the full one:
//
//	go test ./cmd/trtbuild -run TestFaultCampaign -campaign -timeout 30m
func TestFaultCampaign(t *testing.T) {
	if !*fullCampaign {
		t.Skip("the full fault campaign runs with -campaign; the test command runs its quick form")
	}
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "fault-campaign.sh"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FAULT_CAMPAIGN_QUICK=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the fault campaign failed: %v\n%s", err, out)
	}
	// The table: the last lines, with the total.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Log(lines[len(lines)-1])
}
