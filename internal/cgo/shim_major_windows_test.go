package cgo

import "testing"

// TestEachMajorTakesItsShim: see eachMajorTakesItsShim (under Wine, with stand-in DLLs).
func TestEachMajorTakesItsShim(t *testing.T) { eachMajorTakesItsShim(t) }
