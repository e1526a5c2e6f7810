package trt

// Test-only API of package trt: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a dotted version such as "10.16", "10.16.0" or "11.1.0.106" (a fourth, build
// number is accepted and dropped).
func Parse(s string) (Version, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 || len(parts) > 4 {
		return Version{}, fmt.Errorf("TensorRT version %q: want major.minor[.patch[.build]]", s)
	}
	var nums [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Version{}, fmt.Errorf("TensorRT version %q: %q is not a number", s, p)
		}
		if i < 3 {
			nums[i] = n
		}
	}
	if nums[0] == 0 || nums[0] > 9999 {
		return Version{}, fmt.Errorf("TensorRT version %q: major version must be 1 to 9999", s)
	}
	if nums[1] > 99 || nums[2] > 99 {
		return Version{}, fmt.Errorf("TensorRT version %q: minor and patch must be below 100", s)
	}
	return Version{Major: nums[0], Minor: nums[1], Patch: nums[2]}, nil
}

// Int encodes v as major*10000+minor*100+patch, the form of TensorRT 10 and newer.
func (v Version) Int() int {
	return v.Major*10000 + v.Minor*100 + v.Patch
}
