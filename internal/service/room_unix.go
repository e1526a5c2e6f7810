//go:build !windows

package service

import "golang.org/x/sys/unix"

// diskSpace is statfs(2) of dir: the blocks free for an unprivileged user, and all of them.
func diskSpace(dir string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	bsize := uint64(st.Bsize)
	return uint64(st.Bavail) * bsize, uint64(st.Blocks) * bsize, nil
}
