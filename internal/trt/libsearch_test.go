package trt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSearchFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		dir     string
		dirFrom string
	}{
		{name: "nothing", env: map[string]string{}},
		{name: "env", env: map[string]string{EnvLibDir: "/e"}, dir: "/e", dirFrom: EnvLibDir},
		{name: "flag wins", flag: "/f", env: map[string]string{EnvLibDir: "/e"}, dir: "/f", dirFrom: "--tensorrt-lib"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env[EnvRoot] = "/root"
			tt.env["LD_LIBRARY_PATH"] = "/ld"
			s := SearchFromEnv(10, tt.flag, env(tt.env))
			want := Search{Major: 10, Dir: tt.dir, DirFrom: tt.dirFrom, Root: "/root", LDLibraryPath: "/ld"}
			if s != want {
				t.Errorf("SearchFromEnv = %+v, want %+v", s, want)
			}
		})
	}
}

func TestCandidates(t *testing.T) {
	paths := func(cs []Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Where+" "+c.Path)
		}
		return out
	}
	tests := []struct {
		name   string
		search Search
		lib    Library
		want   []string
	}{
		{name: "system only", search: Search{Major: 10}, lib: LibInfer,
			want: []string{"system libnvinfer.so.10"}},
		{name: "root then system", search: Search{Major: 11, Root: "/opt/trt"}, lib: LibONNXParser,
			want: []string{"TENSORRT_ROOT /opt/trt/lib/libnvonnxparser.so.11", "TENSORRT_ROOT /opt/trt/lib64/libnvonnxparser.so.11", "system libnvonnxparser.so.11"}},
		{name: "an explicit folder is the only place for TensorRT", search: Search{Major: 10, Dir: "/x", DirFrom: "--tensorrt-lib", Root: "/opt/trt"}, lib: LibPlugin,
			want: []string{"--tensorrt-lib /x/libnvinfer_plugin.so.10"}},
		{name: "CUDA runtime: folder, root, system, toolkit; 13 before 12", search: Search{Major: 10, Dir: "/x", DirFrom: EnvLibDir, Root: "/r"}, lib: LibCUDARuntime,
			want: []string{
				"TRTBUILD_TENSORRT_LIB /x/libcudart.so.13", "TRTBUILD_TENSORRT_LIB /x/libcudart.so.12",
				"TENSORRT_ROOT /r/lib/libcudart.so.13", "TENSORRT_ROOT /r/lib/libcudart.so.12",
				"TENSORRT_ROOT /r/lib64/libcudart.so.13", "TENSORRT_ROOT /r/lib64/libcudart.so.12",
				"system libcudart.so.13", "system libcudart.so.12",
				"system /usr/local/cuda/lib64/libcudart.so.13", "system /usr/local/cuda/lib64/libcudart.so.12",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := paths(tt.search.Candidates(tt.lib)); !slices.Equal(got, tt.want) {
				t.Errorf("Candidates(%s) =\n%q\nwant\n%q", tt.lib, got, tt.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	s := Search{Major: 10, Root: "/r", LDLibraryPath: "/ld"}
	var tried []string
	// Only the system's copy opens.
	c, err := s.Find(LibInfer, func(c Candidate) error {
		tried = append(tried, c.Path)
		if c.Where == "system" {
			return nil
		}
		return fmt.Errorf("%s: cannot open shared object file: No such file or directory", c.Path)
	})
	if err != nil || c.Path != "libnvinfer.so.10" {
		t.Fatalf("Find = %+v, %v; want the system's libnvinfer.so.10", c, err)
	}
	if want := []string{"/r/lib/libnvinfer.so.10", "/r/lib64/libnvinfer.so.10", "libnvinfer.so.10"}; !slices.Equal(tried, want) {
		t.Errorf("tried %q, want %q", tried, want)
	}

	// Nothing opens: one line naming every attempt, why, and the fix.
	_, err = s.Find(LibInfer, func(c Candidate) error {
		if c.Where == "system" {
			return errors.New("libnvinfer.so.10: cannot open shared object file: No such file or directory")
		}
		return fmt.Errorf("%w: loaded libnvinfer 11.1.0", ErrVersionMismatch)
	})
	var serr *SearchError
	if !errors.As(err, &serr) || !errors.Is(err, ErrNotFound) || len(serr.Attempts) != 3 {
		t.Fatalf("error %v: want a *SearchError of 3 attempts wrapping ErrNotFound", err)
	}
	want := "TensorRT library not found: cannot load libnvinfer.so.10; searched: " +
		"TENSORRT_ROOT /r/lib/libnvinfer.so.10: TensorRT version mismatch: loaded libnvinfer 11.1.0; " +
		"TENSORRT_ROOT /r/lib64/libnvinfer.so.10: TensorRT version mismatch: loaded libnvinfer 11.1.0; " +
		"system (LD_LIBRARY_PATH=/ld, ld.so.cache) libnvinfer.so.10: cannot open shared object file: No such file or directory; " +
		"install TensorRT 10, or point --tensorrt-lib (or TRTBUILD_TENSORRT_LIB) at the folder holding libnvinfer.so.10"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}

	// The CUDA runtime's fix is another.
	_, err = Search{Major: 10}.Find(LibCUDARuntime, func(Candidate) error { return errors.New("no") })
	if !strings.Contains(err.Error(), "cannot load libcudart.so.13 or libcudart.so.12") || !strings.Contains(err.Error(), "LD_LIBRARY_PATH=unset") ||
		!strings.HasSuffix(err.Error(), "install the CUDA runtime TensorRT was built for, or put its lib folder on LD_LIBRARY_PATH") {
		t.Errorf("CUDA runtime error: %v", err)
	}
}
