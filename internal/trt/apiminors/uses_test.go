package apiminors

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// moduleRoot is the folder of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// shimTokens reads the TensorRT backend's source, wherever under internal/ its
// tensorrt_*.cpp and tensorrt_*.hpp files are, as tokens (comments gone).
func shimTokens(t *testing.T) []token {
	t.Helper()
	var toks []token
	var files []string
	err := filepath.WalkDir(filepath.Join(moduleRoot(t), "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !strings.HasPrefix(name, "tensorrt_") || !(strings.HasSuffix(name, ".cpp") || strings.HasSuffix(name, ".hpp")) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s, err := scan(string(src))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		toks = append(toks, s.toks...)
		files = append(files, name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "tensorrt_shim.hpp") || len(files) < 3 {
		t.Fatalf("found the TensorRT backend's source in %v only; where did tensorrt_*.cpp go?", files)
	}
	return toks
}

// shimCalls are the names the backend's source calls as members (x.name( and x->name()
// and the enumerators it names (::kNAME), and the interfaces it derives from.
type shimCalls struct {
	calls, enumerators, bases map[string]bool
}

func readShim(t *testing.T) shimCalls {
	toks := shimTokens(t)
	s := shimCalls{calls: map[string]bool{}, enumerators: map[string]bool{}, bases: map[string]bool{}}
	for k := 0; k+1 < len(toks); k++ {
		switch a, b := toks[k].text, toks[k+1].text; {
		case (a == "." || a == "->") && isIdent(b) && k+2 < len(toks) && toks[k+2].text == "(":
			s.calls[b] = true
		case a == "::" && strings.HasPrefix(b, "k"):
			s.enumerators[b] = true
		case a == "public":
			name := ""
			for j := k + 1; j < len(toks) && (isIdent(toks[j].text) || toks[j].text == "::"); j++ {
				name += toks[j].text
			}
			s.bases[name] = true
		}
	}
	return s
}

// Every use is in the backend's source: a call, an enumerator, an interface it implements.
func TestUsesAreInTheShim(t *testing.T) {
	shim := readShim(t)
	for _, u := range Uses {
		switch {
		case u.Callback:
			if !shim.bases[u.Type] {
				t.Errorf("Uses lists %s as implemented by the backend, but no class of it derives from it", u.Type)
			}
		case u.Member == "~":
			// Deleting goes through std::unique_ptr: nothing names it.
		case strings.HasPrefix(u.Member, "k"):
			if !shim.enumerators[u.Member] {
				t.Errorf("Uses lists %s::%s, which the backend never names; drop it from uses.go and run go generate ./internal/trt", u.Type, u.Member)
			}
		default:
			if !shim.calls[u.Member] {
				t.Errorf("Uses lists %s::%s, which the backend never calls; drop it from uses.go and run go generate ./internal/trt", u.Type, u.Member)
			}
		}
	}
}

// notTensorRT are calls of the backend's own objects and of the standard library whose names
// a TensorRT class also has.
var notTensorRT = map[string]string{
	"reset": "std::unique_ptr", "clear": "std containers", "get": "std::unique_ptr", "release": "Logger::release",
	"end": "std containers, tcache::ThreadCapture", "empty": "std containers", "swap": "std::unique_ptr",
	"load": "std::atomic", "lines": "tcache::ThreadCapture", "errors": "tcache::ThreadCapture", "create": "ProfileStream",
	"error": "FdWriter", "attach": "ProfileStream", "note": "Logger", "mark": "Logger",
}

// compiledOut are calls the backend makes only when compiled against older headers than the
// table's (TRTB_HAS_STREAM_WRITER, TRTB_HAS_SHAPE_VALUES_V2 in tensorrt_shim.hpp).
var compiledOut = map[string]string{
	"buildSerializedNetwork": "headers before 10.13",
	"setShapeValues":         "headers before 10.11",
}

// Every call of a TensorRT member function and every TensorRT enumerator in the backend's
// source is in Uses. This needs the newest headers: the vendored ones, or the tags the
// generator reads from TENSORRT_GIT.
func TestShimCallsAreListed(t *testing.T) {
	headers := newestHeaders(t)
	shim := readShim(t)
	members, enumerators := map[string]string{}, map[string]string{}
	for _, h := range headers {
		for _, c := range h.Classes {
			if !strings.HasPrefix(c.Name, "nvinfer1::") && !strings.HasPrefix(c.Name, "nvonnxparser::") {
				continue
			}
			for _, m := range c.Members {
				members[m.Name] = c.Name
			}
		}
		for _, e := range h.Enums {
			for _, v := range e.Values {
				enumerators[v.Name] = e.Name
			}
		}
	}
	listed := map[string]bool{}
	for _, u := range Uses {
		listed[u.Member] = true
	}
	for name := range shim.calls {
		if cls, ok := members[name]; ok && !listed[name] && notTensorRT[name] == "" && compiledOut[name] == "" {
			t.Errorf("the backend calls %s (a member of %s, among others) but uses.go does not list it; add it and run go generate ./internal/trt", name, cls)
		}
	}
	for name := range shim.enumerators {
		if e, ok := enumerators[name]; ok && !listed[name] {
			t.Errorf("the backend names %s (an enumerator of %s, among others) but uses.go does not list it; add it and run go generate ./internal/trt", name, e)
		}
	}
	for name, why := range notTensorRT {
		if !shim.calls[name] {
			t.Errorf("notTensorRT excuses %s (%s), which the backend no longer calls; drop it", name, why)
		}
	}
}

// generateDirective returns the tags -headers names in internal/trt's go:generate line.
func generateDirective(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "minors.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^//go:generate go run \./apiminors/gen .*-headers=(\S+)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("internal/trt/minors.go has no go:generate line running ./apiminors/gen with -headers=")
	}
	return strings.Split(string(m[1]), ",")
}

// newestHeaders returns the headers the table is generated from, by major: the vendored ones
// (third_party/tensorrt/vN/include), else those of the go:generate line's tags in the
// repository TENSORRT_GIT names. Without either the test is skipped.
func newestHeaders(t *testing.T) []*Header {
	t.Helper()
	var out []*Header
	tags := generateDirective(t)
	root := moduleRoot(t)
	for _, name := range tags {
		m := tagVersion.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("go:generate names %q, not a release tag", name)
		}
		dir := filepath.Join(root, "third_party", "tensorrt", "v"+m[1], "include")
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		h := NewHeader()
		for _, f := range HeaderFiles {
			src, err := os.ReadFile(filepath.Join(dir, f))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Add(f, string(src)); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, h)
	}
	if len(out) == len(tags) {
		return out
	}
	repo := os.Getenv("TENSORRT_GIT")
	if repo == "" {
		t.Skip("neither vendored TensorRT headers (third_party/tensorrt/vN/include) nor TENSORRT_GIT (a clone of github.com/NVIDIA/TensorRT) to read")
	}
	out = nil
	for _, name := range tags {
		tag, err := ReadTag(Repo{Dir: repo}, Repo{Dir: os.Getenv("ONNX_TENSORRT_GIT")}, Tag{Name: name})
		if err != nil {
			t.Fatalf("reading %s from TENSORRT_GIT: %v", name, err)
		}
		out = append(out, tag.Header)
	}
	return out
}

// TestGeneratedTableIsCurrent regenerates internal/trt's table as go generate does and
// compares it with the file checked in. It needs TENSORRT_GIT (and ONNX_TENSORRT_GIT, as the
// table was made with one).
func TestGeneratedTableIsCurrent(t *testing.T) {
	repo := os.Getenv("TENSORRT_GIT")
	if repo == "" {
		t.Skip("TENSORRT_GIT is not set: give a clone of github.com/NVIDIA/TensorRT to regenerate the table")
	}
	want, err := Generate(Repo{Dir: repo}, Repo{Dir: os.Getenv("ONNX_TENSORRT_GIT")}, generateDirective(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "apiminors_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("internal/trt/apiminors_gen.go is not what the generator writes now; run go generate ./internal/trt with TENSORRT_GIT and ONNX_TENSORRT_GIT set")
	}
}
