// Package architecture holds the import rules of docs/architecture.md as data, and the test
// that reads every Go file of the module and fails when an import breaks one. It has no code a
// program links.
package architecture
