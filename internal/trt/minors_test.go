package trt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// withTables replaces the generated tables for one test.
func withTables(t *testing.T, tables ...OlderMinors) {
	t.Helper()
	saved := olderMinors
	olderMinors = tables
	t.Cleanup(func() { olderMinors = saved })
}

// tables10and11 are small tables of the shape the generator writes: 10.16's headers drive 10.14
// on (a parser header unknown before), 11.1's drive 11.0 but --set-build-route needs 11.1.
var tables10and11 = []OlderMinors{
	{Major: 10, HeaderTag: "v10.16", HeaderMinor: 16, Oldest: 14, Why: "IParser::parseFromFile in v10.13.3: its NvOnnxParser.h could not be read, so what it declares there is unchecked"},
	{Major: 11, HeaderTag: "v11.1", HeaderMinor: 1, Oldest: 0,
		Flags: []FlagMinor{{Flag: "--set-build-route", Minor: 1, Because: "IBuilderConfig::setBuildRoute"}}},
}

func TestCheckVersionsOlderMinors(t *testing.T) {
	withTables(t, tables10and11...)
	tests := []struct {
		compiled, loaded int
		wantErr          []string // fragments; none: accepted
	}{
		{compiled: 101600, loaded: 101601},
		{compiled: 101600, loaded: 101701},
		{compiled: 101600, loaded: 101500},
		{compiled: 101600, loaded: 101400},
		{compiled: 101601, loaded: 101400}, // the patch of the headers does not matter
		{compiled: 101600, loaded: 101303, wantErr: []string{" 10.13.3 is older than TensorRT 10.14, the oldest the TensorRT 10.16.0 headers trtbuild was compiled against can drive (IParser::parseFromFile in v10.13.3: its NvOnnxParser.h could not be read, so what it declares there is unchecked); install TensorRT 10.14 or newer"}},
		{compiled: 101600, loaded: 100000, wantErr: []string{" 10.0.0 is older than TensorRT 10.14"}},
		{compiled: 110100, loaded: 110000},
		{compiled: 110100, loaded: 101600, wantErr: []string{"compiled against TensorRT 11.1.0"}},
		// Headers no table was made from drive only their own minor and newer.
		{compiled: 101500, loaded: 101400, wantErr: []string{" 10.14.0 is older than the TensorRT 10.15.0 headers", "install TensorRT 10.15 or newer"}},
		{compiled: 110200, loaded: 110100, wantErr: []string{" 11.1.0 is older than the TensorRT 11.2.0 headers"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d", tt.compiled, tt.loaded), func(t *testing.T) {
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
			if !errors.Is(err, ErrVersionMismatch) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line wrapping ErrVersionMismatch", err)
			}
			for _, frag := range tt.wantErr {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("error %q lacks %q", err, frag)
				}
			}
		})
	}
}

func TestCheckFlags(t *testing.T) {
	withTables(t, tables10and11...)
	route := func(flag string) bool { return flag == "--set-build-route" }
	none := func(string) bool { return false }
	tests := []struct {
		compiled, loaded int
		inUse            func(string) bool
		want             string
	}{
		{compiled: 110100, loaded: 110000, inUse: route, want: "--set-build-route needs TensorRT 11.1 or newer; this is 11.0.0"},
		{compiled: 110100, loaded: 110003, inUse: route, want: "--set-build-route needs TensorRT 11.1 or newer; this is 11.0.3"},
		{compiled: 110100, loaded: 110000, inUse: none},
		{compiled: 110100, loaded: 110100, inUse: route},
		{compiled: 110100, loaded: 110200, inUse: route},
		{compiled: 110200, loaded: 110000, inUse: route}, // no table for 11.2's headers: CheckVersions refuses
		{compiled: 101600, loaded: 101400, inUse: route},
		{compiled: 110100, loaded: 101600, inUse: route}, // another major: CheckVersions refuses
		{compiled: 0, loaded: 110000, inUse: route},
	}
	for _, tt := range tests {
		err := CheckFlags(tt.compiled, tt.loaded, tt.inUse)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckFlags(%d, %d) = %q, want %q", tt.compiled, tt.loaded, got, tt.want)
		}
	}
	if got := FlagsNeedingMinors(); !slices.Equal(got, []string{"--set-build-route"}) {
		t.Errorf("FlagsNeedingMinors() = %q, want [--set-build-route]", got)
	}
}

