package apiminors

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStubsAreUpToDate: the checked-in stubs of the stand-in TensorRT are what the generator
// writes from the vendored headers now, and carry Go's generated-code line.
func TestStubsAreUpToDate(t *testing.T) {
	generated := regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
	for _, major := range StubMajors {
		want, err := GenerateStubs(moduleRoot(t), major)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(moduleRoot(t), StubFile(major)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the vendored headers of TensorRT %d give: run %s", StubFile(major), major, StubGenerator)
		}
		if !generated.Match(got) {
			t.Errorf("%s lacks the line `// Code generated ... DO NOT EDIT.`", StubFile(major))
		}
	}
}

// TestStubsCoverEveryPureVirtual: each stub class overrides every pure virtual function of the
// class it stands for, overloads included, with its signature as the header spells it, and
// the ones returning a reference end the process rather than return.
func TestStubsCoverEveryPureVirtual(t *testing.T) {
	for _, major := range StubMajors {
		h, err := ReadVendored(moduleRoot(t), major)
		if err != nil {
			t.Fatal(err)
		}
		src, err := RenderStubs(h, major, "test")
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		for _, name := range StubClasses {
			slots, err := h.VTable(h.Classes[name])
			if err != nil {
				t.Fatal(err)
			}
			simple := name[strings.LastIndex(name, "::")+2:]
			start := strings.Index(text, "class "+simple+"Stubs ")
			end := strings.Index(text[start:], "\n};\n")
			if start < 0 || end < 0 {
				t.Fatalf("TensorRT %d: no class %sStubs", major, simple)
			}
			body := text[start : start+end]
			n := 0
			for _, s := range slots {
				if !s.Pure || s.Name == "~" {
					continue
				}
				n++
				if !strings.Contains(body, "    "+s.Decl+" noexcept override {") {
					t.Errorf("TensorRT %d: %sStubs lacks %s", major, simple, s.Decl)
				}
			}
			if got := strings.Count(body, " override {"); got != n || n == 0 {
				t.Errorf("TensorRT %d: %sStubs has %d overrides, the header %d pure virtual functions", major, simple, got, n)
			}
			if strings.Contains(body, "& getPluginRegistry() noexcept override {\n        unimplemented_.report") {
				t.Errorf("TensorRT %d: a stub returning a reference returns", major)
			}
		}
	}
}

// TestSpelledParams: parameter names, defaults and attributes go; types stay as spelled.
func TestSpelledParams(t *testing.T) {
	for src, want := range map[string]string{
		"":                    "",
		"void":                "",
		"int32_t const index": "int32_t const",
		"nvinfer1::ITensor* const* inputs, int32_t nbInputs": "nvinfer1::ITensor* const*, int32_t",
		"char const* name, int32_t const length = 3":         "char const*, int32_t const",
		"Dims const& dims":                       "Dims const&",
		"ErrorCode":                              "ErrorCode",
		"unsigned int flags":                     "unsigned int",
		"int64_t values[], TRT_UNUSED int32_t n": "int64_t[], int32_t",
		"AsciiChar const* const pluginNamespace": "AsciiChar const* const",
	} {
		s, err := scan(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := spelledParams(s.toks); got != want {
			t.Errorf("spelledParams(%q) = %q, want %q", src, got, want)
		}
	}
}

// TestStandInImplementsWhatTheShimUses: every member function the shim calls (Uses), of each
// major, is implemented by the stand-in's own class (internal/cgo/trtfake/objects.hpp), not
// left to the generated stub that fails the build: a call the shim starts to make is listed
// in Uses (uses_test.go holds the list to the shim), and then this test names what the
// stand-in must implement.
func TestStandInImplementsWhatTheShimUses(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "internal", "cgo", "trtfake", "objects.hpp"))
	if err != nil {
		t.Fatal(err)
	}
	fake := NewHeader()
	if err := fake.Add("objects.hpp", string(src)); err != nil {
		t.Fatal(err)
	}
	// The stand-in's classes by the stub class they derive from.
	byStub := map[string]*Class{}
	for _, c := range fake.Classes {
		for _, b := range c.Bases {
			if i := strings.LastIndex(b, "::"); i >= 0 {
				b = b[i+2:]
			}
			if strings.HasSuffix(b, "Stubs") {
				byStub[b] = c
			}
		}
	}
	for _, major := range StubMajors {
		h, err := ReadVendored(moduleRoot(t), major)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range Uses {
			if u.Callback || u.Member == "~" || !u.forMajor(major) || h.Lookup("", u.Type) == nil {
				continue // implemented by the shim, a delete, another major's, or an enumerator
			}
			if _, err := resolve(h, u, nil, ""); err != nil {
				t.Errorf("TensorRT %d: %s: %v", major, memberName(u), err)
				continue
			}
			// A public class's inline method forwards to its implementation object (even the
			// few declared virtual); an interface's is its own.
			impl, method := h.Lookup("", u.Type), u.Member
			for _, m := range impl.Members {
				if m.Name == u.Member && m.Forward != nil {
					fc, err := fieldClass(h, impl, m.Forward.Field)
					if err != nil {
						t.Fatal(err)
					}
					impl, method = fc, m.Forward.Method
					break
				}
			}
			stub := impl.Name[strings.LastIndex(impl.Name, "::")+2:] + "Stubs"
			c := byStub[stub]
			if c == nil {
				t.Errorf("TensorRT %d: %s goes through %s, which no class of the stand-in implements (none derives from %s)", major, memberName(u), impl.Name, stub)
				continue
			}
			found := false
			for _, m := range c.Members {
				found = found || m.Name == method && m.Override
			}
			if !found {
				t.Errorf("TensorRT %d: the shim calls %s (%s::%s), which the stand-in's %s leaves to its stub", major, memberName(u), shortName(impl.Name), method, c.Name)
			}
		}
	}
}
