package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/outpath"
)

// ExternalFile is one file that a model's external data points into, and
// what the file system says about it.
type ExternalFile struct {
	// Location is the path as written in the model.
	Location string
	// Path is Location joined to the model's folder; "" when Unsafe is set.
	Path string
	// Unsafe says why Location is refused: it is absolute, climbs out of the
	// model's folder with "..", or is a link that leads out of it. Reading
	// such a file would let a model read any file on the machine, a known
	// class of ONNX vulnerability. When Unsafe is set the file system is not
	// consulted.
	Unsafe string
	// Tensors is the number of tensors whose data is in this file.
	Tensors int
	// Needed is the size the file must have at least: the largest
	// offset + length over its tensors.
	Needed int64
	// Exists is true when the file exists.
	Exists bool
	// Regular is true when it is a regular file (after following links).
	Regular bool
	// Size is the file's size when it exists, and Info what the file system said of it.
	Size int64
	Info os.FileInfo
	// StatErr is set when the file could not be examined for a reason other
	// than not existing (permissions, for example).
	StatErr string
}

// OK reports whether the file is safe to read, exists, is a regular file and
// is large enough.
func (f ExternalFile) OK() bool {
	return f.Unsafe == "" && f.Exists && f.Regular && f.StatErr == "" && f.Size >= f.Needed
}

// ExternalFiles groups the model's external data references by file, in
// order of first reference, and examines each file in dir, the folder that
// holds the model. References with an empty location are left out (their
// ExternalRef has a Problem).
func (m *Model) ExternalFiles(dir string) []ExternalFile {
	return m.externalFiles(dir, func(loc string) (os.FileInfo, error) { return StatExternal(dir, loc) })
}

// externalFiles is ExternalFiles, examining each file with stat.
func (m *Model) externalFiles(dir string, stat func(loc string) (os.FileInfo, error)) []ExternalFile {
	var files []*ExternalFile
	by := map[string]*ExternalFile{}
	for _, ref := range m.External {
		if ref.Location == "" {
			continue
		}
		f, ok := by[ref.Location]
		if !ok {
			f = &ExternalFile{Location: ref.Location}
			by[ref.Location] = f
			files = append(files, f)
		}
		f.Tensors++
		if end := satAdd(ref.Offset, ref.Length); end > f.Needed {
			f.Needed = end
		}
	}
	out := make([]ExternalFile, len(files))
	for i, f := range files {
		f.examine(dir, stat)
		out[i] = *f
	}
	return out
}

// examine checks f.Location and fills in what the file system says, through
// StatExternal, the checks every reader of external data makes.
func (f *ExternalFile) examine(dir string, stat func(loc string) (os.FileInfo, error)) {
	st, err := stat(f.Location)
	var ee *ExternalError
	if err != nil && !errors.As(err, &ee) {
		ee = &ExternalError{Problem: ExternalUnreadable, Reason: err.Error()}
	}
	if ee != nil && ee.Problem == ExternalUnsafe {
		f.Unsafe = ee.Reason
		return
	}
	f.Path = filepath.Join(dir, filepath.FromSlash(f.Location))
	switch {
	case ee == nil:
	case ee.Problem == ExternalMissing:
		return
	case ee.Problem == ExternalUnreadable:
		f.StatErr = ee.Reason
		return
	}
	f.Exists = true
	f.Regular = ee == nil
	if st != nil {
		f.Size, f.Info = st.Size(), st
	}
}

// UnsafeLocation returns why an external data location must not be read, or
// "" when it is a plain relative path inside the model's folder. Locations
// are POSIX paths relative to the model's folder; absolute paths, ".."
// elements, backslashes and NUL bytes are refused. The rule is a function of
// the string alone, the same on every system, because a model is copied
// between systems: what would leave the folder, or name something other than
// a file in it, on Windows is refused on Linux too. So are a leading '\'
// (a drive's root, a UNC share \\server\share, a device path \\?\ or \\.\),
// a drive letter (C:\x, or C:x, relative to drive C's current folder), and
// any part Windows does not read as a file of the folder
// (outpath.WindowsNameProblem): a ':' (an alternate data stream,
// weights.bin:stream), a name Windows maps to a device (con.bin, aux), a
// trailing dot or space, or a character Windows forbids.
func UnsafeLocation(loc string) string {
	switch {
	case loc == "":
		return "it is empty"
	case strings.ContainsRune(loc, 0):
		return "it contains a NUL byte"
	case strings.HasPrefix(loc, "/"):
		return "it is an absolute path"
	case strings.HasPrefix(loc, `\`):
		return `it is an absolute path on Windows (from a drive's root, a share \\server\share or a device \\?\)`
	case hasDrive(loc) && len(loc) > 2 && (loc[2] == '/' || loc[2] == '\\'):
		return "it is an absolute path"
	case hasDrive(loc):
		return fmt.Sprintf("it is relative to the current folder of drive %s, outside the model's folder on Windows", loc[:2])
	case strings.ContainsRune(loc, '\\'):
		return "it contains a backslash; locations are relative paths with '/'"
	}
	for _, part := range strings.Split(loc, "/") {
		if part == ".." {
			return `it climbs out of the model's folder with ".."`
		}
	}
	for _, part := range strings.Split(loc, "/") {
		if why := outpath.WindowsNameProblem(part); why != "" {
			return fmt.Sprintf("its part %q %s", part, why)
		}
	}
	return ""
}

// hasDrive reports whether loc starts with a drive letter and a colon (C:\x, C:x).
func hasDrive(loc string) bool {
	return len(loc) >= 2 && loc[1] == ':' && 'a' <= loc[0]|0x20 && loc[0]|0x20 <= 'z'
}

// CheckContained returns an error for the first external data file of m,
// whose folder is dir, that must not be read whatever else is skipped: one
// outside the folder (see UnsafeLocation and OpenExternal) or one that is
// not a regular file, which would block the reader. Missing and short files
// are left to the reader, which reports them. The error is one line naming
// the file and the fix.
func (m *Model) CheckContained(dir string) error {
	for _, f := range m.ExternalFiles(dir) {
		switch {
		case f.Unsafe != "":
			return fmt.Errorf("%s refers to external data file %q, which is refused because %s; keep external data files in the model's folder and refer to them by relative path",
				filepath.Base(m.Path), f.Location, f.Unsafe)
		case f.Exists && !f.Regular:
			return fmt.Errorf("external data %q of %s is not a regular file; replace it with the data file the model was exported with",
				f.Location, filepath.Base(m.Path))
		}
	}
	return nil
}
