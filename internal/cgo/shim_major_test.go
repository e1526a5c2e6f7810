package cgo

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// shimMajorChildEnv makes the test binary run shimMajorChild: the folder of stand-in
// libraries to load, as TRTBUILD_TENSORRT_LIB would name it.
const shimMajorChildEnv = "TRTBUILD_SHIM_MAJOR_CHILD"

func init() { childHelpers[shimMajorChildEnv] = shimMajorChild }

// eachMajorTakesItsShim: a child loads stand-ins of one TensorRT (the folder of nvinfer and
// its parser and plugins of that major, and a CUDA driver with one GPU) and asks the backend
// for its version: the shim of the library's major answers, saying the headers it was compiled
// against, the loaded version and the GPU. Both majors live in every binary, on Linux and on
// Windows.
func eachMajorTakesItsShim(t *testing.T) {
	var versions [][2]int
	for _, c := range CompiledShims() {
		versions = append(versions, [2]int{c.TensorRT, c.Build})
	}
	if !slices.Equal(versions, standin.ShimVersions) {
		t.Fatalf("the shims are compiled for %v, the stand-ins are of %v: update standin.ShimVersions", versions, standin.ShimVersions)
	}
	for _, c := range CompiledShims() {
		t.Run(fmt.Sprintf("TensorRT %d", c.Major()), func(t *testing.T) {
			major := c.Major()
			got := shimMajorRun(t, c.TensorRT, c.Build)
			if got.Error != "" {
				t.Fatalf("child: %s", got.Error)
			}
			if got.Compiled != c.TensorRT || got.Loaded != c.TensorRT || got.DeviceName != "Stand-in GPU" || got.SMs != 132 {
				t.Errorf("the backend with TensorRT %d loaded: %+v; want the %d shim (compiled %d) describing the stand-in GPU", major, got.VersionInfo, major, c.TensorRT)
			}
		})
		// The older minors of the major, as internal/trt's table says: the oldest it drives is
		// the shim's, the one before is refused with the table's reason.
		table, ok := trt.OlderMinorsFor(c.TensorRT)
		if !ok {
			t.Fatalf("no table of older minors for %d", c.TensorRT)
		}
		oldest := table.Major*10000 + table.Oldest*100
		cases := []struct {
			version int
			refused string
		}{{oldest, ""}}
		if table.Oldest > 0 {
			cases = append(cases, struct {
				version int
				refused string
			}{oldest - 100 + 3, table.Why})
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("TensorRT %d.%d.%d", tc.version/10000, tc.version/100%100, tc.version%100), func(t *testing.T) {
				i := slices.IndexFunc(standin.MinorVersions, func(v [2]int) bool { return v[0] == tc.version })
				if i < 0 {
					t.Fatalf("standin.MinorVersions lacks %d, which internal/trt's table of older minors now names", tc.version)
				}
				got := shimMajorRun(t, standin.MinorVersions[i][0], standin.MinorVersions[i][1])
				switch {
				case tc.refused != "" && !strings.Contains(got.Error, tc.refused):
					t.Errorf("TensorRT %d: %q, want refused because %s", tc.version, got.Error, tc.refused)
				case tc.refused == "" && (got.Error != "" || got.Compiled != c.TensorRT || got.Loaded != tc.version):
					t.Errorf("TensorRT %d: %+v %q, want driven by the shim compiled for %d", tc.version, got.VersionInfo, got.Error, c.TensorRT)
				}
			})
		}
	}
}

// shimMajorOutcome is what shimMajorChild said.
type shimMajorOutcome struct {
	Error string
	VersionInfo
}

// shimMajorRun has a child load stand-ins of TensorRT version and build and ask the backend
// for its version.
func shimMajorRun(t *testing.T, version, build int) shimMajorOutcome {
	t.Helper()
	dir := standin.Build(t, filepath.Join(testDir(t), "trt"), standin.ShimLibs(version, build)...)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), shimMajorChildEnv+"="+dir, "LD_LIBRARY_PATH="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var got shimMajorOutcome
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	return got
}

// shimMajorChild installs the TensorRT and the CUDA driver of the folder its variable names
// and writes, as JSON, what the TensorRT backend says of its version (or the error).
func shimMajorChild() int {
	dir := os.Getenv(shimMajorChildEnv)
	say := func(v any) int {
		json.NewEncoder(os.Stdout).Encode(v)
		return 0
	}
	fail := func(err error) int { return say(map[string]string{"Error": err.Error()}) }
	loc := trt.SearchFromEnv(CompiledMajors(), 13, dir, func(string) string { return "" }).Locate()
	if err := LoadTensorRT(loc, true); err != nil {
		return fail(err)
	}
	driver, err := OpenLibrary(trt.LibCUDADriver, filepath.Join(dir, trt.FileName(trt.LibCUDADriver, 0)))
	if err != nil {
		return fail(err)
	}
	if err := driver.install(); err != nil {
		return fail(err)
	}
	v, err := Version(BackendTensorRT, 0)
	if err != nil {
		return fail(err)
	}
	return say(v)
}
