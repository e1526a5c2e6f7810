package buildkey

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/regfile"
)

// mapFile maps path read-only into memory (CreateFileMapping with PAGE_READONLY, then
// MapViewOfFile with FILE_MAP_READ), so a model of several GiB is hashed without being copied
// onto the heap. release unmaps the view; the bytes must not be used after. The mapping
// object is closed at once: the view keeps it alive.
func mapFile(path string) (data []byte, release func(), err error) {
	f, _, err := regfile.Open(path)
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
	size := st.Size()
	if size == 0 {
		return nil, func() {}, nil // CreateFileMapping refuses an empty file
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("too large to map (%d bytes)", size)
	}
	m, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READONLY, uint32(size>>32), uint32(size), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping: %w", err)
	}
	defer windows.CloseHandle(m)
	addr, err := windows.MapViewOfFile(m, windows.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		return nil, nil, fmt.Errorf("mapping: %w", err)
	}
	// addr is memory outside Go's heap that stays mapped until release: read it as a pointer.
	data = unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), int(size))
	return data, func() { _ = windows.UnmapViewOfFile(addr) }, nil
}
