package outpath

// Test-only API of package outpath: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

// CleanStale is cleanStaleAt for the folder dir, opened here.
func CleanStale(dir, base string) []string {
	d, err := openFolder(dir, nil)
	if err != nil {
		return nil
	}
	defer d.Close()
	return cleanStaleAt(d, base)
}
