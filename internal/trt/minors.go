package trt

//go:generate go run ./apiminors/gen -tensorrt=$TENSORRT_GIT -onnx-tensorrt=$ONNX_TENSORRT_GIT -headers=v10.16,v11.1 -o apiminors_gen.go

import (
	"fmt"
	"slices"
)

// OlderMinors is what the headers of every release of one TensorRT major say about driving
// its older minor releases with the TensorRT backend compiled against the headers of the
// major's HeaderTag (the vendored headers). TensorRT's classes call through pointers to
// implementation classes whose vtables are the ABI, so a library of an older minor can be
// driven when every class the backend reaches is laid out there as the start of the
// headers' layout and what a build calls exists at the same place. The tables are generated
// (apiminors_gen.go, by internal/trt/apiminors/gen) and read by CheckVersions and CheckFlags.
type OlderMinors struct {
	Major       int
	HeaderTag   string // the tag of the headers ("v10.16")
	HeaderMinor int
	Tags        string // the release tags read, oldest first
	// Oldest is the oldest minor the backend drives: older ones are refused, Why says why.
	Oldest int
	Why    string
	// Flags are the build options that need a newer minor than Oldest.
	Flags []FlagMinor
	// Members are what the backend calls, passes, or implements for TensorRT to call.
	Members []APIMember
	// Classes are the classes a call goes through, with the minor from which every release
	// lays them out as the headers do at their start.
	Classes []APIClass
}

// FlagMinor is a build option whose calls exist only from Minor on (Because names one).
type FlagMinor struct {
	Flag    string
	Minor   int
	Because string
}

// APIMember is one member function the backend calls ("IBuilderConfig::setBuildRoute"), one
// object it deletes ("delete IBuilder"), one interface it implements ("ILogger") or one
// enumerator it uses ("BuilderFlag::kREFIT").
type APIMember struct {
	Name string
	ABI  string // where the headers put it: the class and vtable slot, or the value
	// Added is the first minor that declares it; Since the first from which every release has
	// it where the headers do, through classes laid out alike: the oldest it can be used with.
	Added, Since int
	Why          string   // why not Since-1
	Flags        []string // the options that make the backend use it; none: every build
}

// APIClass is one class a call of the backend goes through.
type APIClass struct {
	Name        string
	Slots       int // virtual functions in the headers (the destructor counts once)
	StableSince int
	Why         string // why not StableSince-1
}

// OlderMinorsFor returns the table of the headers compiled (an NV_TENSORRT_VERSION integer),
// if the backend was compiled against headers of the major and minor a table was generated
// from; headers of any other release drive no older minor.
func OlderMinorsFor(compiled int) (OlderMinors, bool) {
	c, err := FromInt(compiled)
	if err != nil {
		return OlderMinors{}, false
	}
	return olderMinorsFor(c)
}

func olderMinorsFor(compiled Version) (OlderMinors, bool) {
	for _, t := range olderMinors {
		if t.Major == compiled.Major && t.HeaderMinor == compiled.Minor {
			return t, true
		}
	}
	return OlderMinors{}, false
}

// CheckFlags refuses a build on the loaded library when one of its options needs a newer minor
// than the library's: inUse tells whether the build uses an option, named as FlagsNeedingMinors
// names them. It returns nil when the library is not older than the headers compiled (both
// NV_TENSORRT_VERSION integers), and for options no table names; the versions themselves are
// CheckVersions' to judge.
func CheckFlags(compiled, loaded int, inUse func(flag string) bool) error {
	c, err := FromInt(compiled)
	if err != nil {
		return nil
	}
	l, err := FromInt(loaded)
	if err != nil || l.Major != c.Major || l.Minor >= c.Minor {
		return nil
	}
	t, ok := olderMinorsFor(c)
	if !ok {
		return nil
	}
	for _, f := range t.Flags {
		if l.Minor < f.Minor && inUse(f.Flag) {
			return fmt.Errorf("%s needs TensorRT %d.%d or newer; this is %s", f.Flag, c.Major, f.Minor, l)
		}
	}
	return nil
}

// FlagsNeedingMinors lists every build option some table says needs a newer minor than its
// Oldest, sorted: the options a caller of CheckFlags must be able to tell are in use.
func FlagsNeedingMinors() []string {
	var out []string
	for _, t := range olderMinors {
		for _, f := range t.Flags {
			if !slices.Contains(out, f.Flag) {
				out = append(out, f.Flag)
			}
		}
	}
	slices.Sort(out)
	return out
}
