package progress

import (
	"slices"
	"time"
)

// Resolver turns TensorRT's name-based progress callbacks into events with stable IDs.
//
// TensorRT names a phase only by its text: names are unique among the phases active in one
// hierarchy, may be reused once a phase has finished, and parallel builder threads can each have
// an active phase of the same name ("Measuring tactic time"). The resolver assigns each started
// phase a new ID and maps later callbacks back to it: among the active phases with the callback's
// name it prefers the newest one started on the same thread, then the newest one overall. A
// parent that is not active attaches the phase to the root rather than failing.
//
// A Resolver is not safe for concurrent use; the worker feeds it from its one draining goroutine.
type Resolver struct {
	next   int
	active map[string][]resolved // by name, oldest first
}

type resolved struct {
	id     int
	thread uint64
}

// NewResolver returns an empty resolver whose first phase gets ID 1.
func NewResolver() *Resolver {
	return &Resolver{active: make(map[string][]resolved)}
}

// Start records a phase start and returns its event. hasParent false means a root phase.
func (r *Resolver) Start(t time.Duration, name, parent string, hasParent bool, steps int, thread uint64) Event {
	parentID := 0
	if hasParent {
		if p, ok := r.find(parent, thread); ok {
			parentID = p.id
		}
	}
	r.next++
	r.active[name] = append(r.active[name], resolved{id: r.next, thread: thread})
	return Event{Type: EventPhaseStart, Time: t, ID: r.next, Parent: parentID, Name: name, Steps: steps, Thread: thread}
}

// Step returns the event for a completed step, or false if no phase of that name is active.
func (r *Resolver) Step(t time.Duration, name string, step int, thread uint64) (Event, bool) {
	p, ok := r.find(name, thread)
	if !ok {
		return Event{}, false
	}
	return Event{Type: EventStep, Time: t, ID: p.id, Step: step}, true
}

// Finish ends the matching phase and returns its event, or false if none is active. Whether
// it finished early is decided by the Tree, which knows the step counts.
func (r *Resolver) Finish(t time.Duration, name string, thread uint64) (Event, bool) {
	list := r.active[name]
	i, ok := r.index(list, thread)
	if !ok {
		return Event{}, false
	}
	id := list[i].id
	list = append(list[:i], list[i+1:]...)
	if len(list) == 0 {
		delete(r.active, name)
	} else {
		r.active[name] = list
	}
	return Event{Type: EventPhaseFinish, Time: t, ID: id}, true
}

// FinishAll ends every active phase at time t and returns their finish events, newest phase
// first (children before their parents). The worker calls it when a build attempt ends and
// another of the same request starts: TensorRT does not promise a phaseFinish for every phase
// of a failed build, and the next attempt's phases must not nest in the first's.
func (r *Resolver) FinishAll(t time.Duration) []Event {
	var ids []int
	for _, list := range r.active {
		for _, p := range list {
			ids = append(ids, p.id)
		}
	}
	slices.SortFunc(ids, func(a, b int) int { return b - a })
	clear(r.active)
	events := make([]Event, 0, len(ids))
	for _, id := range ids {
		events = append(events, Event{Type: EventPhaseFinish, Time: t, ID: id})
	}
	return events
}

func (r *Resolver) find(name string, thread uint64) (resolved, bool) {
	list := r.active[name]
	i, ok := r.index(list, thread)
	if !ok {
		return resolved{}, false
	}
	return list[i], true
}

func (r *Resolver) index(list []resolved, thread uint64) (int, bool) {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].thread == thread {
			return i, true
		}
	}
	if len(list) == 0 {
		return 0, false
	}
	return len(list) - 1, true
}
