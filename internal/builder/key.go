package builder

import (
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/worker"
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
// its worker, without building (and without the checks of its output files: Prepare and
// Plan.Key for those). warnings are the checks' warnings, for stderr.
func Key(o Options) (k BuildKey, warnings []string, err error) {
	src, err := openModel(o.Model)
	if err != nil {
		return k, nil, err
	}
	defer src.Close()
	req, _, warnings, err := prepareRequest(&o, src)
	if err != nil {
		return k, nil, err
	}
	p := &Plan{Model: src.Path(), Request: req, o: o, env: NewEnv(), src: src}
	k, err = p.Key()
	return k, warnings, err
}

// keyOf is the key of req on target, hashing the model src holds (with o.ModelHashes when set).
func keyOf(o *Options, src *onnx.Source, req worker.Request, target buildkey.Target) (BuildKey, error) {
	hash := o.ModelHashes
	if hash == nil {
		hash = buildkey.HashSource
	}
	hashes, err := hash(src)
	if err != nil {
		return BuildKey{}, exitcode.Wrap(exitcode.Usage, err)
	}
	parts, _, err := buildkey.FromHashes(req, target, hashes)
	if err != nil {
		return BuildKey{}, exitcode.Wrap(exitcode.Usage, err)
	}
	return BuildKey{Key: parts.Key(), Parts: parts}, nil
}

// KeyOn computes the key of the build o describes as it would run on target, a builder and
// GPU recorded elsewhere (those an engine's manifest names), without probing this machine or
// loading TensorRT: the key an engine built there would have now, from the model as it is. As
// in a build, a simulated build for a matrix target (o.KeyTarget) is keyed as that GPU's.
func KeyOn(o Options, target buildkey.Target) (BuildKey, error) {
	if target.Backend != "tensorrt" && target.Backend != "sim" {
		return BuildKey{}, exitcode.Usagef("invalid backend %q: a key is of a tensorrt or a sim build", target.Backend)
	}
	src, err := openModel(o.Model)
	if err != nil {
		return BuildKey{}, err
	}
	defer src.Close()
	req, _, _, err := prepareRequestOn(&o, src, target.Backend)
	if err != nil {
		return BuildKey{}, err
	}
	if o.KeyTarget != nil && target.Backend == "sim" {
		target.GPU, target.ComputeCapability, target.MIG = o.KeyTarget.GPU, o.KeyTarget.ComputeCapability, o.KeyTarget.MIG
	}
	return keyOf(&o, src, req, target)
}
