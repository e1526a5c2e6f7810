//go:build unix

package buildkey

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/regfile"
)

// mapFile maps path read-only into memory, so a model of several GiB is hashed without being
// copied onto the heap. release unmaps it; the bytes must not be used after.
func mapFile(path string) (data []byte, release func(), err error) {
	f, _, err := regfile.Open(path) // never blocks on a FIFO
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return mapOpen(f)
}

// mapOpen is mapFile of the open file f (which may be closed once it returns).
func mapOpen(f *os.File) (data []byte, release func(), err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("not a regular file")
	}
	if st.Size() == 0 {
		return nil, func() {}, nil
	}
	if int64(int(st.Size())) != st.Size() {
		return nil, nil, fmt.Errorf("too large to map (%d bytes)", st.Size())
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping: %w", err)
	}
	return data, func() { _ = unix.Munmap(data) }, nil
}
