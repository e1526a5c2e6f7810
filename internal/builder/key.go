package builder

import (
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/probe"
)

// KeyPrefix starts every build key.
var KeyPrefix = buildkey.Prefix

// BuildKey is the content key of a build and its parts: what the engine cache keys an engine
// by (see docs/engine-cache.md).
type BuildKey struct {
	Key   string         `json:"key"`
	Parts buildkey.Parts `json:"parts"`
}

// Key computes the key of the build o describes, from the same request the build would send
// its worker, without building. warnings are the checks' warnings, for stderr.
func Key(o Options) (k BuildKey, warnings []string, err error) {
	model, err := checkModelPath(o.Model)
	if err != nil {
		return k, nil, err
	}
	req, _, warnings, err := prepareRequest(&o, model)
	if err != nil {
		return k, nil, err
	}
	target, err := probe.Target(req.Backend, req.Device, req.TensorRTLib)
	if err != nil {
		return k, warnings, exitcode.Wrap(exitcode.Failed, err)
	}
	parts, _, err := buildkey.FromRequest(req, target)
	if err != nil {
		return k, warnings, exitcode.Usagef("%v", err)
	}
	return BuildKey{Key: parts.Key(), Parts: parts}, warnings, nil
}
