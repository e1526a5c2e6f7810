package goldenfile

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

func TestCheck(t *testing.T) {
	if Updating() {
		t.Skip("-update rewrites instead of comparing")
	}
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		path     string
		got      string
		wantFail bool
	}{
		{"equal", path, "same\n", false},
		{"different", path, "other\n", true},
		{"missing golden", path + ".missing", "same\n", true},
	} {
		r := &recorder{TB: t}
		Check(r, tt.path, []byte(tt.got))
		if r.failed != tt.wantFail {
			t.Errorf("%s: failed = %v, want %v", tt.name, r.failed, tt.wantFail)
		}
	}
}
