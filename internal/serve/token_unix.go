//go:build !windows

package serve

import (
	"os"
	"syscall"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// geteuid is the user a token file must belong to: the server's effective user.
var geteuid = os.Geteuid

// checkTokenOwner refuses a token file (name, opened as f, st its information) that belongs to
// another user than the server's effective one: its owner could change the token, or read it
// whatever its mode says, and root's server would trust a file nobody owns.
func checkTokenOwner(name string, _ *os.File, st os.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := geteuid(); int(sys.Uid) != uid {
		return exitcode.Usagef("--token-file %s belongs to user %d, not to the server's user %d; give a token file of your own (chown %d %s)", pathtext.Q(name), sys.Uid, uid, uid, pathtext.Q(name))
	}
	return nil
}
