package apiminors

import (
	"reflect"
	"strings"
	"testing"
)

// sample holds what TensorRT's headers do that the reader must get right: nested and aliased
// namespaces, macros and attributes in declarations, default arguments, inline forwarding
// bodies whose fields come after them, nested enums, constructors, operators, templates,
// extern "C", and comments and strings holding braces.
const sample = `
// A comment with a brace {
/* and a block comment with one } */
#define TRT_DEPRECATED [[deprecated]]
namespace nvinfer1
{
class ITensor;
namespace apiv
{
class VRoot
{
public:
    virtual ~VRoot() noexcept = default;
};
class VWidget : public VRoot
{
public:
    virtual int32_t getSize() const noexcept = 0;
    TRT_NODISCARD virtual bool setName(char const* name, int32_t const length = 3) noexcept = 0;
    TRT_DEPRECATED_BECAUSE("use grow") virtual void enlarge(const Dims& dims) noexcept = 0;
    virtual std::size_t area(nvinfer1::ITensor* const tensor, int64_t const index) noexcept = 0;
};
} // namespace apiv

namespace v_1_0
{
class IListener : public IVersionedInterface
{
public:
    InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"IListener}", 1, 0}; }
    virtual void heard(char const* what) noexcept = 0;
    IListener() = default;
    virtual ~IListener() noexcept = default;
protected:
    IListener(IListener const&) = default;
    IListener& operator=(IListener const&) & = default;
};
} // namespace v_1_0
using IListener = v_1_0::IListener;

class IWidget : public INoCopy
{
public:
    virtual ~IWidget() noexcept = default;
    //! Forwards before the field is declared.
    int32_t getSize() const noexcept
    {
        return mImpl->getSize();
    }
    virtual bool setName(char const* name, int32_t length = 3) noexcept
    {
        return mImpl->setName(name, length);
    }
    template <typename T>
    T* as() noexcept { return static_cast<T*>(this); }
    static int32_t count() noexcept;
    enum class Kind : int32_t
    {
        kSMALL = 0,
        kLARGE TRT_DEPRECATED_ENUM = 4,
        kHUGE,
        kMASK = 1U << 4,
        kBOTH = kSMALL | kMASK,
        kODD = sizeof(int),
    };
#if WIDGET_EXTRA
    int32_t mExtra{0};
#endif
protected:
    apiv::VWidget* mImpl;
    int64_t mDims[MAX_DIMS];
};

class IVersionedInterface
{
public:
    virtual APILanguage getAPILanguage() const noexcept { return APILanguage::kCPP; }
    virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;
    virtual ~IVersionedInterface() noexcept = default;
};

class INoCopy
{
protected:
    INoCopy() = default;
    virtual ~INoCopy() = default;
};

template <typename T>
constexpr inline int32_t EnumMax() noexcept;
template <>
constexpr inline int32_t EnumMax<IWidget::Kind>() noexcept { return 4; }
} // namespace nvinfer1

extern "C" TENSORRTAPI void* createWidget_INTERNAL(void* logger, int32_t version) noexcept;
`

func sampleHeader(t *testing.T) *Header {
	t.Helper()
	h := NewHeader()
	if err := h.Add("sample.h", sample); err != nil {
		t.Fatalf("Add: %v", err)
	}
	return h
}

