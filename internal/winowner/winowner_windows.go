package winowner

import (
	"fmt"

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
