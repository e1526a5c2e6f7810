//go:build !windows

package cgo

import "testing"

// TestEachMajorTakesItsShim: see eachMajorTakesItsShim.
func TestEachMajorTakesItsShim(t *testing.T) { eachMajorTakesItsShim(t) }
