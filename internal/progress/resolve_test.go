package progress

import (
	"testing"
	"time"
)

func TestResolverReusedNamesAndThreads(t *testing.T) {
	r := NewResolver()
	root := r.Start(0, "Building engine", "", false, 4, 1)
	timing := r.Start(1, "Timing graph nodes", "Building engine", true, 2, 1)
	// Two builder threads each time a layer with an equally named inner phase.
	a := r.Start(2, "Finding fastest tactic for conv1", "Timing graph nodes", true, 3, 2)
	b := r.Start(2, "Finding fastest tactic for conv2", "Timing graph nodes", true, 3, 3)
	ma := r.Start(3, "Measuring tactic time", "Finding fastest tactic for conv1", true, 4, 2)
	mb := r.Start(3, "Measuring tactic time", "Finding fastest tactic for conv2", true, 4, 3)

	tests := []struct {
		name         string
		got, wantPar int
	}{
		{"root has no parent", root.Parent, 0},
		{"timing under root", timing.Parent, root.ID},
		{"thread 2 layer under timing", a.Parent, timing.ID},
		{"thread 3 layer under timing", b.Parent, timing.ID},
		{"thread 2 measuring under its own layer", ma.Parent, a.ID},
		{"thread 3 measuring under its own layer", mb.Parent, b.ID},
	}
	for _, tt := range tests {
		if tt.got != tt.wantPar {
			t.Errorf("%s: parent %d, want %d", tt.name, tt.got, tt.wantPar)
		}
	}
	// Steps go to the phase of the reporting thread.
	if e, ok := r.Step(4, "Measuring tactic time", 0, 3); !ok || e.ID != mb.ID {
		t.Fatalf("step from thread 3 went to %d (ok=%v), want %d", e.ID, ok, mb.ID)
	}
	if e, ok := r.Step(4, "Measuring tactic time", 0, 2); !ok || e.ID != ma.ID {
		t.Fatalf("step from thread 2 went to %d, want %d", e.ID, ma.ID)
	}
	// An unknown thread falls back to the newest phase of that name.
	if e, ok := r.Step(4, "Measuring tactic time", 1, 99); !ok || e.ID != mb.ID {
		t.Fatalf("step from unknown thread went to %d, want newest %d", e.ID, mb.ID)
	}
	if e, ok := r.Finish(5, "Measuring tactic time", 2); !ok || e.ID != ma.ID {
		t.Fatalf("finish from thread 2 ended %d, want %d", e.ID, ma.ID)
	}
	// The name is reused after it finished: a new ID.
	again := r.Start(6, "Measuring tactic time", "Finding fastest tactic for conv1", true, 4, 2)
	if again.ID == ma.ID || again.Parent != a.ID {
		t.Fatalf("reused name got id %d parent %d; want a new id under %d", again.ID, again.Parent, a.ID)
	}
}

func TestResolverUnknownPhases(t *testing.T) {
	r := NewResolver()
	orphan := r.Start(0, "Child", "Never started", true, 1, 1)
	if orphan.Parent != 0 {
		t.Errorf("unknown parent: attached to %d, want root (0)", orphan.Parent)
	}
	if _, ok := r.Step(time.Second, "nope", 0, 1); ok {
		t.Error("step of an unknown phase resolved")
	}
	if _, ok := r.Finish(time.Second, "nope", 1); ok {
		t.Error("finish of an unknown phase resolved")
	}
	if _, ok := r.Finish(time.Second, "Child", 1); !ok {
		t.Fatal("finish of the orphan did not resolve")
	}
	if _, ok := r.Finish(time.Second, "Child", 1); ok {
		t.Error("second finish of the same phase resolved")
	}
	if n := len(r.Active()); n != 0 {
		t.Errorf("%d phases still active, want 0", n)
	}
}

func TestResolverFinishAll(t *testing.T) {
	r := NewResolver()
	r.Start(0, "a", "", false, 1, 1)
	r.Start(0, "b", "a", true, 1, 1)
	r.Start(0, "c", "a", true, 1, 2)
	r.Finish(0, "c", 2)
	got := r.FinishAll(5)
	if len(got) != 2 || got[0].ID != 2 || got[1].ID != 1 || got[0].Type != EventPhaseFinish || got[0].Time != 5 {
		t.Fatalf("FinishAll = %+v, want finishes of 2 then 1 at 5", got)
	}
	if len(r.Active()) != 0 || len(r.FinishAll(6)) != 0 {
		t.Fatal("phases still active after FinishAll")
	}
	if e := r.Start(7, "a", "", false, 1, 1); e.ID != 4 {
		t.Fatalf("next ID %d, want 4 (IDs are never reused)", e.ID)
	}
}
