//go:build trtbench

package cgo

// Tests of the event queue's bound and of the exception guard of the C boundary. They drive
// builds that only the measurement ABI makes (trtb_bench.h, bench.go), which the trtbench tag
// compiles: go test -tags trtbench ./internal/cgo (scripts/test.sh runs them).

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestQueueFullDropsSteps fills a queue bounded at 16 KiB with nobody draining: steps beyond
// three quarters of the bound are dropped and counted, and so is the INFO line logged at the
// end; every start and finish is kept.
func TestQueueFullDropsSteps(t *testing.T) {
	const threads, perThread, bound = 4, 1000, 16 << 10
	b, err := newFloodBuild(threads, perThread, bound, defaultBatchEvents, defaultBatchText)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var events []RawEvent
	var dropped Drops
	for done := false; !done; {
		var batch []RawEvent
		batch, done, dropped, err = b.Drain(nil, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, batch...)
	}
	checkEvents(t, events)
	count := map[EventKind]int{}
	var bytes int
	for _, ev := range events {
		count[ev.Kind]++
		bytes += eventBytes + len(ev.Name) + len(ev.Parent)
	}
	if count[EventPhaseStart] != threads || count[EventPhaseFinish] != threads {
		t.Errorf("kept %v; want every start and finish", count)
	}
	if count[EventLog] != 0 || dropped.Logs[SeverityInfo] != 1 {
		t.Errorf("kept %d log lines, dropped %v; want the one INFO line dropped", count[EventLog], dropped)
	}
	// Each thread counts its bytes in chunks, so each may pass the bound by one chunk.
	if limit := bound*3/4 + threads*publishChunk + 2*threads*eventBytes; bytes > limit {
		t.Errorf("kept %d bytes of events; want at most %d", bytes, limit)
	}
	if uint64(count[EventStep])+dropped.Steps != threads*perThread || dropped.Steps == 0 {
		t.Errorf("%d steps kept + %d dropped, want %d with some dropped", count[EventStep], dropped.Steps, threads*perThread)
	}
}

// TestQueueBoundDropsChatterFirst fills a queue bounded at 64 KiB from one thread with nobody
// draining, with one line of each severity and one step per round: VERBOSE and INFO lines go
// first (past half the bound), then steps (past three quarters), then WARNING lines (past the
// bound), then ERROR lines (past twice it); phase events are never dropped, and every drop is
// counted by kind.
func TestQueueBoundDropsChatterFirst(t *testing.T) {
	const rounds, bound = 2000, 64 << 10
	b, err := newLogFloodBuild(rounds, bound)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var events []RawEvent
	var dropped Drops
	for done := false; !done; {
		var batch []RawEvent
		batch, done, dropped, err = b.Drain(nil, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, batch...)
	}
	checkEvents(t, events)
	// slot: severity for log lines, 5 for steps, 6 for phase events.
	kept := make([]uint64, 7)
	last := make([]int, 7) // the round of the last kept event of each kind
	var bytes int
	for _, ev := range events {
		slot := 6
		switch ev.Kind {
		case EventLog:
			slot = ev.Severity
			var round int
			if _, err := fmt.Sscanf(ev.Name[strings.LastIndexByte(ev.Name, ' ')+1:], "%d", &round); err != nil {
				t.Fatalf("log line %q: %v", ev.Name, err)
			}
			last[slot] = round
		case EventStep:
			slot = 5
			last[slot] = ev.Step
		}
		kept[slot]++
		bytes += eventBytes + len(ev.Name) + len(ev.Parent)
	}
	if kept[6] != 2 {
		t.Errorf("kept %d phase events, want the start and the finish", kept[6])
	}
	for sev := SeverityInternalError; sev <= SeverityVerbose; sev++ {
		if kept[sev]+dropped.Logs[sev] != rounds {
			t.Errorf("severity %d: %d kept + %d dropped != %d", sev, kept[sev], dropped.Logs[sev], rounds)
		}
	}
	if kept[5]+dropped.Steps != rounds {
		t.Errorf("steps: %d kept + %d dropped != %d", kept[5], dropped.Steps, rounds)
	}
	// Who goes first: the last kept round of each kind rises in this order.
	order := []struct {
		slot int
		name string
	}{{SeverityVerbose, "verbose"}, {5, "step"}, {SeverityWarning, "warning"}, {SeverityError, "error"}}
	for i, o := range order {
		if o.slot == 5 && dropped.Steps == 0 || o.slot != 5 && dropped.Logs[o.slot] == 0 {
			t.Errorf("no %s event was dropped; the test wants every tier reached", o.name)
		}
		if i > 0 && last[o.slot] <= last[order[i-1].slot] {
			t.Errorf("last kept %s at round %d, not after the last kept %s at round %d",
				o.name, last[o.slot], order[i-1].name, last[order[i-1].slot])
		}
	}
	if last[SeverityInfo] != last[SeverityVerbose] {
		t.Errorf("INFO kept until round %d, VERBOSE until %d; want the same tier", last[SeverityInfo], last[SeverityVerbose])
	}
	if limit := 2*bound + publishChunk + 2*eventBytes; bytes > limit {
		t.Errorf("kept %d bytes of events; want at most %d", bytes, limit)
	}
	if got := dropped.String(); !strings.Contains(got, "verbose log lines") || !strings.Contains(got, "step reports") {
		t.Errorf("Drops.String() = %q", got)
	}
}

// TestGuardedCall checks the one helper that keeps C++ exceptions from crossing the C boundary:
// each kind of exception becomes a status with the right code and a one-line message.
func TestGuardedCall(t *testing.T) {
	tests := []struct {
		what int
		code Code
		want string
	}{
		{0, CodeOK, ""},
		{1, CodeInternal, "internal error in the engine builder: boom"},
		{2, CodeOutOfMemory, "host memory ran out in the engine builder"},
		{3, CodeInternal, "internal error in the engine builder: unknown exception"},
		{4, CodeInternal, "internal error in the engine builder: xxxx"},
	}
	for _, tt := range tests {
		err := testGuarded(tt.what)
		if tt.code == CodeOK {
			if err != nil {
				t.Errorf("body %d: %v", tt.what, err)
			}
			continue
		}
		e := asError(t, err, tt.code)
		if !strings.HasPrefix(e.Message, tt.want) {
			t.Errorf("body %d: message %.80q, want it to start with %q", tt.what, e.Message, tt.want)
		}
		if len(e.Message) > 2047 || !utf8.ValidString(e.Message) {
			t.Errorf("body %d: message of %d bytes, valid UTF-8 %v; want at most 2047 bytes of valid UTF-8",
				tt.what, len(e.Message), utf8.ValidString(e.Message))
		}
	}
}

// TestDrainWakesOnPush drains a flood from 4 threads with a timeout far longer than the test:
// the drainer sleeps whenever the queue is empty and must be woken by the next push (or by the
// end of the run). A lost wake-up would hang here until the test binary's timeout.
func TestDrainWakesOnPush(t *testing.T) {
	const threads, perThread = 4, 20000
	b, err := newFloodBuild(threads, perThread, 0, 64, defaultBatchText)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ran := make(chan error, 1)
	go func() {
		_, err := b.Run()
		ran <- err
	}()
	var n int
	var dropped Drops
	for done := false; !done; {
		var batch []RawEvent
		batch, done, dropped, err = b.Drain(nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		n += len(batch)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if want := threads*(perThread+2) + 1; uint64(n)+dropped.Total() != uint64(want) || dropped.Total() != 0 {
		t.Errorf("drained %d events, dropped %v; want %d and none dropped", n, dropped, want)
	}
}
