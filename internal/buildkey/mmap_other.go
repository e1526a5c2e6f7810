//go:build !unix && !windows

package buildkey

import "os"

// mapFile reads path into memory where memory mapping is not available.
func mapFile(path string) (data []byte, release func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
