//go:build trtbench

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

// dllResourceChildEnv makes the test binary run dllResourceChild instead of the tests: it loads
// the TensorRT of the trt.Location given as JSON in the variable and creates a builder.
const dllResourceChildEnv = "TRTBUILD_DLL_RESOURCE_CHILD"

// dllResourceAddEnv "1" makes dllResourceChild add the Location's folders to its DLL search
// first, as LoadTensorRT does before it loads anything.
const dllResourceAddEnv = "TRTBUILD_DLL_RESOURCE_ADD"

func init() { childHelpers[dllResourceChildEnv] = dllResourceChild }

// TestBuilderResourceThroughAddDllDirectory: the stand-in nvinfer_10.dll loads its builder
// resource, nvinfer_builder_resource_sm90_10.dll, which lies next to it, by bare name with
// LoadLibraryA at createInferBuilder. A child that added the TensorRT folder to its DLL search
// (addLibraryDirs: SetDefaultDllDirectories, AddDllDirectory) creates and deletes a builder;
// the same child without it fails with TensorRT's "Error Code 6 ... Unable to load library",
// although the resource is next to the DLL that loads it: Windows does not look there.
func TestBuilderResourceThroughAddDllDirectory(t *testing.T) {
	dir := windowsStandIns(t)
	trt10 := filepath.Join(dir, "trt10")
	loc := trt.SearchFromEnv([]int{10}, 13, trt10, func(string) string { return "" }).Locate()
	choice, err := json.Marshal(loc)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(testDir(t), "standin.log")
	resource := standin.DLLBuilderResourceFile(10, 90)
	tests := []struct {
		name string
		add  string
		want string // in the child's output
		log  string // what the stand-ins noted
	}{
		{name: "with the TensorRT folder added", add: "1", want: "builder created and deleted",
			log: "builder resource " + resource + " loaded\nbuilder deleted"},
		{name: "without it", add: "0",
			want: "no builder: TensorRT could not create a builder: createInferBuilder: Error Code 6: API Usage Error (Unable to load library: " + resource + ": error 126)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(log)
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), dllResourceChildEnv+"="+string(choice), dllResourceAddEnv+"="+tt.add,
				standin.EnvLog+"="+log)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("child output does not contain %q:\n%s", tt.want, out)
			}
			if got := standin.ReadLog(t, log); got != tt.log {
				t.Errorf("the stand-ins noted %q, want %q", got, tt.log)
			}
		})
	}
}

// dllResourceChild loads TensorRT where the parent chose and creates a builder, saying on
// stdout how that went. It exits 1 only when it could not get that far.
func dllResourceChild() int {
	var loc trt.Location
	if err := json.Unmarshal([]byte(os.Getenv(dllResourceChildEnv)), &loc); err != nil {
		fmt.Println("bad location:", err)
		return 1
	}
	if os.Getenv(dllResourceAddEnv) == "1" {
		if err := addLibraryDirs(loc); err != nil {
			fmt.Println("cannot add the TensorRT folder:", err)
			return 1
		}
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
