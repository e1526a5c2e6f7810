package service

import (
	"os"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/winetest"
	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winowner"
)

// setDACL gives dir exactly the access list sddl describes, with no inherited entries.
func setDACL(t *testing.T, dir, sddl string) {
	t.Helper()
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Skipf("cannot set the folder's access list (SetNamedSecurityInfo: %v)", err)
	}
	got, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{";AU)", ";WD)"} {
		if strings.Contains(sddl, sid) && !strings.Contains(got.String(), sid) && winetest.Wine() {
			// Wine keeps a file's access list as its Unix mode bits where the file system has
			// no extended attributes for it: an entry for Authenticated Users has no mode bit.
			t.Skipf("Wine 8 did not keep the access list %s (GetNamedSecurityInfo gave %s): it maps it to Unix mode bits", sddl, got)
		}
	}
}

func TestStateDirMustBePrivate(t *testing.T) {
	user, err := winowner.Self()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sddl, want string
	}{
		{"this user only", "D:P(A;OICI;FA;;;" + user.String() + ")", ""},
		{"this user, SYSTEM and Administrators", "D:P(A;OICI;FA;;;" + user.String() + ")(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)", ""},
		{"others may read", "D:P(A;OICI;FA;;;" + user.String() + ")(A;OICI;FR;;;WD)", ""},
		{"authenticated users may modify", "D:P(A;OICI;FA;;;" + user.String() + ")(A;OICI;0x1301bf;;;AU)", "can be written by others"},
		{"everyone full control", "D:P(A;OICI;FA;;;" + user.String() + ")(A;OICI;FA;;;WD)", "can be written by others"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := winetest.TempDir(t)
			setDACL(t, dir, tt.sddl)
			fi, err := os.Lstat(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = checkPrivate(dir, fi)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("checkPrivate: %v, want the folder accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("checkPrivate: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
