package httpapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winetest"
	"github.com/trtbuild/trtbuild/internal/winowner"
)

// TestTokenFileAccessList: on Windows a token file is private by its access list (its mode
// bits say only whether it is read-only): one that only this user, SYSTEM and Administrators
// may use is read; one that others may read or change is refused in one line.
func TestTokenFileAccessList(t *testing.T) {
	user, err := winowner.Self()
	if err != nil {
		t.Fatal(err)
	}
	self := "(A;;FA;;;" + user.String() + ")"
	for _, tt := range []struct{ name, sddl, want string }{
		{"this user only", "D:P" + self, ""},
		{"this user, SYSTEM and Administrators", "D:P" + self + "(A;;FA;;;SY)(A;;FA;;;BA)", ""},
		{"everyone may read", "D:P" + self + "(A;;FR;;;WD)", "may be read or changed by"},
		{"everyone full control", "D:P" + self + "(A;;FA;;;WD)", "may be read or changed by"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(winetest.TempDir(t), "token")
			if err := os.WriteFile(path, []byte("4f9c2e71a8d35b60c1e7f2a9d48b3c05\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			sd, err := windows.SecurityDescriptorFromString(tt.sddl)
			if err != nil {
				t.Fatal(err)
			}
			dacl, _, err := sd.DACL()
			if err != nil {
				t.Fatal(err)
			}
			if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
				t.Skipf("cannot set the file's access list (SetNamedSecurityInfo: %v)", err)
			}
			if got, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION); err == nil &&
				strings.Contains(tt.sddl, ";WD)") != strings.Contains(got.String(), ";WD)") && winetest.Wine() {
				// Wine keeps a file's access list as its Unix mode bits: a file it made 0644
				// stays readable by Everyone whatever access list is set.
				t.Skipf("Wine did not keep the access list %s (it gave %s): it maps it to Unix mode bits", tt.sddl, got)
			}
			tok, err := readTokenFile(path)
			switch {
			case tt.want == "" && (err != nil || tok != "4f9c2e71a8d35b60c1e7f2a9d48b3c05"):
				t.Fatalf("readTokenFile: %q, %v; want the token", tok, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("readTokenFile: %v; want one line with %q", err, tt.want)
			}
		})
	}
}
