//go:build !unix && !windows

package buildkey

import (
	"io"
	"os"
)

// mapFile reads path into memory where memory mapping is not available.
func mapFile(path string) (data []byte, release func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}

// mapOpen reads the open file f into memory.
func mapOpen(f *os.File) (data []byte, release func(), err error) {
	data, err = io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	return data, func() {}, err
}
