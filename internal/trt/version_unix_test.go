//go:build !windows

package trt

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckVersions(t *testing.T) {
	tests := []struct {
		name             string
		compiled, loaded int
		mismatch         bool
		wantErr          []string // fragments the message must hold
	}{
		{name: "same", compiled: 101600, loaded: 101600},
		{name: "newer minor loaded", compiled: 101300, loaded: 101600},
		{name: "older patch loaded", compiled: 110101, loaded: 110100},
		{
			name: "older minor loaded, headers without a table", compiled: 101300, loaded: 100800, mismatch: true,
			wantErr: []string{"loaded libnvinfer 10.8.0 is older than the TensorRT 10.13.0 headers", "install TensorRT 10.13 or newer", "TensorRT 10.8 headers"},
		},
		{
			name: "older minor loaded, below the oldest the headers drive", compiled: 101600, loaded: 100000, mismatch: true,
			wantErr: []string{"loaded libnvinfer 10.0.0 is older than TensorRT 10.", "the oldest the TensorRT 10.16.0 headers trtbuild was compiled against can drive", "; install TensorRT 10."},
		},
		{
			name: "10 headers, 11 library", compiled: 101600, loaded: 110100, mismatch: true,
			wantErr: []string{"compiled against TensorRT 10.16.0", "loaded libnvinfer 11.1.0", "TensorRT 10 libraries first on LD_LIBRARY_PATH", "TensorRT 11 headers"},
		},
		{
			name: "11 headers, 10 library", compiled: 110100, loaded: 101600, mismatch: true,
			wantErr: []string{"compiled against TensorRT 11.1.0", "loaded libnvinfer 10.16.0", "TensorRT 11 libraries first", "TensorRT 10 headers"},
		},
		{
			name: "legacy library", compiled: 101600, loaded: 8601, mismatch: true,
			wantErr: []string{"loaded libnvinfer 8.6.1"},
		},
		{name: "no compiled version", compiled: 0, loaded: 101600, wantErr: []string{"compiled-in TensorRT version"}},
		{name: "no loaded version", compiled: 101600, loaded: -1, wantErr: []string{"loaded TensorRT library version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckVersions(tt.compiled, tt.loaded)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("CheckVersions(%d, %d) = %v, want nil", tt.compiled, tt.loaded, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckVersions(%d, %d) = nil, want an error", tt.compiled, tt.loaded)
			}
			if got := errors.Is(err, ErrVersionMismatch); got != tt.mismatch {
				t.Errorf("errors.Is(err, ErrVersionMismatch) = %v, want %v (err: %v)", got, tt.mismatch, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("message spans several lines: %q", msg)
			}
			for _, frag := range tt.wantErr {
				if !strings.Contains(msg, frag) {
					t.Errorf("message %q lacks %q", msg, frag)
				}
			}
		})
	}
}
