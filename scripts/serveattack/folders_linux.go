package main

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// folderToggler exchanges the folders a and b (renameat2 with RENAME_EXCHANGE: each name
// leads to a folder at every moment) until stop.
func folderToggler(a, b string, stop <-chan struct{}, swaps *atomic.Int64) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) == nil {
			swaps.Add(1)
		}
	}
}
