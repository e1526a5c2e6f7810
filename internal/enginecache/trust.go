package enginecache

import (
	"strings"
)

// Trust says whose entries a cache serves. An entry (its folder, engine and manifest) is
// served only when each is owned by a trusted user and writable by no one else: this user and
// root always; with Group, every member of the cache folder's group (a group-shared cache,
// whose folder must then not be writable by others); and the users listed.
//
// On Windows (trust_windows.go) owners are SIDs: this user (and, running elevated,
// BUILTIN\Administrators) and LocalSystem always, and the users listed, by SID; "writable by no
// one else" means no allow entry of the file's ACL grants write access to anyone else.
// Group has no Windows counterpart and is refused there.
type Trust struct {
	Group bool
	UIDs  []int    // Unix user ids
	SIDs  []string // Windows user SIDs ("S-1-5-21-...")
}

// ParseTrust reads --engine-cache-trust: a comma-separated list of "self" (always implied),
// "group", user names and numeric user ids (on Windows: user names and SIDs; no "group").
func ParseTrust(s string) (Trust, error) {
	var t Trust
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "" || item == "self":
		case item == "group":
			if err := groupSupported(); err != nil {
				return Trust{}, err
			}
			t.Group = true
		default:
			if err := t.addUser(item); err != nil {
				return Trust{}, err
			}
		}
	}
	return t, nil
}
