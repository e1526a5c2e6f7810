//go:build !windows

package trt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSearchFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		dir     string
		dirFrom string
		user    string
	}{
		{name: "nothing", env: map[string]string{"HOME": "/home/u"}, user: "/home/u/.local"},
		{name: "env", env: map[string]string{EnvLibDir: "/e"}, dir: "/e", dirFrom: EnvLibDir},
		{name: "flag wins", flag: "/f", env: map[string]string{EnvLibDir: "/e"}, dir: "/f", dirFrom: "--tensorrt-lib"},
		{name: "the env folder handed on as the flag still says where it came from", flag: "/e", env: map[string]string{EnvLibDir: "/e/"}, dir: "/e", dirFrom: EnvLibDir},
		{name: "PYTHONUSERBASE wins over HOME", env: map[string]string{"HOME": "/home/u", "PYTHONUSERBASE": "/pyuser"}, user: "/pyuser"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env[EnvRoot] = "/root"
			tt.env["LD_LIBRARY_PATH"] = "/ld"
			tt.env["VIRTUAL_ENV"] = "/venv"
			tt.env["CONDA_PREFIX"] = "/conda"
			s := SearchFromEnv([]int{10}, 13, tt.flag, func(k string) string { return tt.env[k] })
			want := Search{Majors: []int{10}, CUDAMajor: 13, Dir: tt.dir, DirFrom: tt.dirFrom, Root: "/root", LDLibraryPath: "/ld",
				VirtualEnv: "/venv", CondaPrefix: "/conda", UserBase: tt.user, SystemPrefixes: []string{"/usr/local", "/usr"}}
			if !reflect.DeepEqual(s, want) {
				t.Errorf("SearchFromEnv = %+v, want %+v", s, want)
			}
		})
	}
}

// fakeFS is a set of files for locate: glob matches python3* by prefix.
type fakeFS map[string]bool

func (f fakeFS) exists(p string) bool { return f[p] }

