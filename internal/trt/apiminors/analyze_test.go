package apiminors

import (
	"fmt"
	"strings"
	"testing"
)

// release builds the headers of one synthetic release of major 1: widget.h holds the
// implementation class VWidget with the virtual functions given (declarations without
// "virtual" and "= 0"), the public IWidget that forwards to it, the enum Color, and the
// interface IListener that the backend implements, with the listener functions given.
// parser.h holds IParser.
func release(t *testing.T, name string, minor int, widget []string, color string, listener []string, parser ...string) Tag {
	t.Helper()
	var b strings.Builder
	b.WriteString("namespace nvinfer1 {\nnamespace apiv {\nclass VRoot { public: virtual ~VRoot() noexcept = default; };\n")
	b.WriteString("class VWidget : public VRoot\n{\npublic:\n")
	for _, m := range widget {
		fmt.Fprintf(&b, "    virtual %s noexcept = 0;\n", m)
	}
	b.WriteString("};\n} // namespace apiv\n")
	b.WriteString(`class INoCopy { protected: virtual ~INoCopy() = default; };
class IWidget : public INoCopy
{
public:
    virtual ~IWidget() noexcept = default;
    int32_t getSize() const noexcept { return mImpl->getSize(); }
    bool setName(char const* name) noexcept { return mImpl->setName(name); }
    void grow(int32_t by) noexcept { mImpl->grow(by); }
    void paint(Color c) noexcept { mImpl->paint(c); }
protected:
    apiv::VWidget* mImpl;
};
`)
	fmt.Fprintf(&b, "enum class Color : int32_t { %s };\n", color)
	b.WriteString("class IListener\n{\npublic:\n")
	for _, m := range listener {
		fmt.Fprintf(&b, "    virtual %s noexcept = 0;\n", m)
	}
	b.WriteString("    virtual ~IListener() noexcept = default;\n};\n} // namespace nvinfer1\n")

	tag := Tag{Name: name, Major: 1, Minor: minor, Header: NewHeader()}
	if err := tag.Header.Add("widget.h", b.String()); err != nil {
		t.Fatalf("%s: widget.h: %v\n%s", name, err, b.String())
	}
	if parser == nil {
		tag.Missing = []string{"parser.h"}
		return tag
	}
	src := "namespace nvonnxparser {\nclass IParser\n{\npublic:\n"
	for _, m := range parser {
		src += fmt.Sprintf("    virtual %s noexcept = 0;\n", m)
	}
	src += "    virtual ~IParser() noexcept = default;\n};\n}\n"
	if err := tag.Header.Add("parser.h", src); err != nil {
		t.Fatalf("%s: parser.h: %v", name, err)
	}
	return tag
}

var (
	getSize    = "int32_t getSize() const"
	setName    = "bool setName(char const* name)"
	grow       = "void grow(int32_t by)"
	paint      = "void paint(Color c)"
	heard      = "void heard(char const* what)"
	parse      = "bool parse(char const* path)"
	rgb        = "kRED = 0, kGREEN = 1, kBLUE = 2"
	testUses   = []Use{{Type: "nvinfer1::IWidget", Member: "getSize"}, {Type: "nvinfer1::IListener", Callback: true}}
	growUse    = Use{Type: "nvinfer1::IWidget", Member: "grow", Flags: []string{"--grow"}}
	blueUse    = Use{Type: "nvinfer1::Color", Member: "kBLUE", Flags: []string{"--blue"}}
	parserUse  = Use{Type: "nvonnxparser::IParser", Member: "parse"}
	widgetName = "nvinfer1::apiv::VWidget"
)

func analyze(t *testing.T, uses []Use, tags ...Tag) *Table {
	t.Helper()
	tab, err := Analyze(tags, uses)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return tab
}

