//go:build !windows

package httpapi

import (
	"os"
	"syscall"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// geteuid is the user a token file must belong to: the server's effective user.
var geteuid = os.Geteuid

// checkTokenPrivate refuses a token file (name, opened as f, st its information) that belongs
// to another user than the server's effective one (its owner could change the token, or read
// it whatever its mode says, and root's server would trust a file nobody owns), or that its
// group or others may read or write.
func checkTokenPrivate(name string, _ *os.File, st os.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if uid := geteuid(); int(sys.Uid) != uid {
			return exitcode.Usagef("--token-file %s belongs to user %d, not to the server's user %d", pathtext.Q(name), sys.Uid, uid).Hintf("give a token file of your own (chown %d %s)", uid, pathtext.Q(name))
		}
	}
	if st.Mode().Perm()&0o077 != 0 {
		return exitcode.Usagef("--token-file %s may be read or written by its group or others (mode %04o)", pathtext.Q(name), st.Mode().Perm()).Hintf("make it yours alone: chmod 600 %s", pathtext.Q(name))
	}
	return nil
}
