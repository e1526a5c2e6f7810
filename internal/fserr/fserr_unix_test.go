//go:build !windows

package fserr

import "syscall"

var classCases = []classCase{
	{syscall.ENOENT, Missing}, {syscall.ELOOP, Link}, {syscall.ENOTDIR, NotDir},
	{syscall.EEXIST, Exists}, {syscall.ENOTEMPTY, Exists}, {syscall.EACCES, Denied},
	{syscall.EROFS, ReadOnly}, {syscall.ENOSPC, DiskFull}, {syscall.EDQUOT, Quota},
	{syscall.EWOULDBLOCK, Busy}, {syscall.EIO, Other},
}

var adviceCases = []adviceCase{
	{syscall.ENOSPC, "disk is full"}, {syscall.EDQUOT, "quota"}, {syscall.EROFS, "read-only"},
	{syscall.EISDIR, "folder"}, {syscall.EACCES, "make its folder writable"},
}
