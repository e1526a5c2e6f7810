// Package trt holds what trtbuild knows about TensorRT that needs neither the library nor a
// GPU: version numbers and the guard between the headers trtbuild was compiled against and
// the library it loaded, with the table of the older minors those headers drive and the
// options that need newer ones (minors.go, apiminors_gen.go), the precision plan of each
// TensorRT major version, and hints for known build errors. It has no cgo, so its rules are
// tested on every machine.
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

// The messages of CheckVersions are majorMismatchFormat, belowOldestFormat and
// olderLibraryFormat, in the OS's words (libnames_unix.go, libnames_windows.go).
// internal/cgo/shim/tensorrt_common.cpp builds the first for the same case (version_test.go
// checks that it still does); the minor is this package's alone to judge.

// CheckVersions compares the TensorRT version trtbuild was compiled against with the one the
// loaded library reports, both as NV_TENSORRT_VERSION integers. It returns an error wrapping
// ErrVersionMismatch, one line naming both versions and the fix, when
//
//   - the major versions differ: the C++ interfaces trtbuild implements change layout between
//     majors and enum values were renumbered in 11.0, so such a pair must never build; or
//   - the library is an older minor release than the headers and older than the oldest minor
//     those headers can drive: the table of older minors (OlderMinors, apiminors_gen.go) says
//     from which minor on every class the backend calls through is laid out as in the headers
//     and everything a build calls exists, and why not before. Headers no table was generated
//     from drive no older minor.
//
// A newer minor release, any patch release, and an older minor from the table's oldest on
// are accepted; the options a build on an older minor cannot use are CheckFlags' to refuse.
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
	case l.Minor >= c.Minor:
		return nil
	}
	t, ok := olderMinorsFor(c)
	switch {
	case !ok:
		return fmt.Errorf(olderLibraryFormat, ErrVersionMismatch, l, c, c.Major, c.Minor, l.Major, l.Minor)
	case l.Minor < t.Oldest:
		return fmt.Errorf(belowOldestFormat, ErrVersionMismatch, l, c.Major, t.Oldest, c, t.Why, c.Major, t.Oldest)
	}
	return nil
}
