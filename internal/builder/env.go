package builder

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/probe"
)

// Env is what builds ask of the machine, asked once in a while: the target of a build (the
// TensorRT library, its ONNX parser and the GPU; internal/probe, a child process that loads
// TensorRT) per backend, device and TensorRT folder. A front end that prepares many builds (a
// service, a matrix) keeps one Env for its life and hands it to Prepare; nil there means one
// Env for that plan alone. An answer is kept for TargetAge (TensorRT upgraded in place, a GPU
// swapped or its MIG slices changed are seen after that; a build's worker, which says what it
// loaded, corrects it at once); a failed probe is not kept: the next question asks again
// (TensorRT installed since, a GPU back from a reset), but the questions that came while it was
// asked get its answer. Safe for concurrent use.
type Env struct {
	probe  func(backend string, device int, libDir string) (buildkey.Target, error)
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	targets map[targetQuery]*targetAnswer

	plans, probes atomic.Int64
}

// targetQuery is one question of Env.Target.
type targetQuery struct {
	backend string
	device  int
	libDir  string
}

// targetAnswer is the answer to a targetQuery, ready once done is closed.
type targetAnswer struct {
	done   chan struct{}
	target buildkey.Target
	err    error
	at     time.Time // when it was asked
}

// TargetAge is how long an Env keeps a target it was told.
const TargetAge = time.Minute

// NewEnv is an Env that asks this machine (probe.Target).
func NewEnv() *Env { return NewEnvWith(probe.Target) }

// NewEnvWith is an Env whose targets come from ask instead of the probe (tests hand in a fake
// machine, or count the questions).
func NewEnvWith(ask func(backend string, device int, libDir string) (buildkey.Target, error)) *Env {
	return &Env{probe: ask, maxAge: TargetAge, now: time.Now, targets: map[targetQuery]*targetAnswer{}}
}

// EnvCounts says how often an Env planned a build and asked the machine for a target.
type EnvCounts struct {
	// Plans are Prepare's calls with this Env (refused ones too); Probes the targets asked of
	// the machine (each (backend, device, folder) once per TargetAge, unless the probe failed).
	Plans, Probes int64
}

// Counts says how often e planned and probed so far.
func (e *Env) Counts() EnvCounts {
	return EnvCounts{Plans: e.plans.Load(), Probes: e.probes.Load()}
}

// Target is the target a build of backend on device with the TensorRT of libDir runs on: asked
// of the machine once, then remembered.
func (e *Env) Target(backend string, device int, libDir string) (buildkey.Target, error) {
	q := targetQuery{backend, device, libDir}
	e.mu.Lock()
	a := e.targets[q]
	if a != nil && a.fresh(e.now(), e.maxAge) {
		// Asked now, or lately: the answer of the question in flight (failed or not), or the
		// one kept.
		e.mu.Unlock()
		<-a.done
		return a.target, a.err
	}
	a = &targetAnswer{done: make(chan struct{}), at: e.now()}
	e.targets[q] = a
	e.mu.Unlock()
	e.probes.Add(1)
	a.target, a.err = e.probe(backend, device, libDir)
	if a.err != nil {
		e.mu.Lock()
		if e.targets[q] == a {
			delete(e.targets, q)
		}
		e.mu.Unlock()
	}
	close(a.done)
	return a.target, a.err
}

// fresh says whether a is still the answer at now: asked less than maxAge ago, or still being
// asked.
func (a *targetAnswer) fresh(now time.Time, maxAge time.Duration) bool {
	select {
	case <-a.done:
		return now.Sub(a.at) < maxAge
	default:
		return true
	}
}

// remember keeps target as the answer for a build of backend on device with the TensorRT of
// libDir, said now by a process that loaded them (a build's worker): the truth, which replaces
// what was kept, unless a question is being asked.
func (e *Env) remember(backend string, device int, libDir string, target buildkey.Target) {
	q := targetQuery{backend, device, libDir}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.targets[q]; old != nil {
		select {
		case <-old.done:
		default:
			return // being asked: its answer is as new
		}
	}
	a := &targetAnswer{done: make(chan struct{}), target: target, at: e.now()}
	close(a.done)
	e.targets[q] = a
}
