// Package filestamp says whether a file is still the one that was read: its identity (device
// and inode; on Windows the volume serial number and file index), its size, and its
// modification and change times. The change time moves with every write, rename, link and
// change of mode, and no one can set it back, so a file replaced under its name, or written to
// in place, and put back has another stamp.
package filestamp

import "os"

// Stamp is one state of a file. The zero Stamp is no file.
type Stamp struct {
	Dev, Ino uint64
	Size     int64
	// ModTime and ChangeTime are in nanoseconds (on Windows, 100 ns since 1601).
	ModTime, ChangeTime int64
}

// Of is the stamp of the open file f, read through its descriptor.
func Of(f *os.File) (Stamp, error) { return of(f) }

// SameFile reports whether a and b are stamps of one file (whatever its content).
func (a Stamp) SameFile(b Stamp) bool { return a.Dev == b.Dev && a.Ino == b.Ino }
