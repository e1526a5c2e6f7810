package enginecache

import (
	"errors"
	"os"
)

// Every file and folder of the cache is reached from an open folder, never by a path that
// someone could change meanwhile, never through a symbolic link (on Windows: never through
// any reparse point, junctions included) and never blocking on a FIFO; what is not of the
// expected kind is refused before it is read. fsat_unix.go does it with the *at system calls
// (O_NOFOLLOW, O_NONBLOCK, fstat); fsat_windows.go with NtCreateFile relative to a held
// folder handle (FILE_OPEN_REPARSE_POINT, then the handle's attributes). Both give these
// functions:
//
//	openCacheDir(dir)                 the cache folder itself (the user's path: links followed)
//	openDirAt(parent, name)           a folder in parent, refusing a link or anything else
//	openFileAt(parent, name)          a regular file in parent, for reading (else errNotRegular)
//	mkdirAt(parent, name, perm)       make a folder if missing, and open it
//	mkdirTempAt(parent, name, perm)   make a new folder for an entry being written
//	createAt(parent, name)            create a new file (never an existing one, never a link's target)
//	statAt(parent, name), statFile(f) what is there, links not followed
//	touchAt(parent, name, t)          set the modification time
//	renameAt(p1, n1, p2, n2)          rename, failing with fserr.Exists when n2 is taken
//	removeTreeAt(parent, name, depth) remove a file, link, or folder with what is in it
//	reopenDir(d), listNames(d)        a folder's names, from a handle of their own
//	setDirPerm(d, perm), syncDir(d)   a finished entry's folder
//
// and an attr, the facts about a file the cache acts on: regular(), size(), mtime(), id()
// (device and inode; volume serial and file index on Windows), mine() (owned by this user)
// and what trust.go checks.

// errNotRegular marks a name that is there but is not a regular file (a FIFO, a device, a
// folder or a link).
var errNotRegular = errors.New("not a regular file")

// fileID identifies a file on its file system: device and inode on Unix, volume serial number
// and file index on Windows.
type fileID struct{ dev, ino uint64 }

// known says whether the id was read.
func (id fileID) known() bool { return id.ino != 0 }

// listNames lists the folder d from its current offset.
func listNames(d *os.File) ([]string, error) { return d.Readdirnames(-1) }
