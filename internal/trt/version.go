// Package trt holds what trtbuild knows about TensorRT that needs neither the library nor a
// GPU: version numbers and the guard between the headers trtbuild was compiled against and
// the library it loaded, the precision plan of each TensorRT major version, and hints for
// known build errors. It has no cgo, so its rules are tested on every machine.
package trt

import (
	"errors"
	"fmt"
)

// Version is a TensorRT release number.
type Version struct {
	Major, Minor, Patch int
}

// ErrVersionMismatch is wrapped by CheckVersions when the TensorRT library loaded at run time
// is of another major version than the headers trtbuild was compiled against.
var ErrVersionMismatch = errors.New("TensorRT version mismatch")

// legacyBoundary separates the two integer encodings TensorRT has used: up to 8.x
// NV_TENSORRT_VERSION was major*1000+minor*100+patch (8.6.1 is 8601); from 10.0 on it is
// major*10000+minor*100+patch (10.16.0 is 101600).
const legacyBoundary = 10000

// FromInt decodes an integer in the form of NV_TENSORRT_VERSION and getInferLibVersion():
// major*10000+minor*100+patch, or the major*1000+minor*100+patch form of TensorRT 8 and
// older, which a value below 10000 must be.
func FromInt(v int) (Version, error) {
	switch {
	case v <= 0:
		return Version{}, fmt.Errorf("TensorRT version %d: not a version number", v)
	case v < 1000:
		return Version{}, fmt.Errorf("TensorRT version %d: too small to hold a major version", v)
	case v < legacyBoundary:
		return Version{Major: v / 1000, Minor: v / 100 % 10, Patch: v % 100}, nil
	default:
		return Version{Major: v / 10000, Minor: v / 100 % 100, Patch: v % 100}, nil
	}
}

// String formats v as "major.minor.patch".
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// The messages of CheckVersions are majorMismatchFormat and olderLibraryFormat, in the OS's
// words (libnames_unix.go, libnames_windows.go). internal/cgo/shim/tensorrt_common.cpp builds the
// same text for the same cases (version_test.go checks that it still does).

// CheckVersions compares the TensorRT version trtbuild was compiled against with the one the
// loaded library reports, both as NV_TENSORRT_VERSION integers. It returns an error wrapping
// ErrVersionMismatch, one line naming both versions and the fix, when
//
//   - the major versions differ: the C++ interfaces trtbuild implements change layout between
//     majors and enum values were renumbered in 11.0, so such a pair must never build; or
//   - the library is an older minor release than the headers: TensorRT keeps a minor release
//     compatible with applications built for older ones, not newer ones, and calls added in the
//     newer headers (such as buildSerializedNetworkToStream in 10.13) do not exist in it.
//
// A newer minor release, or any patch release, is accepted. The TensorRT shim in internal/cgo
// applies the same rule with the same messages.
func CheckVersions(compiled, loaded int) error {
	c, err := FromInt(compiled)
	if err != nil {
		return fmt.Errorf("compiled-in TensorRT version: %w", err)
	}
	l, err := FromInt(loaded)
	if err != nil {
		return fmt.Errorf("loaded TensorRT library version: %w", err)
	}
	switch {
	case c.Major != l.Major:
		return fmt.Errorf(majorMismatchFormat, ErrVersionMismatch, c, l, c.Major, l.Major)
	case l.Minor < c.Minor:
		return fmt.Errorf(olderLibraryFormat, ErrVersionMismatch, l, c, c.Major, c.Minor, l.Major, l.Minor)
	}
	return nil
}
