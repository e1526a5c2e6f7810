package cgo

// Test-only API of package cgo: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

// Infos lists what was found, in load order.
func (t *TensorRTLibraries) Infos() []LibraryInfo {
	var out []LibraryInfo
	for _, l := range t.all() {
		if l != nil {
			out = append(out, l.Info)
		}
	}
	return out
}
