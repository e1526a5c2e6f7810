package cgo

import (
	"os"
	"testing"
)

const compiled10_16 = 101600 // NV_TENSORRT_VERSION of the headers the tests pretend to be built with

// childHelpers are what the test binary runs instead of the tests when the environment
// variable named by the key is set (TestMain): the child processes of tests whose installs
// (for the life of a process) must not outlive them. Files add theirs in init.
var childHelpers = map[string]func() int{}

func TestMain(m *testing.M) {
	for env, helper := range childHelpers {
		if os.Getenv(env) != "" {
			code := helper()
			FlushCoverage()
			os.Exit(code)
		}
	}
	code := m.Run()
	FlushCoverage()
	os.Exit(code)
}
