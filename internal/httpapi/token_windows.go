package httpapi

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/winowner"
)

// tokenAccess are the rights that let a user read the token or change it.
const tokenAccess = windows.FILE_READ_DATA | windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA |
	windows.GENERIC_READ | windows.GENERIC_WRITE | windows.GENERIC_ALL | windows.WRITE_DAC | windows.WRITE_OWNER

// checkTokenPrivate refuses a token file (name, opened as f) whose owner is not this user
// (winowner.IsSelf: the user's SID, or Administrators for an elevated server): its owner could
// change the token, or read it whatever its access list says; or whose access list lets
// another account read or change it (Windows' mode bits say only whether it is read-only).
func checkTokenPrivate(name string, f *os.File, _ os.FileInfo) error {
	owner, err := winowner.OfHandle(windows.Handle(f.Fd()))
	if err != nil {
		return exitcode.Usagef("--token-file %s: %v", pathtext.Q(name), err).Hintf("give a token file of your own")
	}
	if !winowner.IsSelf(owner) {
		self, _ := winowner.Self()
		return exitcode.Usagef("--token-file %s belongs to %s, not to the server's user %s", pathtext.Q(name), winowner.Name(owner), winowner.Name(self)).Hintf("give a token file of your own")
	}
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return exitcode.Usagef("--token-file %s: reading its access list: %v", pathtext.Q(name), err)
	}
	others, err := winowner.Others(sd, tokenAccess)
	if errors.Is(err, winowner.ErrNoAccessList) {
		others, err = []string{"Everyone"}, nil
	}
	if err != nil {
		return exitcode.Usagef("--token-file %s: %v", pathtext.Q(name), err)
	}
	if len(others) > 0 {
		return exitcode.Usagef("--token-file %s may be read or changed by %s", pathtext.Q(name), strings.Join(others, ", ")).Hintf("make it yours alone: icacls %s /inheritance:r /grant:r %%USERNAME%%:F", pathtext.Q(name))
	}
	return nil
}
