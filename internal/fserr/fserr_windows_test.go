package fserr

import (
	"syscall"

	"golang.org/x/sys/windows"
)

var classCases = []classCase{
	{windows.ERROR_FILE_NOT_FOUND, Missing}, {windows.ERROR_PATH_NOT_FOUND, Missing},
	{syscall.ELOOP, Link}, {windows.ERROR_DIRECTORY, NotDir}, {windows.ERROR_ALREADY_EXISTS, Exists},
	{windows.ERROR_DIR_NOT_EMPTY, Exists}, {windows.ERROR_ACCESS_DENIED, Denied},
	{windows.ERROR_WRITE_PROTECT, ReadOnly}, {windows.ERROR_DISK_FULL, DiskFull},
	{windows.ERROR_HANDLE_DISK_FULL, DiskFull}, {windows.ERROR_NOT_ENOUGH_QUOTA, Quota},
	{windows.ERROR_SHARING_VIOLATION, Busy}, {windows.ERROR_LOCK_VIOLATION, Busy},
	{windows.ERROR_GEN_FAILURE, Other},
}

var adviceCases = []adviceCase{
	{windows.ERROR_DISK_FULL, "disk is full"}, {windows.ERROR_HANDLE_DISK_FULL, "disk is full"},
	{windows.ERROR_NOT_ENOUGH_QUOTA, "quota"}, {windows.ERROR_WRITE_PROTECT, "read-only"},
	{windows.ERROR_ACCESS_DENIED, "make its folder writable"},
}