func member(t *testing.T, tab *Table, name string) MemberFact {
	t.Helper()
	for _, m := range tab.Members {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no member %s in the table", name)
	return MemberFact{}
}

func class(t *testing.T, tab *Table, name string) ClassFact {
	t.Helper()
	for _, c := range tab.Classes {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no class %s in the table", name)
	return ClassFact{}
}

// Methods appended release after release keep every older release drivable; a method that
// only an option calls needs the release that added it.
func TestAnalyzeAppendedMethods(t *testing.T) {
	tab := analyze(t, append(testUses, growUse),
		release(t, "v1.2.0", 2, []string{getSize, setName, grow, paint}, rgb, []string{heard}),
		release(t, "v1.0.0", 0, []string{getSize, setName}, rgb, []string{heard}),
		release(t, "v1.1.0", 1, []string{getSize, setName, grow}, rgb, []string{heard}),
	)
	if tab.HeaderTag != "v1.2.0" || tab.HeaderMinor != 2 || strings.Join(tab.Tags, " ") != "v1.0.0 v1.1.0 v1.2.0" {
		t.Errorf("table of %s (minor %d) over %v, want v1.2.0 (2) over the three tags in order", tab.HeaderTag, tab.HeaderMinor, tab.Tags)
	}
	if tab.Oldest != 0 || tab.Why != "" {
		t.Errorf("Oldest = %d (%s), want 0", tab.Oldest, tab.Why)
	}
	if m := member(t, tab, "IWidget::getSize"); m.Since != 0 || m.Added != 0 || m.ABI != "apiv::VWidget slot 1: int getSize() const" {
		t.Errorf("getSize = %+v, want Since 0 at slot 1 (after the destructor)", m)
	}
	if m := member(t, tab, "IWidget::grow"); m.Since != 1 || m.Added != 1 || m.Why != "v1.0.0: no apiv::VWidget::grow of 1 parameters, which IWidget::grow forwards to" {
		t.Errorf("grow = %+v, want Since 1 because v1.0.0 lacks it", m)
	}
	if c := class(t, tab, widgetName); c.StableSince != 0 || c.Slots != 5 {
		t.Errorf("VWidget = %+v, want 5 slots stable since 0", c)
	}
	needs := tab.FlagNeeds()
	if len(needs) != 1 || needs[0] != (FlagNeed{Flag: "--grow", Minor: 1, Because: "IWidget::grow"}) {
		t.Errorf("FlagNeeds = %+v, want --grow from minor 1", needs)
	}
}

// A method inserted before others moves them: releases before the insertion lay the class
// out differently and cannot be driven, whatever the build calls of it.
func TestAnalyzeInsertedMethod(t *testing.T) {
	tab := analyze(t, testUses,
		release(t, "v1.0.0", 0, []string{getSize, grow}, rgb, []string{heard}),
		release(t, "v1.1.0", 1, []string{getSize, setName, grow}, rgb, []string{heard}),
		release(t, "v1.2.0", 2, []string{getSize, setName, grow, paint}, rgb, []string{heard}),
	)
	want := "slot 2 is void grow(int), where the newest headers have bool setName(char const*)"
	if tab.Oldest != 1 || !strings.Contains(tab.Why, "IWidget::getSize in v1.0.0") || !strings.Contains(tab.Why, want) {
		t.Errorf("Oldest = %d (%s), want 1 because in v1.0.0 %s", tab.Oldest, tab.Why, want)
	}
	if m := member(t, tab, "IWidget::getSize"); m.Added != 0 || m.Since != 1 {
		t.Errorf("getSize = %+v, want Added 0 but Since 1", m)
	}
	if c := class(t, tab, widgetName); c.StableSince != 1 || !strings.HasPrefix(c.Why, "v1.0.0: "+want) {
		t.Errorf("VWidget = %+v, want stable since 1", c)
	}
}

// A method removed (or more methods in an older release) breaks the older release too.
func TestAnalyzeRemovedMethod(t *testing.T) {
	tab := analyze(t, testUses,
		release(t, "v1.0.0", 0, []string{getSize, setName, grow}, rgb, []string{heard}),
		release(t, "v1.1.0", 1, []string{getSize, setName}, rgb, []string{heard}),
	)
	if c := class(t, tab, widgetName); c.StableSince != 1 || !strings.Contains(c.Why, "4 virtual functions, more than the newest headers' 3") {
		t.Errorf("VWidget = %+v, want stable since 1: v1.0.0 has one more", c)
	}
	if tab.Oldest != 1 {
		t.Errorf("Oldest = %d, want 1", tab.Oldest)
	}
}

// A signature changed in place, an enumerator renumbered, and an overload appended to an
// older name (which moves slots under MSVC) each end the range.
func TestAnalyzeChangedDeclarations(t *testing.T) {
	t.Run("signature", func(t *testing.T) {
		tab := analyze(t, testUses,
			release(t, "v1.0.0", 0, []string{"int64_t getSize() const", setName}, rgb, []string{heard}),
			release(t, "v1.1.0", 1, []string{getSize, setName}, rgb, []string{heard}),
		)
		if m := member(t, tab, "IWidget::getSize"); m.Since != 1 || m.Added != 1 || !strings.Contains(m.Why, "declared as apiv::VWidget slot 1: int64_t getSize() const") {
			t.Errorf("getSize = %+v, want Since 1: v1.0.0 returns int64_t", m)
		}
	})
	t.Run("enumerator", func(t *testing.T) {
		tab := analyze(t, append(testUses, blueUse),
			release(t, "v1.0.0", 0, []string{getSize}, "kRED = 0, kBLUE", []string{heard}),
			release(t, "v1.1.0", 1, []string{getSize}, rgb, []string{heard}),
		)
		if m := member(t, tab, "Color::kBLUE"); m.Since != 1 || m.ABI != "= 2" || !strings.Contains(m.Why, "declared as = 1") {
			t.Errorf("kBLUE = %+v, want Since 1: v1.0.0 numbers it 1", m)
		}
		if tab.Oldest != 0 {
			t.Errorf("Oldest = %d, want 0: only --blue uses kBLUE", tab.Oldest)
		}
		if needs := tab.FlagNeeds(); len(needs) != 1 || needs[0].Flag != "--blue" || needs[0].Minor != 1 {
			t.Errorf("FlagNeeds = %+v, want --blue from 1", needs)
		}
	})
	t.Run("overload", func(t *testing.T) {
		tab := analyze(t, testUses,
			release(t, "v1.0.0", 0, []string{getSize, setName}, rgb, []string{heard}),
			release(t, "v1.1.0", 1, []string{getSize, setName, "bool setName(int64_t id)"}, rgb, []string{heard}),
		)
		if c := class(t, tab, widgetName); c.StableSince != 1 || !strings.Contains(c.Why, "appended as an overload of an older setName") {
			t.Errorf("VWidget = %+v, want stable since 1 for the appended overload", c)
		}
	})
}

// An interface the backend implements is called by TensorRT at every slot it knows: one
// inserted there breaks older releases even though the backend calls nothing of it.
func TestAnalyzeCallback(t *testing.T) {
	tab := analyze(t, testUses,
		release(t, "v1.0.0", 0, []string{getSize}, rgb, []string{heard}),
		release(t, "v1.1.0", 1, []string{getSize}, rgb, []string{"void started(int32_t n)", heard}),
	)
	if m := member(t, tab, "IListener"); m.Since != 1 || !strings.Contains(m.Why, "slot 0 is void heard(char const*)") {
		t.Errorf("IListener = %+v, want Since 1", m)
	}
	if tab.Oldest != 1 || !strings.HasPrefix(tab.Why, "IListener in v1.0.0") {
		t.Errorf("Oldest = %d (%s), want 1 for IListener", tab.Oldest, tab.Why)
	}
}

// A release whose header is not at hand says nothing of what it declares: the range ends
// there (unknown is not stable), though Added looks past it.
func TestAnalyzeUnknownHeader(t *testing.T) {
	tab := analyze(t, append(testUses, parserUse),
		release(t, "v1.0.0", 0, []string{getSize}, rgb, []string{heard}, parse),
		release(t, "v1.1.0", 1, []string{getSize}, rgb, []string{heard}),
		release(t, "v1.2.0", 2, []string{getSize}, rgb, []string{heard}, parse),
	)
	m := member(t, tab, "IParser::parse")
	if m.Since != 2 || m.Added != 0 || m.Why != "v1.1.0: its parser.h could not be read, so what it declares there is unchecked" {
		t.Errorf("parse = %+v, want Added 0, Since 2 (v1.1.0 unknown)", m)
	}
	if c := class(t, tab, "nvonnxparser::IParser"); c.StableSince != 2 || c.Why != "v1.1.0: its parser.h could not be read, so its layout there is unchecked" {
		t.Errorf("IParser = %+v, want stable since 2", c)
	}
	if tab.Oldest != 2 || tab.Why != "IParser::parse in v1.1.0: its parser.h could not be read, so what it declares there is unchecked" {
		t.Errorf("Oldest = %d (%s), want 2", tab.Oldest, tab.Why)
	}
}

// A use the newest headers lack is the uses list's mistake, not an old release's.
func TestAnalyzeRefusesUnknownUse(t *testing.T) {
	tags := []Tag{release(t, "v1.0.0", 0, []string{getSize}, rgb, []string{heard})}
	for _, u := range []Use{
		{Type: "nvinfer1::IWidget", Member: "shrink"},
		{Type: "nvinfer1::IGadget", Member: "getSize"},
		{Type: "nvinfer1::Color", Member: "kPINK"},
		{Type: "nvinfer1::IWidget", Member: "grow"}, // declared, but VWidget lacks what it forwards to
	} {
		if _, err := Analyze(tags, []Use{u}); err == nil || !strings.Contains(err.Error(), "in v1.0.0") {
			t.Errorf("Analyze with %+v = %v, want an error naming the newest tag", u, err)
		}
	}
	if _, err := Analyze(nil, testUses); err == nil {
		t.Error("Analyze of no tags succeeded")
	}
}

// Uses of another major are left out.
func TestAnalyzeUsesOfOtherMajors(t *testing.T) {
	only2 := Use{Type: "nvinfer1::IWidget", Member: "shrink", Majors: []int{2}}
	tab := analyze(t, append(testUses, only2), release(t, "v1.0.0", 0, []string{getSize}, rgb, []string{heard}))
	for _, m := range tab.Members {
		if m.Use.Member == "shrink" {
			t.Errorf("a use of major 2 is in major 1's table: %+v", m)
		}
	}
}
