package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/inspect"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// Shell completion: cobra's `completion bash|zsh|fish` scripts call the hidden __complete
// command, which asks the functions here. The model argument completes to .onnx files and
// folders, flag values to their choices, and the shape flags to the input names of the model on
// the command line (with example dimensions after "NAME:").

// addCompletions registers the completion functions of the build command's arguments and flags.
func addCompletions(cmd *cobra.Command, o *buildflags.Flags) {
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 || o.ONNX != "" {
			return nil, cobra.ShellCompDirectiveNoFileComp // one model only
		}
		return modelFiles(toComplete)
	}
	_ = cmd.RegisterFlagCompletionFunc("onnx", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return modelFiles(toComplete)
	})
	choices := map[string][]string{
		"progress":              {"auto", "tty", "plain", "json", "quiet"},
		"backend":               {"auto", "tensorrt", "sim"},
		"hardware-compat":       {"none", "ampere+", "same-compute-capability"},
		"profiling-verbosity":   trtexec.ProfilingVerbosities,
		"precision-constraints": trtexec.PrecisionConstraints,
		"opt-level":             {"0", "1", "2", "3", "4", "5"},
		"sim-scenario":          builder.SimScenarioNames(),
	}
	for name, values := range choices {
		_ = cmd.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			for _, v := range values {
				if strings.HasPrefix(v, toComplete) {
					out = append(out, v)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		})
	}
	_ = cmd.RegisterFlagCompletionFunc("tactic-sources", listCompletion(func() []string {
		var out []string
		for _, s := range trtexec.TacticSources {
			out = append(out, "+"+strings.ToUpper(s), "-"+strings.ToUpper(s))
		}
		return out
	}()))
	var formats []string
	for _, t := range trtexec.DataTypes {
		formats = append(formats, t+":chw")
	}
	_ = cmd.RegisterFlagCompletionFunc("input-io-formats", listCompletion(formats))
	_ = cmd.RegisterFlagCompletionFunc("output-io-formats", listCompletion(formats))
	var pools []string
	for _, p := range builder.MemPoolNames {
		pools = append(pools, p+":")
	}
	_ = cmd.RegisterFlagCompletionFunc("mem-pool-size", listCompletion(pools))
	for i, name := range []string{"shapes", "min-shapes", "opt-shapes", "max-shapes"} {
		kind := buildflags.ShapeKind(i)
		_ = cmd.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return shapeCompletions(o, args, kind, toComplete)
		})
	}
}

// modelFiles completes a model path: the .onnx files and the folders (to descend into) whose
// path starts with toComplete.
func modelFiles(toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, prefix := filepath.Split(toComplete)
	read := dir
	if read == "" {
		read = "."
	}
	entries, err := os.ReadDir(read)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	dirs := false
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(prefix, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(read, name)); err == nil {
				isDir = st.IsDir()
			}
		}
		switch {
		case isDir:
			out = append(out, dir+name+"/")
			dirs = true
		case strings.EqualFold(filepath.Ext(name), ".onnx"):
			out = append(out, dir+name)
		}
	}
	directive := cobra.ShellCompDirectiveNoFileComp
	if dirs {
		directive |= cobra.ShellCompDirectiveNoSpace // a folder is completed further
	}
	return out, directive
}

// listCompletion completes a comma-separated list of values: the part after the last ',' from
// choices, keeping what comes before it.
func listCompletion(choices []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		head, last := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			head, last = toComplete[:i+1], toComplete[i+1:]
		}
		var out []cobra.Completion
		for _, c := range choices {
			if strings.HasPrefix(strings.ToLower(c), strings.ToLower(last)) {
				out = append(out, head+c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// shapeCompletions completes one entry of a shape flag from the model on the command line:
// "NAME:" for the inputs not yet in the list, and after "NAME:" the example dimensions the
// missing-shapes error would suggest for this flag.
func shapeCompletions(o *buildflags.Flags, args []string, kind buildflags.ShapeKind, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	model := o.ONNX
	if len(args) > 0 {
		model = args[0]
	}
	if model == "" {
		return cobra.AppendActiveHelp(nil, "give the model first (trtbuild MODEL.onnx --shapes …) to complete its input names"), none
	}
	return inspect.CompleteShapes(model, int(kind), toComplete), none
}
