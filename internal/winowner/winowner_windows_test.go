package winowner

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

func TestOwnFileIsSelf(t *testing.T) {
	p := filepath.Join(winetest.TempDir(t), "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	owner, err := OfPath(p)
	if err != nil {
		t.Fatal(err)
	}
	if !IsSelf(owner) {
		self, _ := Self()
		t.Fatalf("a file this process made is owned by %s, not counted as this user (%s)", Name(owner), Name(self))
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if h, err := OfHandle(windows.Handle(f.Fd())); err != nil || !h.Equals(owner) {
		t.Fatalf("OfHandle = %v, %v; want %s", h, err, owner)
	}
}

func TestOtherOwnersAreNotSelf(t *testing.T) {
	for _, tc := range []struct {
		name string
		sid  windows.WELL_KNOWN_SID_TYPE
	}{
		{"Everyone", windows.WinWorldSid},
		{"BUILTIN\\Users", windows.WinBuiltinUsersSid},
		{"Guests", windows.WinBuiltinGuestsSid},
	} {
		sid, err := windows.CreateWellKnownSid(tc.sid)
		if err != nil {
			t.Fatal(err)
		}
		if IsSelf(sid) {
			t.Errorf("%s counts as this user", tc.name)
		}
	}
	if IsSelf(nil) {
		t.Error("no owner counts as this user")
	}
	system, _ := windows.CreateWellKnownSid(windows.WinLocalSystemSid)
	if !IsSelf(system) {
		t.Error("LocalSystem is not trusted")
	}
}
