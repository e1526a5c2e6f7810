package serve

import (
	"os"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/winowner"
)

// checkTokenOwner refuses a token file (name, opened as f) whose owner is not this user
// (winowner.IsSelf: the user's SID, or Administrators for an elevated server): its owner could
// change the token, or read it whatever its access list says.
func checkTokenOwner(name string, f *os.File, _ os.FileInfo) error {
	owner, err := winowner.OfHandle(windows.Handle(f.Fd()))
	if err != nil {
		return exitcode.Usagef("--token-file %s: %v; give a token file of your own", pathtext.Q(name), err)
	}
	if !winowner.IsSelf(owner) {
		self, _ := winowner.Self()
		return exitcode.Usagef("--token-file %s belongs to %s, not to the server's user %s; give a token file of your own", pathtext.Q(name), winowner.Name(owner), winowner.Name(self))
	}
	return nil
}
