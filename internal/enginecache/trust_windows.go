package enginecache

import (
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winowner"
)

// groupSupported refuses "group": Windows has no POSIX group of a folder to share a cache by.
func groupSupported() error {
	return errors.New(`--engine-cache-trust group needs POSIX groups, which Windows does not have; name the users to trust (user names or SIDs), separated by commas`)
}

// addUser adds a user name ("alice", "DOMAIN\alice") or SID ("S-1-5-21-...") to t.SIDs.
func (t *Trust) addUser(item string) error {
	if strings.HasPrefix(strings.ToUpper(item), "S-1-") {
		sid, err := windows.StringToSid(item)
		if err != nil {
			return fmt.Errorf("%q is not a valid SID; give self, user names or SIDs, separated by commas", item)
		}
		t.SIDs = append(t.SIDs, sid.String())
		return nil
	}
	u, err := user.Lookup(item)
	if err != nil {
		return fmt.Errorf("unknown user %q; give self, user names or SIDs, separated by commas", item)
	}
	t.SIDs = append(t.SIDs, u.Uid) // os/user gives the SID as Uid on Windows
	return nil
}

// trustCheck decides whether files of a cache may be believed.
type trustCheck struct {
	Trust
}

// newTrustCheck checks the cache folder for t; Group cannot be set on Windows (ParseTrust
// refuses it).
func newTrustCheck(t Trust, _ string, _ *attr) (*trustCheck, error) {
	if t.Group {
		return nil, groupSupported()
	}
	return &trustCheck{Trust: t}, nil
}

// listed reports whether sid is one of the trusted users given.
func (t *trustCheck) listed(sid *windows.SID) bool {
	return sid != nil && slices.Contains(t.SIDs, sid.String())
}

// writerTrusted reports whether an ACL may grant sid write access: the trusted owners, the
// owner of the file itself (OWNER RIGHTS), and those who can write anything anyway (SYSTEM,
// Administrators).
func (t *trustCheck) writerTrusted(sid *windows.SID) bool {
	return winowner.IsSelf(sid) || t.listed(sid) ||
		sid.IsWellKnown(windows.WinLocalSystemSid) || sid.IsWellKnown(windows.WinBuiltinAdministratorsSid) ||
		sid.IsWellKnown(windows.WinCreatorOwnerRightsSid)
}

// writeAccess is the access that lets a holder change or replace a file or what a folder holds.
const writeAccess = windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA | 0x40 /* FILE_DELETE_CHILD */ |
	windows.DELETE | windows.WRITE_DAC | windows.WRITE_OWNER | windows.GENERIC_WRITE | windows.GENERIC_ALL

// why returns "" when st (a file or folder of an entry) may be believed, else why not: its
// owner must be this user (internal/winowner's rule) or a listed user, and no allow entry of
// its ACL may grant write access to anyone else.
func (t *trustCheck) why(st *attr) string {
	if st.sd == nil || st.owner == nil {
		return "its owner and ACL cannot be read"
	}
	if !winowner.IsSelf(st.owner) && !t.listed(st.owner) {
		return fmt.Sprintf("it is owned by %s, whom this cache does not trust (see --engine-cache-trust)", winowner.Name(st.owner))
	}
	dacl, _, err := st.sd.DACL()
	if err != nil || dacl == nil {
		return "it is writable by every user (it has no ACL)"
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if windows.GetAce(dacl, i, &ace) != nil {
			return "its ACL cannot be read"
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0 || ace.Mask&writeAccess == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if !t.writerTrusted(sid) {
			return fmt.Sprintf("it is writable by %s (its ACL grants write access); remove that entry from its ACL, or trust the user with --engine-cache-trust", winowner.Name(sid))
		}
	}
	return ""
}
