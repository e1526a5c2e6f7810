//go:build !windows

package history

import "syscall"

// createNoFollow makes the database's exclusive create refuse a link planted at its name.
const createNoFollow = syscall.O_NOFOLLOW
