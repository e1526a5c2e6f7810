package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/buildflags"
)

// TestTypos: a mistyped flag, subcommand or help topic is a usage error of one line (exit 2)
// that names the one meant, where one is near; never a model named "inpsect" or the root's help.
func TestTypos(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	tests := []struct {
		name string
		args []string
		want string // the whole line after "trtbuild: "
	}{
		{"flag", []string{"--backend", "sim", "--fp61", model}, "unknown flag: --fp61 (did you mean --fp16?); run 'trtbuild --help' for the flags"},
		{"flag with a value", []string{"--backend", "sim", "--saveEngin=x.engine", model}, "unknown flag: --saveEngin (did you mean --save-engine?); run 'trtbuild --help' for the flags"},
		{"flag far from any", []string{"--backend", "sim", "--frobnicate", model}, "unknown flag: --frobnicate; run 'trtbuild --help' for the flags"},
		{"hidden flags are not suggested", []string{"--backend", "sim", "--sim-sed=1", model}, "unknown flag: --sim-sed (did you mean --sim-speed?); run 'trtbuild --help' for the flags"},
		{"subcommand's flag", []string{"inspect", "--jsn", model}, "unknown flag: --jsn (did you mean --json?); run 'trtbuild inspect --help' for the flags"},
		{"subcommand's flag in capitals", []string{"engine", "inspect", "--JSON", "x.engine"}, "unknown flag: --JSON (did you mean --json?); run 'trtbuild engine inspect --help' for the flags"},
		{"key's flag", []string{"key", "--jsno", model}, "unknown flag: --jsno (did you mean --json?); run 'trtbuild key --help' for the flags"},
		{"nested subcommand's flag", []string{"matrix", "list", "--bogus-flag", "m.yaml"}, "unknown flag: --bogus-flag; run 'trtbuild matrix list --help' for the flags"},
		{"command", []string{"inpsect", model}, `unknown command "inpsect" (did you mean "inspect"?); run 'trtbuild --help' for the commands`},
		{"command alone", []string{"verison"}, `unknown command "verison" (did you mean "version"?); run 'trtbuild --help' for the commands`},
		{"command with build flags", []string{"--backend", "sim", "convret", model}, `unknown command "convret" (did you mean "convert"?); run 'trtbuild --help' for the commands`},
		{"subcommand", []string{"matrix", "biuld", "m.yaml"}, `unknown command "biuld" for "trtbuild matrix" (did you mean "build"?); run 'trtbuild matrix --help' for the commands`},
		{"engine's subcommand", []string{"engine", "inpsect", "x.engine"}, `unknown command "inpsect" for "trtbuild engine" (did you mean "inspect"?); run 'trtbuild engine --help' for the commands`},
		{"argument of a command without", []string{"version", "extra"}, `unknown command "extra" for "trtbuild version"; run 'trtbuild version --help' for usage`},
		{"help topic", []string{"help", "nosuch"}, `unknown help topic "nosuch"; run 'trtbuild help' for the commands`},
		{"help topic typo", []string{"help", "inpsect"}, `unknown help topic "inpsect" (did you mean "inspect"?); run 'trtbuild help' for the commands`},
		{"help subtopic typo", []string{"help", "matrix", "biuld"}, `unknown help topic "matrix biuld" (did you mean "matrix build"?); run 'trtbuild help' for the commands`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, tt.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if got := strings.TrimSuffix(r.stderr, "\n"); got != "trtbuild: "+tt.want {
				t.Errorf("stderr:\n%s\nwant:\ntrtbuild: %s", r.stderr, tt.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout should be empty on a usage error, got:\n%s", r.stdout)
			}
		})
	}
}

