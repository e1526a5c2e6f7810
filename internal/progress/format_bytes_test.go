package progress

import "testing"

// TestFormatBytes: the one byte-size format of trtbuild's output (progress, reports, inspect,
// convert, the matrix index).
func TestFormatBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {85725, "83.7 KiB"}, {1600, "1.6 KiB"},
		{1 << 30, "1.0 GiB"}, {1<<63 - 1, "8.0 EiB"},
	}
	for _, tt := range tests {
		if got := FormatBytes(tt.n); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
