//go:build !windows

package history

// windowsPaths says whether paths use the backslash (only on Windows).
const windowsPaths = false
