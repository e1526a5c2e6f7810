package convert

// Test-only API of package convert: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import "github.com/trtbuild/trtbuild/internal/convert/modelio"

// Analyze reads the model at path and converts it in memory without
// writing anything, for a summary of what ConvertFile would do.
func Analyze(path string, opts Options) (Summary, error) {
	defer tightGC()()
	m, err := modelio.Load(path)
	if err != nil {
		return Summary{}, err
	}
	return Convert(m, opts)
}
