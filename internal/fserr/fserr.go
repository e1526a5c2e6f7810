// Package fserr sorts the errors of file-system calls into the few kinds trtbuild's caches
// act on (a missing name, a link where none may be, a full disk, ...), so that each decision
// and message is written once and each operating system only supplies the table of its own
// error numbers (fserr_unix.go, fserr_windows.go).
package fserr

import (
	"errors"
	"syscall"
)

// Class is a kind of file-system error.
type Class int

// The kinds of error; Other is every error no table names.
const (
	Other    Class = iota
	Missing        // the name is not there (ENOENT; ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND)
	NotDir         // a part of the path is not a folder (ENOTDIR; STATUS_NOT_A_DIRECTORY)
	IsDir          // a folder where a file was expected (EISDIR; STATUS_FILE_IS_A_DIRECTORY)
	Link           // a symbolic link, or on Windows a reparse point, where none is followed (ELOOP)
	Exists         // the name is taken (EEXIST, ENOTEMPTY; ERROR_ALREADY_EXISTS, ERROR_DIR_NOT_EMPTY)
	Denied         // permission denied (EACCES, EPERM; ERROR_ACCESS_DENIED)
	ReadOnly       // a read-only file system or medium (EROFS; ERROR_WRITE_PROTECT)
	DiskFull       // no space left (ENOSPC; ERROR_DISK_FULL, ERROR_HANDLE_DISK_FULL)
	Quota          // the disk quota is used up (EDQUOT; ERROR_NOT_ENOUGH_QUOTA)
	Busy           // another open or lock is in the way (EWOULDBLOCK; ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION)
)

// Of returns the class of err, looking through wrapping (*fs.PathError and fmt.Errorf's %w)
// for the system's error number.
func Of(err error) Class {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return Other
	}
	return table[errno]
}

// Is reports whether err is of class c.
func Is(err error, c Class) bool { return err != nil && c != Other && Of(err) == c }

// Advice returns what to do about an I/O error: the fix for its cause (a full disk, a
// used-up quota, a read-only medium, a folder given for a file), or def.
func Advice(err error, def string) string {
	switch Of(err) {
	case DiskFull:
		return "the disk is full: free some space"
	case Quota:
		return "the disk quota is used up: free some space"
	case ReadOnly:
		return "the file system is read-only"
	case IsDir:
		return "it is a folder: give a file path"
	}
	return def
}
