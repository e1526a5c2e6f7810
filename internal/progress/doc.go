// Package progress is trtbuild's event contract: the events a build reports, the phase tree
// they describe, the resolver that turns TensorRT's name-based callbacks into events with stable
// IDs, the versioned JSON-lines codec that carries events between processes, and the Renderer
// interface every output implements. It links no terminal UI.
//
// One event stream and one phase tree feed every renderer (tty, plain, json, quiet), the build
// report and trace replay.
package progress
