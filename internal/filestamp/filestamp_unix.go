//go:build !windows

package filestamp

import (
	"os"

	"golang.org/x/sys/unix"
)

func of(f *os.File) (Stamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Stamp{}, err
	}
	return Stamp{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, ModTime: st.Mtim.Nano(), ChangeTime: st.Ctim.Nano()}, nil //nolint:unconvert // Dev is not uint64 everywhere
}
