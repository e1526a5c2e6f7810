package buildflags

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestDurationFlag(t *testing.T) {
	var d time.Duration
	v := newDuration(&d, 30*time.Second)
	if v.String() != "30s" {
		t.Errorf("default shows %q", v.String())
	}
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{{"2s", 2 * time.Second}, {"1h30m", 90 * time.Minute}, {"2562047h", 2562047 * time.Hour}, {"0", 0}} {
		if err := v.Set(tt.in); err != nil || d != tt.want {
			t.Errorf("Set(%q): %v, %v", tt.in, d, err)
		}
	}
	if v.String() != "" {
		t.Errorf("zero shows %q, want nothing", v.String())
	}
	for in, want := range map[string]string{
		"2":    "a duration needs a unit: use a unit, like 2s or 2m",
		"1.5":  "a duration needs a unit: use a unit, like 1.5s or 1.5m",
		"soon": "not a duration: write a number with a unit, like 90s, 20m or 1h30m",
		// Written right but beyond a time.Duration: too long, not "not a duration".
		"9999999h":            "9999999h is too long: the longest duration is 2562047h (about 292 years)",
		"2562048h":            "2562048h is too long: the longest duration is 2562047h (about 292 years)",
		"99999999999999999s":  "99999999999999999s is too long: the longest duration is 2562047h (about 292 years)",
		"1h9999999999999999m": "1h9999999999999999m is too long: the longest duration is 2562047h (about 292 years)",
		"9999999hours":        "not a duration: write a number with a unit, like 90s, 20m or 1h30m",
		"-5s":                 "-5s is negative: give a positive duration, like 20m",
		"-1h30m":              "-1h30m is negative: give a positive duration, like 20m",
	} {
		if err := v.Set(in); err == nil || err.Error() != want {
			t.Errorf("Set(%q): %v, want %q", in, err, want)
		}
	}
}

// TestNoFlagsFoldAlike: Normalize accepts a build flag in any case and without dashes, which
// is only sound while no two flags (nor a trtexec spelling and another flag) fold alike.
func TestNoFlagsFoldAlike(t *testing.T) {
	fs, _ := NewFlagSet("build")
	owner := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if prev, ok := owner[Fold(f.Name)]; ok {
			t.Errorf("--%s and --%s fold alike (%q)", prev, f.Name, Fold(f.Name))
		}
		owner[Fold(f.Name)] = f.Name
	})
	for name, flag := range trtexecNames {
		if fs.Lookup(flag) == nil || fs.Lookup(flag).Name != flag {
			t.Errorf("trtexec's --%s maps to --%s, which is no flag", name, flag)
		}
		if other, ok := owner[Fold(name)]; ok && other != flag {
			t.Errorf("trtexec's --%s means --%s but folds like --%s", name, flag, other)
		}
	}
}

func TestNormalizeAnyCase(t *testing.T) {
	fs, _ := NewFlagSet("build")
	for _, tt := range []struct{ in, want string }{
		{"min-shapes", "min-shapes"},
		{"minShapes", "min-shapes"},
		{"MinShapes", "min-shapes"},
		{"minshapes", "min-shapes"},
		{"MINSHAPES", "min-shapes"},
		{"saveEngine", "save-engine"},
		{"SAVEENGINE", "save-engine"},
		{"saveengine", "save-engine"},
		{"noTF32", "no-tf32"},
		{"notf32", "no-tf32"},
		{"NoTf32", "no-tf32"},
		{"builderoptimizationlevel", "opt-level"},
		{"VC", "version-compatible"},
		{"timingcachefile", "timing-cache"},
		{"FP16", "fp16"},
		{"memPoolSize", "mem-pool-size"},
		{"mempoolsize", "mem-pool-size"},
		// Not build flags: camelCase still becomes kebab-case, for a command's own flags.
		{"checkBuilder", "check-builder"},
		{"nosuchFlag", "nosuch-flag"},
	} {
		if got := string(Normalize(fs, tt.in)); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Every flag is found by its own name, lower-cased, upper-cased and in trtexec's camelCase.
	fs.VisitAll(func(f *pflag.Flag) {
		for _, in := range []string{f.Name, strings.ToLower(f.Name), strings.ToUpper(f.Name), camel(f.Name)} {
			if got := fs.Lookup(in); got != f {
				t.Errorf("--%s is not found as --%s", f.Name, in)
			}
		}
	})
}

// TestShorthandsUntouched: -o and -v stay the only one-letter names; -O or --o are not them.
func TestShorthandsUntouched(t *testing.T) {
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-o", "x.engine", "-v"}, true},
		{[]string{"-O", "x.engine"}, false},
		{[]string{"-V"}, false},
		{[]string{"--o", "x.engine"}, false},
		{[]string{"--V"}, false},
	} {
		fs, o := NewFlagSet("build")
		err := fs.Parse(tt.args)
		if (err == nil) != tt.ok {
			t.Errorf("%v: error %v, want ok=%v", tt.args, err, tt.ok)
		}
		if tt.ok && (o.Opts.Engine != "x.engine" || !o.Opts.Verbose) {
			t.Errorf("%v: engine %q, verbose %v", tt.args, o.Opts.Engine, o.Opts.Verbose)
		}
	}
}

// camel is a kebab-case name in trtexec's camelCase: min-shapes → minShapes.
func camel(name string) string {
	parts := strings.Split(name, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

func TestClosest(t *testing.T) {
	flags := []string{"fp16", "fp8", "bf16", "int8", "save-engine", "min-shapes", "max-shapes", "json"}
	commands := []string{"completion", "convert", "engine", "help", "inspect", "key", "matrix", "mcp", "replay", "report", "serve", "version"}
	for _, tt := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"fp61", flags, "fp16"},
		{"fp9", flags, "fp8"},
		{"saveEngin", flags, "save-engine"},
		{"SAVE-ENIGNE", flags, "save-engine"},
		{"minshape", flags, "min-shapes"},
		{"JSON", flags, "json"},
		{"jsn", flags, "json"},
		{"inpsect", commands, "inspect"},
		{"insepct", commands, "inspect"},
		{"verison", commands, "version"},
		{"repot", commands, "report"},
		{"convret", commands, "convert"},
		{"fp16", flags, ""},       // the name itself
		{"frobnicate", flags, ""}, // nothing near
		{"nosuch", commands, ""},  // nothing near
		{"ky", commands, ""},      // too short to guess at
		{"x", flags, ""},          // too short to guess at
		{"model.onnx", commands, ""},
	} {
		got, ok := Closest(tt.name, tt.candidates)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Closest(%q) = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0},
		{"fp61", "fp16", 1}, {"inpsect", "inspect", 1}, {"kitten", "sitting", 3},
		{"ca", "abc", 3}, {"fp61", "fp8", 2},
	} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
