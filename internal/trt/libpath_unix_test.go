//go:build !windows

package trt

import (
	"slices"
	"testing"
)

func TestAbsoluteLibraryPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"LD_LIBRARY_PATH=/opt/trt/lib:/usr/local/cuda/lib64", "LD_LIBRARY_PATH=/opt/trt/lib:/usr/local/cuda/lib64"},
		{"LD_LIBRARY_PATH=:/usr/local/cuda/lib64", "LD_LIBRARY_PATH=/srv/app/build:/usr/local/cuda/lib64"},
		{"LD_LIBRARY_PATH=/opt/trt/lib:", "LD_LIBRARY_PATH=/opt/trt/lib:/srv/app/build"},
		{"LD_LIBRARY_PATH=/a::/b", "LD_LIBRARY_PATH=/a:/srv/app/build:/b"},
		{"LD_LIBRARY_PATH=lib;../cuda/lib64", "LD_LIBRARY_PATH=/srv/app/build/lib;/srv/app/cuda/lib64"},
		{"LD_LIBRARY_PATH=.", "LD_LIBRARY_PATH=/srv/app/build"},
		{"LD_LIBRARY_PATH=", "LD_LIBRARY_PATH="}, // glibc ignores it whole
		{"PATH=:bin", "PATH=:bin"},
	} {
		env := []string{"HOME=/home/u", tc.in}
		got := AbsoluteLibraryPath(env, "/srv/app/build")
		if want := []string{"HOME=/home/u", tc.want}; !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", tc.in, got, want)
		}
		if env[1] != tc.in {
			t.Errorf("%q: the caller's env was modified", tc.in)
		}
	}
}
