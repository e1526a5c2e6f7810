package cgo

import "github.com/trtbuild/trtbuild/internal/cgo/standin"

// The stand-in libraries of internal/cgo/standin, by the names these tests use.
type standIn = standin.Lib

const (
	inferNoFactorySrc = standin.InferNoFactorySrc
	parserSrc         = standin.ParserSrc
	pluginSrc         = standin.PluginSrc
	cudartSrc         = standin.CUDARTSrc
	unresolvedSrc     = standin.UnresolvedSrc
)

var (
	inferSrc      = standin.InferSrc
	cudartStandIn = standin.CUDART
	goodSet       = standin.Good
	buildStandIns = standin.Build
)