// TestOlderMinorsTable holds the generated tables to what they claim: the oldest minor is the
// newest Since of what every build uses, each flag's minor the newest Since of its members,
// and nothing is usable before it is declared.
func TestOlderMinorsTable(t *testing.T) {
	if len(olderMinors) == 0 {
		t.Fatal("no tables generated")
	}
	for _, tab := range olderMinors {
		t.Run(tab.HeaderTag, func(t *testing.T) {
			m := regexp.MustCompile(`^v(\d+)\.(\d+)`).FindStringSubmatch(tab.HeaderTag)
			if m == nil || m[1] != strconv.Itoa(tab.Major) || m[2] != strconv.Itoa(tab.HeaderMinor) {
				t.Errorf("HeaderTag %s does not match major %d, minor %d", tab.HeaderTag, tab.Major, tab.HeaderMinor)
			}
			if !strings.HasSuffix(tab.Tags, tab.HeaderTag) {
				t.Errorf("the tags read (%s) do not end with the headers' %s", tab.Tags, tab.HeaderTag)
			}
			oldest, flags := 0, map[string]int{}
			for _, mem := range tab.Members {
				if mem.Since < mem.Added || mem.Since > tab.HeaderMinor {
					t.Errorf("%s: Since %d, Added %d, outside what the headers allow", mem.Name, mem.Since, mem.Added)
				}
				if (mem.Why == "") != (mem.Since == 0) {
					t.Errorf("%s: Since %d with Why %q", mem.Name, mem.Since, mem.Why)
				}
				if len(mem.Flags) == 0 {
					oldest = max(oldest, mem.Since)
				}
				for _, f := range mem.Flags {
					flags[f] = max(flags[f], mem.Since)
				}
			}
			if tab.Oldest != oldest || (tab.Why == "") != (oldest == 0) {
				t.Errorf("Oldest = %d (%q), but what every build uses is usable from %d", tab.Oldest, tab.Why, oldest)
			}
			for _, f := range tab.Flags {
				if f.Minor <= tab.Oldest || flags[f.Flag] != f.Minor {
					t.Errorf("flag %s needs %d by the table, %d by its members (oldest %d)", f.Flag, f.Minor, flags[f.Flag], tab.Oldest)
				}
			}
			for f, minor := range flags {
				listed := slices.ContainsFunc(tab.Flags, func(fm FlagMinor) bool { return fm.Flag == f })
				if minor > tab.Oldest && !listed {
					t.Errorf("flag %s needs %d, newer than the oldest %d, but Flags lacks it", f, minor, tab.Oldest)
				}
			}
			for _, c := range tab.Classes {
				if c.StableSince > tab.HeaderMinor || (c.Why == "") != (c.StableSince == 0) {
					t.Errorf("class %s: StableSince %d with Why %q", c.Name, c.StableSince, c.Why)
				}
			}
		})
	}
}

// TestOlderMinorsMatchVendoredHeaders: the table must be of the headers the backend is
// compiled against. Where they are vendored (third_party/tensorrt/vN/include), their
// NvInferVersion.h must name the table's major and minor.
func TestOlderMinorsMatchVendoredHeaders(t *testing.T) {
	define := regexp.MustCompile(`(?m)^#define\s+(?:NV_TENSORRT_(MAJOR|MINOR)|TRT_(MAJOR|MINOR)_ENTERPRISE)\s+(\d+)`)
	checked := 0
	for _, tab := range olderMinors {
		path := filepath.Join("..", "..", "third_party", "tensorrt", fmt.Sprintf("v%d", tab.Major), "include", "NvInferVersion.h")
		src, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, m := range define.FindAllStringSubmatch(string(src), -1) {
			n, _ := strconv.Atoi(m[3])
			got[m[1]+m[2]] = n
		}
		if got["MAJOR"] != tab.Major || got["MINOR"] != tab.HeaderMinor {
			t.Errorf("%s is TensorRT %d.%d, but the table of older minors is of %s; run go generate ./internal/trt with -headers naming the vendored release", path, got["MAJOR"], got["MINOR"], tab.HeaderTag)
		}
		checked++
	}
	if checked == 0 {
		t.Skip("no vendored TensorRT headers (third_party/tensorrt/vN/include) to compare with")
	}
}