func TestHeaderReadsDeclarations(t *testing.T) {
	h := sampleHeader(t)

	impl := h.Classes["nvinfer1::apiv::VWidget"]
	if impl == nil {
		t.Fatalf("no nvinfer1::apiv::VWidget among %v", keys(h.Classes))
	}
	var sigs []string
	for _, m := range impl.Members {
		sigs = append(sigs, m.Sig)
	}
	want := []string{"int getSize() const", "bool setName(char const*, int)", "void enlarge(Dims const&)", "size_t area(ITensor*, int64_t)"}
	if !reflect.DeepEqual(sigs, want) {
		t.Errorf("VWidget's members are\n%q, want\n%q", sigs, want)
	}

	w := h.Classes["nvinfer1::IWidget"]
	if w == nil {
		t.Fatal("no nvinfer1::IWidget")
	}
	if got, want := w.Fields, []string{"int32_t mExtra", "apiv::VWidget* mImpl", "int64_t mDims[MAX_DIMS]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("IWidget's fields are %q, want %q", got, want)
	}
	if !w.Conditional {
		t.Error("IWidget holds an #if but is not marked Conditional")
	}
	forwards := map[string]Forward{}
	for _, m := range w.Members {
		if m.Forward != nil {
			forwards[m.Name] = *m.Forward
		}
	}
	if got, want := forwards, map[string]Forward{"getSize": {"mImpl", "getSize", 0}, "setName": {"mImpl", "setName", 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("IWidget forwards %v, want %v", got, want)
	}

	kind := h.Enums["nvinfer1::IWidget::Kind"]
	if kind == nil {
		t.Fatalf("no nested enum IWidget::Kind among %v", keys(h.Enums))
	}
	var values []string
	for _, v := range kind.Values {
		values = append(values, v.Name+"="+v.Value)
	}
	if got, want := strings.Join(values, " "), "kSMALL=0 kLARGE=4 kHUGE=5 kMASK=16 kBOTH=16 kODD=sizeof(int)"; got != want {
		t.Errorf("IWidget::Kind is %s, want %s", got, want)
	}

	// The alias leads to the class in v_1_0; its vtable starts with its base's.
	l := h.Lookup("", "nvinfer1::IListener")
	if l == nil || l.Name != "nvinfer1::v_1_0::IListener" {
		t.Fatalf("Lookup(nvinfer1::IListener) = %v, want nvinfer1::v_1_0::IListener", l)
	}
	slots, err := h.VTable(l)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range slots {
		names = append(names, s.Name)
	}
	if got, want := strings.Join(names, " "), "getAPILanguage getInterfaceInfo ~ heard"; got != want {
		t.Errorf("IListener's vtable is %s, want %s", got, want)
	}
	if _, ok := h.Classes["nvinfer1::v_1_0::IListener"]; !ok {
		t.Error("IListener is not kept under its own namespace")
	}
}

func TestVTableRefusesWhatItCannotLayOut(t *testing.T) {
	h := sampleHeader(t)
	if _, err := h.VTable(h.Classes["nvinfer1::IWidget"]); err == nil || !strings.Contains(err.Error(), "preprocessor conditional") {
		t.Errorf("VTable(IWidget) = %v, want the conditional refused", err)
	}
	if err := h.Add("more.h", `namespace nvinfer1 { class IBoth : public INoCopy, public IVersionedInterface {}; class IOrphan : public INowhere {}; }`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.VTable(h.Classes["nvinfer1::IBoth"]); err == nil || !strings.Contains(err.Error(), "two bases with virtual functions") {
		t.Errorf("VTable(IBoth) = %v, want multiple inheritance refused", err)
	}
	if _, err := h.VTable(h.Classes["nvinfer1::IOrphan"]); err == nil || !strings.Contains(err.Error(), "INowhere is not defined") {
		t.Errorf("VTable(IOrphan) = %v, want the missing base named", err)
	}
	if err := h.Add("sample.h", sample); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Errorf("adding the sample again = %v, want a class defined twice", err)
	}
}

func TestNormParams(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"void", ""},
		{"int32_t index", "int"},
		{"char const* name", "char const*"},
		{"const char* name", "char const*"},
		{"nvinfer1::ITensor& input", "ITensor&"},
		{"IErrorRecorder* const recorder", "IErrorRecorder*"},
		{"AsciiChar const* const ns = \"\"", "AsciiChar const*"},
		{"std::size_t size", "size_t"},
		{"int64_t const index", "int64_t"},
		{"const cudaStream_t stream", "cudaStream_t"},
		{"unsigned int", "unsigned int"},
		{"DataType", "DataType"},
		{"v_1_0::IListener", "v_1_0::IListener"},
		{"char const* const* paths, int32_t nbPaths", "char const* const*, int"},
		{"Dims const& dims, TRT_DEPRECATED_BECAUSE(\"x\") bool b = true", "Dims const&, bool"},
		{"std::vector<std::pair<int, int>> const& pairs", "std::vector<std::pair<int, int>> const&"},
	}
	for _, tt := range tests {
		s, err := scan(tt.in)
		if err != nil {
			t.Fatalf("scan(%q): %v", tt.in, err)
		}
		if got := normParams(s.toks); got != tt.want {
			t.Errorf("normParams(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestScanRefusesBrokenText(t *testing.T) {
	for _, src := range []string{"/* never closed", "char const* s = \"never closed\n;", "class X { int a;"} {
		if err := NewHeader().Add("broken.h", src); err == nil {
			t.Errorf("Add(%q) = nil, want an error", src)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
