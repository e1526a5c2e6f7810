package cgo

import "github.com/trtbuild/trtbuild/internal/cgo/standin"

// The stand-in libraries of internal/cgo/standin, by the names these tests use.
type standIn = standin.Lib

const (
	inferNoFactorySrc = standin.InferNoFactorySrc
	parserSrc         = standin.ParserSrc
	pluginSrc         = standin.PluginSrc
	unresolvedSrc     = standin.UnresolvedSrc
)

var (
	inferSrc      = standin.InferSrc
	driverStandIn = standin.Driver
	goodSet       = standin.Good
	buildStandIns = standin.Build
)
