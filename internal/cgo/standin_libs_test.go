package cgo

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/testmodels"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// standinLibrariesBuild: the stand-in TensorRT compiled as libraries (standin.ShimLibs:
// libnvinfer.so.N and nvinfer_N.dll with their parser and plugins, and a CUDA driver), loaded
// by the run-time loader as a real TensorRT is, and built over by the shim of their major: a
// plan that says which TensorRT made it, and TensorRT's progress tree through the whole
// pipeline. Also for the oldest minor each major's headers drive (internal/trt's table). With
// --no-builtin-plugins, a TensorRT without libnvinfer_plugin builds: the standard plugins are
// neither loaded nor initialised.
func standinLibrariesBuild(t *testing.T) {
	for _, c := range CompiledShims() {
		versions := [][2]int{{c.TensorRT, c.Build}}
		if table, ok := trt.OlderMinorsFor(c.TensorRT); ok && table.Oldest < table.HeaderMinor {
			oldest := table.Major*10000 + table.Oldest*100
			i := slices.IndexFunc(standin.MinorVersions, func(v [2]int) bool { return v[0] == oldest })
			if i < 0 {
				t.Fatalf("standin.MinorVersions lacks %d", oldest)
			}
			versions = append(versions, standin.MinorVersions[i])
		}
		for _, v := range versions {
			t.Run(fmt.Sprintf("TensorRT %d.%d.%d", v[0]/10000, v[0]/100%100, v[0]%100), func(t *testing.T) {
				dir := standin.Build(t, filepath.Join(testDir(t), "trt"), standin.ShimLibs(v[0], v[1])...)
				got := standinBuild(t, standinJob{Libraries: dir, Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1})
				if got.Error != "" || got.Result.PlanBytes == 0 {
					t.Fatalf("build over the stand-in libraries: %q, %+v", got.Error, got.Result)
				}
				want := fmt.Sprintf("\ntensorrt %d.%d.%d.%d\n", v[0]/10000, v[0]/100%100, v[0]%100, v[1])
				if !strings.HasPrefix(got.Plan, "TRTBUILD-SIMULATED-PLAN 1\n") || !strings.Contains(got.Plan, want) {
					t.Errorf("the plan does not say %q:\n%s", want, got.Plan)
				}
				if got.Version.Loaded != v[0] || got.Version.Compiled != c.TensorRT {
					t.Errorf("version %+v: want %d loaded, driven by the %d shim", got.Version, v[0], c.TensorRT)
				}
				s := statsOf(t, "stand-in libraries", progressOf(got.Events))
				if !slices.Equal(s.rootSteps, []int{6}) || s.maxDepth < 7 || s.measures == 0 {
					t.Errorf("progress: %v", s)
				}
			})
		}
	}
	t.Run("without libnvinfer_plugin", func(t *testing.T) {
		c := CompiledShims()[0]
		plugin := trt.FileName(trt.LibPlugin, c.Major())
		all := standin.ShimLibs(c.TensorRT, c.Build)
		libs := slices.DeleteFunc(slices.Clone(all), func(l standin.Lib) bool { return l.File == plugin })
		if len(libs) != len(all)-1 {
			t.Fatalf("standin.ShimLibs has no %s to leave out", plugin)
		}
		dir := standin.Build(t, filepath.Join(testDir(t), "trt"), libs...)
		got := standinBuild(t, standinJob{Libraries: dir, NoBuiltinPlugins: true, Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1})
		if got.Error != "" || got.Result.PlanBytes == 0 {
			t.Fatalf("build with --no-builtin-plugins over stand-in libraries without %s: %q, %+v", plugin, got.Error, got.Result)
		}
	})
}
