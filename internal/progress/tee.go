package progress

import (
	"time"
)

// Tee is a Renderer that passes every call to each of its renderers in order, for example the
// view the user watches and a JSON renderer recording a trace file (--trace). The renderers
// share each batch and the one View; none of them changes either.
type Tee []Renderer

// Begin implements Renderer.
func (t Tee) Begin(v View) {
	for _, r := range t {
		r.Begin(v)
	}
}

// Handle implements Renderer.
func (t Tee) Handle(batch []Event) {
	for _, r := range t {
		r.Handle(batch)
	}
}

// Notice implements Renderer.
func (t Tee) Notice(n Notice) {
	for _, r := range t {
		r.Notice(n)
	}
}

// Tick implements Renderer.
func (t Tee) Tick(now time.Time) {
	for _, r := range t {
		r.Tick(now)
	}
}

// End implements Renderer: every renderer is ended, and the first error is returned.
func (t Tee) End(res Result) error {
	var first error
	for _, r := range t {
		if err := r.End(res); err != nil && first == nil {
			first = err
		}
	}
	return first
}
