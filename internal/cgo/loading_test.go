//go:build trtbench && !windows

package cgo

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// The loading rule of TensorRT's builder resources, below the shims: the trtbench hook creates a
// builder through the installed libnvinfer (trtb_test_create_builder) with no shim involved.

// builderChildEnv makes the test binary run builderResourceChild instead of the tests: it
// installs the libraries of the trt.Location given as JSON in the variable and creates a
// builder.
const builderChildEnv = "TRTBUILD_BUILDER_RESOURCE_CHILD"

func init() { childHelpers[builderChildEnv] = builderResourceChild }

// TestBuilderResourceNeedsTheParentsLibraryPath: with TensorRT laid out as pip installs it
// (a virtual environment's tensorrt_libs/, found through VIRTUAL_ENV alone, no LD_LIBRARY_PATH
// set by the user), the stand-in libnvinfer opens its builder resource by bare file name at
// createInferBuilder, as the real one does. A child started with the environment the parent
// computes (trt.Location.Environ) creates and deletes a builder; the same child started
// without it fails with TensorRT's "Error Code 6 ... Unable to load library".
func TestBuilderResourceNeedsTheParentsLibraryPath(t *testing.T) {
	noSystemTensorRT(t)
	venv := filepath.Join(t.TempDir(), "venv")
	libs := standin.VirtualEnv(t, venv, standin.Loading(compiled10_16, 72, 90, "NVIDIA H200")...)
	log := filepath.Join(t.TempDir(), "standin.log")
	env := map[string]string{"VIRTUAL_ENV": venv, "HOME": t.TempDir()}
	loc := trt.SearchFromEnv([]int{10}, 13, "", func(k string) string { return env[k] }).Locate()
	loc.UserLibraryPath = "" // the user set none
	if loc.Dir != libs || loc.From != "pip (VIRTUAL_ENV)" {
		t.Fatalf("located %+v, want pip's %s", loc, libs)
	}
	choice, err := json.Marshal(loc)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") {
			base = append(base, kv)
		}
	}
	base = append(base, builderChildEnv+"="+string(choice), standin.EnvLog+"="+log)
	resource := standin.BuilderResourceFile(compiled10_16, 90)
	tests := []struct {
		name string
		env  []string
		want []string // in the child's output
		log  string   // what the stand-ins noted
	}{
		{name: "started with the parent's library path", env: loc.Environ(base),
			want: []string{"builder created and deleted"},
			log:  "builder resource " + resource + " loaded\nbuilder deleted"},
		{name: "started without it", env: base,
			want: []string{"no builder: TensorRT could not create a builder: createInferBuilder: Error Code 6: API Usage Error (Unable to load library: " + resource + ": " + resource + ": cannot open shared object file"},
			log:  ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(log)
			cmd := exec.Command(exe)
			cmd.Env = tt.env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("child output does not contain %q:\n%s", w, out)
				}
			}
			if got := standin.ReadLog(t, log); got != tt.log {
				t.Errorf("the stand-ins noted %q, want %q", got, tt.log)
			}
		})
	}
}

// builderResourceChild installs TensorRT where the parent chose and creates a builder, saying
// on stdout how that went: "builder created and deleted", or "no builder: " and why. It exits 1
// only when it could not get that far.
func builderResourceChild() int {
	var loc trt.Location
	if err := json.Unmarshal([]byte(os.Getenv(builderChildEnv)), &loc); err != nil {
		fmt.Println("bad location:", err)
		return 1
	}
	found, err := FindTensorRT(loc, false)
	if err != nil {
		fmt.Println("cannot find TensorRT:", err)
		return 1
	}
	if err := found.Install(); err != nil {
		fmt.Println("cannot install TensorRT:", err)
		return 1
	}
	if err := testCreateBuilder(); err != nil {
		fmt.Println("no builder:", err)
		return 0
	}
	fmt.Println("builder created and deleted")
	return 0
}
