package fserr

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestAdvice(t *testing.T) {
	for _, tc := range adviceCases {
		wrapped := fmt.Errorf("saving: %w", &os.PathError{Op: "write", Path: "x", Err: tc.errno})
		if got := Advice(wrapped, "make its folder writable"); !strings.Contains(got, tc.want) {
			t.Errorf("Advice(%v) = %q, want it to contain %q", tc.errno, got, tc.want)
		}
	}
}

func TestOf(t *testing.T) {
	for _, tc := range classCases {
		if got := Of(fmt.Errorf("x: %w", &os.PathError{Op: "open", Path: "x", Err: tc.errno})); got != tc.want {
			t.Errorf("Of(%d %v) = %d, want %d", uintptr(tc.errno), tc.errno, got, tc.want)
		}
	}
	if Of(fmt.Errorf("no errno")) != Other || Is(nil, Missing) {
		t.Error("an error without an errno, or nil, has a class")
	}
}

type classCase struct {
	errno syscall.Errno
	want  Class
}

type adviceCase struct {
	errno syscall.Errno
	want  string
}