// TestCommandTypoInJSON: a program reading --progress json learns of the typo from the stream.
func TestCommandTypoInJSON(t *testing.T) {
	t.Parallel() // a real subprocess
	r := trtbuild(t, nil, "--progress", "json", "inpsect", "m.onnx")
	var res struct {
		Type, Status, Error string
		UsageError          bool `json:"usage_error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 2 {
		t.Fatalf("exit %d, %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	if res.Type != "result" || res.Status != "failed" || !res.UsageError || res.Error != `unknown command "inpsect" (did you mean "inspect"?)` {
		t.Errorf("result %+v", res)
	}
}

// TestHelpTopics: help for a command that exists is still its help, with exit 0.
func TestHelpTopics(t *testing.T) {
	t.Parallel() // real subprocesses
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "Available Commands:"},
		{[]string{"help", "inspect"}, "trtbuild inspect MODEL.onnx"},
		{[]string{"help", "matrix", "build"}, "trtbuild matrix build"},
	} {
		r := trtbuild(t, nil, tt.args...)
		if r.code != 0 || !strings.Contains(r.stdout, tt.want) || r.stderr != "" {
			t.Errorf("%v: exit %d, want 0 and %q\nstdout: %s\nstderr: %s", tt.args, r.code, tt.want, r.stdout, r.stderr)
		}
	}
	// Completion of help's topics is cobra's, still.
	r := trtbuild(t, nil, "__complete", "help", "ins")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "inspect\t") {
		t.Errorf("completing help ins: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestModelNamedLikeACommand: a file named like a typo of a command is a model all the same.
func TestModelNamedLikeACommand(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := filepath.Dir(repoModel(t, "convnet.onnx"))
	if err := os.Rename(filepath.Join(dir, "convnet.onnx"), filepath.Join(dir, "inpsect")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--backend", "sim", "--sim-speed", "50", "--progress", "quiet", "-o", "out.engine", "inpsect")
	cmd.Dir = dir
	cmd.Env = testEnv(t)
	r := runResult(t, cmd)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.engine")); err != nil {
		t.Errorf("no engine built from the model named inpsect: %v", err)
	}
}

// TestTrtexecFlagsAnyCase: trtexec's flags work as its users type them from memory, in any
// case; the shorthands -o and -v are as they were.
func TestTrtexecFlagsAnyCase(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	for _, tt := range []struct {
		name  string
		flags []string
	}{
		{"lower case", []string{"--saveengine={engine}", "--minshapes=images:1x3x64x64", "--optshapes=images:4x3x64x64", "--maxshapes=images:8x3x64x64", "--notf32", "--builderoptimizationlevel=3"}},
		{"upper case", []string{"--SAVEENGINE={engine}", "--MINSHAPES=images:1x3x64x64", "--OPTSHAPES=images:4x3x64x64", "--MAXSHAPES=images:8x3x64x64", "--NOTF32"}},
		{"mixed case", []string{"--SaveEngine={engine}", "--MinShapes=images:1x3x64x64", "--OptShapes=images:4x3x64x64", "--MaxShapes=images:8x3x64x64", "--NoTF32"}},
		{"shorthands", []string{"-o", "{engine}", "-v", "--min-shapes=images:1x3x64x64", "--opt-shapes=images:4x3x64x64", "--max-shapes=images:8x3x64x64"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			model := repoModel(t, "dynamic_batch.onnx")
			engine := filepath.Join(filepath.Dir(model), "any-case.engine")
			args := []string{"--backend=sim", "--sim-speed=50", "--progress=quiet", "--ONNX=" + model}
			for _, f := range tt.flags {
				args = append(args, strings.ReplaceAll(f, "{engine}", engine))
			}
			r := trtbuild(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
			}
			if _, err := os.Stat(engine); err != nil {
				t.Errorf("the engine flag was not honoured: %v", err)
			}
		})
	}
	// A shorthand in the other case is not the shorthand.
	for _, args := range [][]string{{"-O", "x.engine"}, {"-V"}} {
		r := trtbuild(t, nil, append([]string{"--backend", "sim", "m.onnx"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "unknown shorthand flag") {
			t.Errorf("%v: exit %d, %s", args, r.code, r.stderr)
		}
	}
}

// TestNoTwoFlagsFoldAlike: every command's flags (its own and those it inherits) stay apart
// when lower-cased without dashes, which is how a build flag is looked up in any case and how
// a typo is matched to the flag meant.
func TestNoTwoFlagsFoldAlike(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		seen := map[string]string{}
		check := func(f *pflag.Flag) {
			k := buildflags.Fold(f.Name)
			if prev, ok := seen[k]; ok && prev != f.Name {
				t.Errorf("%s: --%s and --%s fold alike", c.CommandPath(), prev, f.Name)
			}
			seen[k] = f.Name
		}
		c.Flags().VisitAll(check)
		c.InheritedFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := newRootCmd(&streams{}, nil)
	root.InitDefaultHelpFlag()
	walk(root)
	// The build's flags, looked up in any case, are the same flags.
	f := root.Flags()
	f.VisitAll(func(fl *pflag.Flag) {
		for _, name := range []string{strings.ToLower(fl.Name), strings.ToUpper(fl.Name)} {
			if got := f.Lookup(name); got != fl {
				t.Errorf("--%s is not --%s", name, fl.Name)
			}
		}
	})
}
