// Package progress is trtbuild's event contract: the events a build reports, the phase tree
// they describe, the resolver that turns TensorRT's name-based callbacks into events with stable
// IDs, the versioned JSON-lines codec that carries events between processes, and the Renderer
// interface every output implements. It links no terminal UI.
//
// One keeper, State, holds a build's state: the session applies every event to it once and
// every renderer (tty, plain, json, quiet), the build report and trace replay read it through
// the read-only View. No renderer keeps a tree of its own.
package progress
