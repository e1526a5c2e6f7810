package fserr

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// table is the class of each Windows error the caches act on. Go's syscall package invents
// ELOOP, EISDIR and EEXIST on Windows (its own NT status mappings, and trtbuild's
// folder-relative opens, return them), so they are listed too.
var table = map[syscall.Errno]Class{
	windows.ERROR_FILE_NOT_FOUND:     Missing,
	windows.ERROR_PATH_NOT_FOUND:     Missing,
	windows.ERROR_INVALID_NAME:       Missing,
	windows.ERROR_DIRECTORY:          NotDir,
	syscall.EISDIR:                   IsDir,
	syscall.ELOOP:                    Link,
	windows.ERROR_CANT_ACCESS_FILE:   Link, // a reparse point of a kind this system cannot follow
	windows.ERROR_ALREADY_EXISTS:     Exists,
	windows.ERROR_FILE_EXISTS:        Exists,
	windows.ERROR_DIR_NOT_EMPTY:      Exists,
	syscall.EEXIST:                   Exists,
	windows.ERROR_ACCESS_DENIED:      Denied,
	windows.ERROR_PRIVILEGE_NOT_HELD: Denied,
	windows.ERROR_WRITE_PROTECT:      ReadOnly,
	windows.ERROR_DISK_FULL:          DiskFull,
	windows.ERROR_HANDLE_DISK_FULL:   DiskFull,
	windows.ERROR_NOT_ENOUGH_QUOTA:   Quota,
	windows.ERROR_SHARING_VIOLATION:  Busy,
	windows.ERROR_LOCK_VIOLATION:     Busy,
	windows.ERROR_IO_PENDING:         Busy,
}
