//go:build !windows

package outpath

import (
	"io/fs"
	"os"
	"syscall"
)

// discardDevice is the device that discards what is written to it, for messages.
const discardDevice = "/dev/null"

// inspectSpecial is Inspect's first look at path for names the system gives a meaning of its
// own; none on Linux, where every path is looked up in the file system.
func inspectSpecial(string) (Target, bool, error) { return Target{}, false, nil }

// statFolder says what the folder dir is, for the check Create makes that it is still that
// folder.
func statFolder(dir string) (fs.FileInfo, error) { return os.Stat(dir) }

// platformRefusal is the refusal of the system's own rules: the sticky bit's on Linux.
func (t Target) platformRefusal() string { return t.stickyRefusal() }

// stickyRefusal refuses a file of another user in a folder with the sticky bit (/tmp, a
// shared 1777 folder) that this user does not own: rename(2) could not replace it, and the
// build would fail only at its end.
func (t Target) stickyRefusal() string {
	if t.Info == nil || t.dirInfo == nil || os.Geteuid() == 0 || t.dirInfo.Mode()&fs.ModeSticky == 0 {
		return ""
	}
	fst, ok1 := t.Info.Sys().(*syscall.Stat_t)
	dst, ok2 := t.dirInfo.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 || int(fst.Uid) == os.Geteuid() || int(dst.Uid) == os.Geteuid() {
		return ""
	}
	return "is another user's file in a folder with the sticky bit (as /tmp); trtbuild cannot replace it: choose another path"
}
