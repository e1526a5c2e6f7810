package winowner

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Self returns the process token's user SID.
func Self() (*windows.SID, error) {
	tok, err := windows.OpenCurrentProcessToken()
	if err != nil {
		return nil, fmt.Errorf("opening the process token: %w", err)
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("reading the process token's user: %w", err)
	}
	return u.User.Sid.Copy()
}

// IsSelf reports whether owner counts as this user (see the package comment).
func IsSelf(owner *windows.SID) bool {
	if owner == nil {
		return false
	}
	if owner.IsWellKnown(windows.WinLocalSystemSid) {
		return true
	}
	if self, err := Self(); err == nil && owner.Equals(self) {
		return true
	}
	if owner.IsWellKnown(windows.WinBuiltinAdministratorsSid) {
		admins, err := windows.CreateWellKnownSid(windows.WinBuiltinAdministratorsSid)
		if err != nil {
			return false
		}
		// Token 0: the calling thread's effective token, so membership means elevated.
		in, err := windows.Token(0).IsMember(admins)
		return err == nil && in
	}
	return false
}

// OfHandle returns the owner SID of the open file or folder h (opened with READ_CONTROL).
func OfHandle(h windows.Handle) (*windows.SID, error) {
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return nil, fmt.Errorf("reading the owner: %w", err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return nil, fmt.Errorf("reading the owner: %w", err)
	}
	return owner.Copy()
}

// OfPath returns the owner SID of the file at path.
func OfPath(path string) (*windows.SID, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return nil, fmt.Errorf("reading the owner of %s: %w", path, err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return nil, fmt.Errorf("reading the owner of %s: %w", path, err)
	}
	return owner.Copy()
}

// Name names sid for messages: "DOMAIN\user (S-1-5-21-...)", or the SID alone when it has no
// account name.
func Name(sid *windows.SID) string {
	if sid == nil {
		return "no owner"
	}
	account, domain, _, err := sid.LookupAccount("")
	switch {
	case err != nil || account == "":
		return sid.String()
	case domain != "":
		return fmt.Sprintf("%s\\%s (%s)", domain, account, sid)
	}
	return fmt.Sprintf("%s (%s)", account, sid)
}

// ErrNoAccessList is Others' error for a file or folder without an access list: everyone may
// do everything with it.
var ErrNoAccessList = errors.New("it has no access list: everyone may read and write it")

// Others names the accounts that the access list of sd (read with DACL_SECURITY_INFORMATION)
// allows any of the rights in mask, other than this user, LocalSystem, Administrators and the
// owner (CREATOR OWNER): those with whom the file or folder is shared. A nil access list,
// which allows everyone everything, is ErrNoAccessList.
func Others(sd *windows.SECURITY_DESCRIPTOR, mask windows.ACCESS_MASK) ([]string, error) {
	dacl, _, err := sd.DACL()
	if err != nil {
		return nil, fmt.Errorf("reading the access list: %w", err)
	}
	if dacl == nil {
		return nil, ErrNoAccessList
	}
	user, err := Self()
	if err != nil {
		return nil, err
	}
	trusted := []*windows.SID{user}
	for _, k := range []windows.WELL_KNOWN_SID_TYPE{windows.WinLocalSystemSid, windows.WinBuiltinAdministratorsSid, windows.WinCreatorOwnerSid} {
		if sid, err := windows.CreateWellKnownSid(k); err == nil {
			trusted = append(trusted, sid)
		}
	}
	var others []string
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return nil, fmt.Errorf("reading the access list: %w", err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0 || ace.Mask&mask == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if !slices.ContainsFunc(trusted, sid.Equals) {
			others = append(others, Name(sid))
		}
	}
	return others, nil
}
