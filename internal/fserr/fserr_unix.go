//go:build !windows

package fserr

import "syscall"

// table is the class of each errno the caches act on.
var table = map[syscall.Errno]Class{
	syscall.ENOENT:      Missing,
	syscall.ENOTDIR:     NotDir,
	syscall.EISDIR:      IsDir,
	syscall.ELOOP:       Link,
	syscall.EEXIST:      Exists,
	syscall.ENOTEMPTY:   Exists,
	syscall.EACCES:      Denied,
	syscall.EPERM:       Denied,
	syscall.EROFS:       ReadOnly,
	syscall.ENOSPC:      DiskFull,
	syscall.EDQUOT:      Quota,
	syscall.EWOULDBLOCK: Busy,
}
