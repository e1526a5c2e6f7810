package history

import "testing"

// TestFileURI: SQLite's URI of a database path, for a Linux path and for the Windows
// spellings (the function is one of strings: '\' is a separator only on Windows).
func TestFileURI(t *testing.T) {
	tests := []struct{ abs, want string }{
		{"/var/lib/trtbuild/history.db", "file:///var/lib/trtbuild/history.db"},
		{"/tmp/a b/h%.db", "file:///tmp/a%20b/h%25.db"},
		{"/tmp/q?x#y.db", "file:///tmp/q%3Fx%23y.db"},
	}
	if windowsPaths {
		tests = append(tests,
			struct{ abs, want string }{`C:\Users\me\AppData\history.db`, "file:///C:/Users/me/AppData/history.db"},
			struct{ abs, want string }{`\\server\share\history.db`, "file:////server/share/history.db"},
		)
	}
	for _, tc := range tests {
		if got := fileURI(tc.abs); got != tc.want {
			t.Errorf("fileURI(%q) = %q, want %q", tc.abs, got, tc.want)
		}
	}
}
