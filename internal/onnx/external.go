package onnx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	// Size is the file's size when it exists.
	Size int64
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
		f.examine(dir)
		out[i] = *f
	}
	return out
}

// examine checks f.Location and fills in what the file system says.
func (f *ExternalFile) examine(dir string) {
	if f.Unsafe = UnsafeLocation(f.Location); f.Unsafe != "" {
		return
	}
	path := filepath.Join(dir, filepath.FromSlash(f.Location))
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Path = path
		return
	case err != nil:
		f.Path = path
		f.StatErr = err.Error()
		return
	}
	// The lexical checks passed; make sure links do not lead elsewhere.
	real, err1 := filepath.EvalSymlinks(path)
	realDir, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil {
		f.Path = path
		f.StatErr = errors.Join(err1, err2).Error()
		return
	}
	if rel, err := filepath.Rel(realDir, real); err != nil || !filepath.IsLocal(rel) {
		f.Unsafe = "it is a link that leads out of the model's folder"
		return
	}
	f.Path = path
	f.Exists = true
	f.Regular = st.Mode().IsRegular()
	f.Size = st.Size()
}

// UnsafeLocation returns why an external data location must not be read, or
// "" when it is a plain relative path inside the model's folder. Locations
// are POSIX paths relative to the model's folder; absolute paths, ".."
// elements, backslashes and NUL bytes are refused.
func UnsafeLocation(loc string) string {
	switch {
	case loc == "":
		return "it is empty"
	case strings.ContainsRune(loc, 0):
		return "it contains a NUL byte"
	case strings.HasPrefix(loc, "/") || filepath.IsAbs(loc) || filepath.VolumeName(loc) != "":
		return "it is an absolute path"
	case strings.ContainsRune(loc, '\\'):
		return "it contains a backslash; locations are relative paths with '/'"
	}
	for _, part := range strings.Split(loc, "/") {
		if part == ".." {
			return `it climbs out of the model's folder with ".."`
		}
	}
	return ""
}
