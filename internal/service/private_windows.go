package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winowner"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// openOwnFlags: Windows has no O_NOFOLLOW and no FIFOs in folders. openOwn's Lstat refuses a
// link (a symbolic link or junction is no regular file), and its os.SameFile check refuses a
// file replaced by one between the Lstat and the open.
const openOwnFlags = 0

// writeAccess are the rights that let a user add, change or delete files in a folder, or take
// it over.
const writeAccess = windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA | windows.FILE_WRITE_EA |
	fileDeleteChild | windows.FILE_WRITE_ATTRIBUTES | windows.DELETE |
	windows.WRITE_DAC | windows.WRITE_OWNER | windows.GENERIC_WRITE | windows.GENERIC_ALL

// fileDeleteChild is FILE_DELETE_CHILD: the right to delete any file in a folder.
const fileDeleteChild = 0x40

// checkPrivate refuses a state dir that another user owns or can write to. On Windows that is
// its owner (this user, SYSTEM, or the Administrators group for an elevated user, who owns
// what it makes: winowner.IsSelf) and its DACL: an allowing entry that gives write access to anyone but this user,
// SYSTEM, Administrators or the owner (CREATOR OWNER) makes it shared. A folder made under
// %LOCALAPPDATA% or the user's profile is private; one made under C:\ inherits "Authenticated
// Users: Modify" and is refused.
func checkPrivate(abs string, _ os.FileInfo) error {
	sd, err := windows.GetNamedSecurityInfo(abs, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("state dir %s: reading its owner and permissions: %w", pathtext.Q(abs), err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("state dir %s: reading its owner: %w", pathtext.Q(abs), err)
	}
	if !winowner.IsSelf(owner) {
		user, _ := winowner.Self()
		return fmt.Errorf("state dir %s belongs to %s, not to this user (%s); give a folder of your own", pathtext.Q(abs), winowner.Name(owner), winowner.Name(user))
	}
	others, err := winowner.Others(sd, writeAccess)
	if errors.Is(err, winowner.ErrNoAccessList) {
		return fmt.Errorf("state dir %s has no access list: everyone can write to it; give a private folder (under %%LOCALAPPDATA%%)", pathtext.Q(abs))
	}
	if err != nil {
		return fmt.Errorf("state dir %s: %w", pathtext.Q(abs), err)
	}
	if len(others) > 0 {
		return fmt.Errorf("state dir %s can be written by others (%s); remove their access (icacls %s /inheritance:r /grant:r %%USERNAME%%:F), or give a private folder (under %%LOCALAPPDATA%%)", pathtext.Q(abs), strings.Join(others, ", "), pathtext.Q(abs))
	}
	return nil
}

// checkOwnFolder refuses the folder rel of the state dir when another user owns it
// (*ForeignFolderError), as checkPrivate reads an owner: this user, SYSTEM, or Administrators
// for an elevated user.
func (m *Manager) checkOwnFolder(rel string) error {
	abs := filepath.Join(m.cfg.StateDir, rel)
	sd, err := windows.GetNamedSecurityInfo(abs, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("%s: reading its owner: %w", pathtext.Q(abs), err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("%s: reading its owner: %w", pathtext.Q(abs), err)
	}
	if !winowner.IsSelf(owner) {
		return &ForeignFolderError{Path: abs, Owner: winowner.Name(owner)}
	}
	return nil
}

// checkAbove is the Unix rule for the folders and links on the state dir's path; on Windows
// what another user may do there is the folders' access lists', which are not read yet: a
// state dir under the user's profile (the default, %LOCALAPPDATA%) is private by its parents'
// lists.
func checkAbove(string) error { return nil }

// resolveAbove is abs (see checkAbove).
func resolveAbove(abs string) (string, error) { return abs, nil }

// checkOwnDir is the Unix rule for a folder the server keeps files in besides the state dir;
// on Windows its access list is not read yet (see checkAbove).
func checkOwnDir(string, string) error { return nil }

// mkdirNoFollow makes the folder abs and those missing above it (on Windows by os.MkdirAll; see
// checkAbove).
func mkdirNoFollow(abs string) error { return os.MkdirAll(abs, 0o700) }

// checkOwnedFolder is the Unix rule for the engine cache folder (see checkAbove).
func checkOwnedFolder(string, string) error { return nil }
