// Package builder holds trtbuild's event model: the events a build reports, the phase tree
// they describe, the resolver that turns TensorRT's name-based callbacks into events with stable
// IDs, the versioned JSON-lines codec that carries events between processes, and the build
// request the parent sends to its worker.
//
// One event stream and one phase tree feed every renderer (tty, plain, json, quiet), the build
// report and trace replay.
package builder