func (f fakeFS) glob(pattern string) []string {
	var out []string
	seen := map[string]bool{}
	for p := range f {
		for dir := p; dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			if ok, _ := filepath.Match(pattern, dir); ok && !seen[dir] {
				seen[dir] = true
				out = append(out, dir)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestLocate(t *testing.T) {
	venvSite := "/venv/lib/python3.12/site-packages"
	oldSite := "/venv/lib/python3.9/site-packages"
	sysSite := "/usr/lib/python3/dist-packages"
	files := fakeFS{
		"/opt/trt/lib64/libnvinfer.so.10":                              true,
		venvSite + "/tensorrt_libs/libnvinfer.so.10":                   true,
		venvSite + "/tensorrt_lean_libs/libnvinfer_lean.so.10":         true,
		venvSite + "/nvidia/cu13/lib/libcudart.so.13":                  true,
		venvSite + "/nvidia/cuda_runtime/lib/libcudart.so.12":          true,
		oldSite + "/tensorrt_libs/libnvinfer.so.10":                    true,
		sysSite + "/tensorrt_libs/libnvinfer.so.10":                    true,
		"/conda/lib/python3.11/site-packages/tensorrt_libs/README.txt": true,
		"/opt/trt:x/lib/libnvinfer.so.10":                              true,
		"/both/libnvinfer.so.10":                                       true,
		"/both/libnvinfer.so.11":                                       true,
	}
	tests := []struct {
		name   string
		search Search
		want   Location
	}{
		{name: "nothing anywhere: the system's dynamic loader, for each major", search: Search{Majors: []int{11, 10}, LDLibraryPath: "/ld"},
			want: Location{From: "system", UserLibraryPath: "/ld"}},
		{name: "a folder of the older major is taken: the major is the file's",
			search: Search{Majors: []int{11, 10}, Root: "/opt/trt"},
			want: Location{Major: 10, Dir: "/opt/trt/lib64", From: EnvRoot, Looked: []Place{
				{Where: EnvRoot, Path: "/opt/trt/lib/libnvinfer.so.{11,10}", Why: "no such file"}}}},
		{name: "a folder of both majors: the newer",
			search: Search{Majors: []int{11, 10}, Dir: "/both", DirFrom: "--tensorrt-lib"},
			want:   Location{Major: 11, Dir: "/both", From: "--tensorrt-lib"}},
		{name: "an explicit folder of neither: no major, the loader tries each there",
			search: Search{Majors: []int{11, 10}, Dir: "/none", DirFrom: "--tensorrt-lib"},
			want:   Location{Dir: "/none", From: "--tensorrt-lib"}},
		{name: "an explicit folder is taken even without the file, and the rest is only seen",
			search: Search{Majors: []int{10}, Dir: "/x", DirFrom: "--tensorrt-lib", Root: "/opt/trt", VirtualEnv: "/venv"},
			want: Location{Dir: "/x", From: "--tensorrt-lib", Others: []Place{
				{Where: EnvRoot, Path: "/opt/trt/lib64/libnvinfer.so.10"},
				{Where: "pip (VIRTUAL_ENV)", Path: venvSite + "/tensorrt_libs/libnvinfer.so.10"},
				{Where: "pip (VIRTUAL_ENV)", Path: oldSite + "/tensorrt_libs/libnvinfer.so.10"},
			}}},
		{name: "TENSORRT_ROOT/lib64 after lib", search: Search{Majors: []int{10}, Root: "/opt/trt"},
			want: Location{Major: 10, Dir: "/opt/trt/lib64", From: EnvRoot, Looked: []Place{
				{Where: EnvRoot, Path: "/opt/trt/lib/libnvinfer.so.10", Why: "no such file"}}}},
		{name: "pip in a virtual environment: the newest Python, its lean runtime and CUDA 13 runtime",
			search: Search{Majors: []int{10}, CUDAMajor: 13, VirtualEnv: "/venv", CondaPrefix: "/conda", SystemPrefixes: []string{"/usr"}},
			want: Location{Major: 10, Dir: venvSite + "/tensorrt_libs", From: "pip (VIRTUAL_ENV)",
				LeanDir: venvSite + "/tensorrt_lean_libs", CUDARuntime: venvSite + "/nvidia/cu13/lib/libcudart.so.13",
				Others: []Place{
					{Where: "pip (VIRTUAL_ENV)", Path: oldSite + "/tensorrt_libs/libnvinfer.so.10"},
					{Where: "pip (system)", Path: sysSite + "/tensorrt_libs/libnvinfer.so.10"},
				}}},
		{name: "a TensorRT built for CUDA 12 takes pip's CUDA 12 runtime",
			search: Search{Majors: []int{10}, CUDAMajor: 12, Dir: venvSite + "/tensorrt_libs", DirFrom: EnvLibDir},
			want: Location{Major: 10, Dir: venvSite + "/tensorrt_libs", From: EnvLibDir,
				LeanDir: venvSite + "/tensorrt_lean_libs", CUDARuntime: venvSite + "/nvidia/cuda_runtime/lib/libcudart.so.12"}},
		{name: "conda's site without libnvinfer is looked in, then the system's dist-packages",
			search: Search{Majors: []int{10}, CondaPrefix: "/conda", SystemPrefixes: []string{"/usr"}},
			want: Location{Major: 10, Dir: sysSite + "/tensorrt_libs", From: "pip (system)", Looked: []Place{
				{Where: "pip (CONDA_PREFIX)", Path: "/conda/lib/python3.11/site-packages/tensorrt_libs/libnvinfer.so.10", Why: "no such file"}}}},
		{name: "a folder LD_LIBRARY_PATH cannot hold (':' splits it) is passed over",
			search: Search{Majors: []int{10}, Root: "/opt/trt:x"},
			want: Location{From: "system", Looked: []Place{
				{Where: EnvRoot, Path: "/opt/trt:x/lib/libnvinfer.so.10", Why: "its folder holds ':' or ';', which LD_LIBRARY_PATH cannot hold"},
				{Where: EnvRoot, Path: "/opt/trt:x/lib64/libnvinfer.so.10", Why: "no such file"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.search.locate(files.glob, files.exists)
			tt.want.Majors = tt.search.Majors
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("locate =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestLibraryPathAndEnviron(t *testing.T) {
	tests := []struct {
		name string
		loc  Location
		env  []string
		want []string
	}{
		{name: "system, nothing set: unchanged", loc: Location{From: "system"}, env: []string{"A=1"}, want: []string{"A=1"}},
		{name: "system keeps the user's", loc: Location{From: "system", UserLibraryPath: "/u"}, env: []string{"LD_LIBRARY_PATH=/u", "A=1"},
			want: []string{"A=1", "LD_LIBRARY_PATH=/u"}},
		{name: "the chosen folders first, then the user's", loc: Location{Dir: "/s/tensorrt_libs", LeanDir: "/s/tensorrt_lean_libs",
			CUDARuntime: "/s/nvidia/cu13/lib/libcudart.so.13", UserLibraryPath: "/u:/v"},
			env:  []string{"LD_LIBRARY_PATH=/u:/v", "B=2"},
			want: []string{"B=2", "LD_LIBRARY_PATH=/s/tensorrt_libs:/s/tensorrt_lean_libs:/s/nvidia/cu13/lib:/u:/v"}},
		{name: "a folder once", loc: Location{Dir: "/t", LeanDir: "/t"}, env: nil, want: []string{"LD_LIBRARY_PATH=/t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.env)
			if got := tt.loc.Environ(tt.env); !slices.Equal(got, tt.want) {
				t.Errorf("Environ = %q, want %q", got, tt.want)
			}
			if !slices.Equal(tt.env, orig) {
				t.Errorf("Environ changed its argument: %q", tt.env)
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
		name string
		loc  Location
		lib  Library
		want []string
	}{
		{name: "system only", loc: Location{Major: 10, From: "system"}, lib: LibInfer, want: []string{"system libnvinfer.so.10"}},
		{name: "the chosen folder only", loc: Location{Major: 11, Dir: "/opt/trt/lib", From: EnvRoot}, lib: LibONNXParser,
			want: []string{"TENSORRT_ROOT /opt/trt/lib/libnvonnxparser.so.11"}},
		{name: "the driver: the loader's search, then WSL's folder", loc: Location{Major: 10, Dir: "/x", From: "--tensorrt-lib"}, lib: LibCUDADriver,
			want: []string{"system libcuda.so.1", "WSL /usr/lib/wsl/lib/libcuda.so.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := paths(tt.loc.Candidates(tt.lib)); !slices.Equal(got, tt.want) {
				t.Errorf("Candidates(%s) =\n%q\nwant\n%q", tt.lib, got, tt.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	loc := Location{Major: 10, From: "system", UserLibraryPath: "/ld", Looked: []Place{
		{Where: EnvRoot, Path: "/r/lib/libnvinfer.so.10", Why: "no such file"},
		{Where: EnvRoot, Path: "/r/lib64/libnvinfer.so.10", Why: "no such file"},
	}}
	var tried []string
	c, err := loc.Find(LibInfer, func(c Candidate) error {
		tried = append(tried, c.Path)
		return nil
	})
	if err != nil || c.Path != "libnvinfer.so.10" || !slices.Equal(tried, []string{"libnvinfer.so.10"}) {
		t.Fatalf("Find = %+v, %v (tried %q); want the system's libnvinfer.so.10 only", c, err, tried)
	}

	// Nothing opens: one line naming every place looked in, why, and the fix.
	_, err = loc.Find(LibInfer, func(c Candidate) error {
		return errors.New("libnvinfer.so.10: cannot open shared object file: No such file or directory")
	})
	var serr *SearchError
	if !errors.As(err, &serr) || !errors.Is(err, ErrNotFound) || len(serr.Attempts) != 1 {
		t.Fatalf("error %v: want a *SearchError of 1 attempt wrapping ErrNotFound", err)
	}
	want := "TensorRT library not found: cannot load libnvinfer.so.10; searched: " +
		"TENSORRT_ROOT /r/lib/libnvinfer.so.10: no such file; " +
		"TENSORRT_ROOT /r/lib64/libnvinfer.so.10: no such file; " +
		"system (LD_LIBRARY_PATH=/ld, ld.so.cache) libnvinfer.so.10: cannot open shared object file: No such file or directory; " +
		"install TensorRT 10, or point --tensorrt-lib (or TRTBUILD_TENSORRT_LIB) at the folder holding libnvinfer.so.10"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}

	// A version mismatch in the chosen folder is said as such.
	_, err = Location{Major: 10, Dir: "/x", From: "--tensorrt-lib"}.Find(LibInfer, func(Candidate) error {
		return fmt.Errorf("%w: loaded libnvinfer 11.1.0", ErrVersionMismatch)
	})
	if !strings.Contains(err.Error(), "--tensorrt-lib /x/libnvinfer.so.10: TensorRT version mismatch: loaded libnvinfer 11.1.0") {
		t.Errorf("mismatch error: %v", err)
	}

	// The driver's fix is another, and the folders looked in for TensorRT are not its.
	_, err = loc.Find(LibCUDADriver, func(Candidate) error { return errors.New("no") })
	if !strings.HasPrefix(err.Error(), "CUDA driver not found: cannot load libcuda.so.1; searched: system (LD_LIBRARY_PATH=/ld, ld.so.cache) libcuda.so.1: no; WSL /usr/lib/wsl/lib/libcuda.so.1: no") ||
		!strings.HasSuffix(err.Error(), "install the NVIDIA driver (nvidia-smi must work), or run the container with --gpus all") {
		t.Errorf("CUDA driver error: %v", err)
	}
}

func TestLoadHint(t *testing.T) {
	dir := "/venv/site/tensorrt_libs"
	other := "/opt/trt/lib"
	res := "libnvinfer_builder_resource_sm86.so.10.16.2"
	files := fakeFS{dir + "/libnvinfer_builder_resource_sm90.so.10.16.2": true, other + "/" + res: true, dir + "/" + "libnvinfer_builder_resource_sm80.so.10.16.2": true}
	loc := Location{Major: 10, Dir: dir, From: "pip (VIRTUAL_ENV)", Others: []Place{{Where: EnvRoot, Path: other + "/libnvinfer.so.10"}}}
	tests := []struct {
		name string
		msg  string
		has  []string // "" for no hint
	}{
		{name: "not a load failure", msg: "TensorRT could not create a builder: out of memory", has: nil},
		{name: "in another install", msg: "createInferBuilder: Error Code 6: API Usage Error (Unable to load library: " + res + ": " + res + ": cannot open shared object file: No such file or directory)",
			has: []string{"TensorRT loads " + res + " by file name", "not in " + dir + " but in " + other + " (TENSORRT_ROOT)", "point --tensorrt-lib at " + other}},
		{name: "nowhere", msg: "Unable to load library: libnvinfer_builder_resource_sm75.so.10.16.2",
			has: []string{"libnvinfer_builder_resource_sm75.so.10.16.2 by file name and it is in none of " + dir, "install the whole release", "LD_LIBRARY_PATH"}},
		{name: "there, but it does not load", msg: "Unable to load library: libnvinfer_builder_resource_sm90.so.10.16.2: undefined symbol: x",
			has: []string{"it is in " + dir + ", which trtbuild put first on LD_LIBRARY_PATH", "run ldd on " + dir + "/libnvinfer_builder_resource_sm90.so.10.16.2"}},
		{name: "executable stack (glibc 2.41)", msg: "createInferBuilder: Error Code 6: API Usage Error (Unable to load library: libnvinfer_builder_resource_sm80.so.10.16.2: libnvinfer_builder_resource_sm80.so.10.16.2: cannot enable executable stack as shared object requires: Invalid argument)",
			has: []string{dir + "/libnvinfer_builder_resource_sm80.so.10.16.2 asks for an executable stack, which glibc 2.41 and newer refuse",
				"patchelf --clear-execstack " + dir + "/libnvinfer_builder_resource_sm80.so.10.16.2", "execstack -c ", "GLIBC_TUNABLES=glibc.rtld.execstack=2", "another"[:0] + "TensorRT release"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loc.loadHint(tt.msg, files.exists)
			if tt.has == nil {
				if got != "" {
					t.Errorf("hint %q, want none", got)
				}
				return
			}
			if strings.Contains(got, "\n") {
				t.Errorf("hint is not one line: %q", got)
			}
			for _, h := range tt.has {
				if !strings.Contains(got, h) {
					t.Errorf("hint %q\ndoes not contain %q", got, h)
				}
			}
		})
	}
}

// A prefix is a folder, not a pattern: glob characters in it (a virtual environment in
// "env[1]", or one named "a*" beside another TensorRT's "ab") match only that folder.
func TestLocatePrefixWithGlobCharacters(t *testing.T) {
	root := t.TempDir()
	install := func(prefix string) string {
		dir := filepath.Join(root, prefix, "lib", "python3.12", "site-packages", "tensorrt_libs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "libnvinfer.so.10"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	bracket := install("env[1]")
	if err := os.Mkdir(filepath.Join(root, "a*"), 0o755); err != nil {
		t.Fatal(err)
	}
	install("ab")
	for _, tt := range []struct{ venv, want string }{
		{venv: filepath.Join(root, "env[1]"), want: bracket},
		{venv: filepath.Join(root, "a*"), want: ""},
	} {
		loc := Search{Majors: []int{10}, VirtualEnv: tt.venv}.Locate()
		if loc.Dir != tt.want || len(loc.Others) != 0 {
			t.Errorf("VIRTUAL_ENV=%s: Locate chose %q (others %+v), want %q", tt.venv, loc.Dir, loc.Others, tt.want)
		}
	}
}
