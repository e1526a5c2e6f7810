package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
)

// newKeyCmd returns `trtbuild key MODEL [build flags]`, which prints the build key that
// --engine-cache would look up, and its parts.
func newKeyCmd(s *streams) *cobra.Command {
	o := &buildflags.Flags{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "key [build flags] MODEL.onnx",
		Short: "Print the build key of a build: what the engine cache keys an engine by",
		Long: fmt.Sprintf(`key prints the content key of the build that the same flags would run, without building:
the key (%s and the SHA-256 of its parts), then the parts. The parts are the hash of the ONNX
graph without its weights, the hash of the weights (external data included), the converter
version when --fp16/--bf16 converts the model (TensorRT 11), TensorRT's full version with
its build number, the GPU's name, compute capability and multiprocessor count, the
hardware- and version-compatibility modes, every builder setting, the profiles, and the plugin
libraries by content. The model's path is not part of the key. See docs/engine-cache.md.`, builder.KeyPrefix+"…"),
		Example: `  trtbuild key model.onnx --fp16 --shapes images:8x3x224x224
  trtbuild key --backend sim testdata/models/convnet.onnx --json`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return keyRun(s, o, args, asJSON)
		},
	}
	cmd.Flags().SetNormalizeFunc(buildflags.Normalize)
	buildflags.Bind(cmd.Flags(), o)
	cmd.Flags().BoolVar(&asJSON, "json", false, "write {\"key\": …, \"parts\": …} as one JSON document")
	return cmd
}

func keyRun(s *streams, o *buildflags.Flags, args []string, asJSON bool) error {
	opts, err := buildOptions(o, args)
	if err != nil {
		return err
	}
	k, warnings, err := builder.Key(opts)
	for _, w := range warnings {
		fmt.Fprintln(s.Err, "trtbuild: warning: "+escapeControls(w))
	}
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(k)
	}
	b, err := json.MarshalIndent(k.Parts, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%s\n%s\n", k.Key, b)
	return nil
}
