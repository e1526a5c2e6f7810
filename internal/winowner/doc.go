// Package winowner says, on Windows, whether a file's owner is this user, for the caches'
// rule that a second user on the machine cannot plant files trtbuild trusts (on Unix the
// caches compare a file's uid with the effective uid instead; this package is empty there).
//
// The rule: a file is this user's when its owner SID is the process token's user SID, or,
// when the process runs elevated (its token has BUILTIN\Administrators enabled), when the
// owner is BUILTIN\Administrators: an elevated process's files are owned by that group by
// default, and an administrator can replace any file anyway. LocalSystem (S-1-5-18), the
// account of the system itself, is trusted as root is on Unix.
package winowner
