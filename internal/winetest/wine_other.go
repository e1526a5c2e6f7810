//go:build !windows

package winetest

// Wine reports whether the program runs under Wine: never, off Windows.
func Wine() bool { return false }
