//go:build !windows

package service

import "syscall"

// makeFIFO makes a FIFO at path and says that it did.
func makeFIFO(path string) (bool, error) { return true, syscall.Mkfifo(path, 0o644) }
