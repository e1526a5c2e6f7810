package plan

// Test-only API of package plan: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import "github.com/trtbuild/trtbuild/internal/regfile"

// ReadFile reads the header of the engine file at path.
func ReadFile(path string) (Header, error) {
	f, _, err := regfile.Open(path) // never blocks on a FIFO
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	return Read(f)
}
