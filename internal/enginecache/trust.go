package enginecache

import (
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Trust says whose entries a cache serves. An entry (its folder, engine and manifest) is
// served only when each is owned by a trusted user and writable by no one else: this user and
// root always; with Group, every member of the cache folder's group (a group-shared cache,
// whose folder must then not be writable by others); and the users listed.
type Trust struct {
	Group bool
	UIDs  []int
}

// ParseTrust reads --engine-cache-trust: a comma-separated list of "self" (always implied),
// "group", user names and numeric user ids.
func ParseTrust(s string) (Trust, error) {
	var t Trust
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "" || item == "self":
		case item == "group":
			t.Group = true
		default:
			if uid, err := strconv.Atoi(item); err == nil && uid >= 0 {
				t.UIDs = append(t.UIDs, uid)
				continue
			}
			u, err := user.Lookup(item)
			if err != nil {
				return Trust{}, fmt.Errorf("unknown user %q; give self, group, user names or numeric user ids, separated by commas", item)
			}
			uid, err := strconv.Atoi(u.Uid)
			if err != nil {
				return Trust{}, fmt.Errorf("user %q has the non-numeric id %q", item, u.Uid)
			}
			t.UIDs = append(t.UIDs, uid)
		}
	}
	return t, nil
}

// trustCheck decides whether files of a cache may be believed.
type trustCheck struct {
	Trust
	self  int
	gid   int // the cache folder's group, for Group
	mu    sync.Mutex
	inGrp map[int]bool
}

func newTrustCheck(t Trust, gid int) *trustCheck {
	return &trustCheck{Trust: t, self: os.Geteuid(), gid: gid, inGrp: map[int]bool{}}
}

// why returns "" when st (a file or folder of an entry) may be believed, else why not.
func (t *trustCheck) why(st *unix.Stat_t) string {
	uid := int(st.Uid)
	switch {
	case st.Mode&0o002 != 0:
		return "it is writable by every user"
	case st.Mode&0o020 != 0 && !t.Group:
		return "it is writable by its group (for a group-shared cache, pass --engine-cache-trust group)"
	case st.Mode&0o020 != 0 && int(st.Gid) != t.gid:
		return "it is writable by a group other than the cache folder's"
	case uid == t.self || uid == 0 || slices.Contains(t.UIDs, uid):
		return ""
	case t.Group && t.member(uid):
		return ""
	}
	return fmt.Sprintf("it is owned by %s, whom this cache does not trust (see --engine-cache-trust)", userName(uid))
}

// member reports whether uid belongs to the cache folder's group.
func (t *trustCheck) member(uid int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if in, ok := t.inGrp[uid]; ok {
		return in
	}
	in := false
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		if gids, err := u.GroupIds(); err == nil {
			in = slices.Contains(gids, strconv.Itoa(t.gid))
		}
		if u.Gid == strconv.Itoa(t.gid) {
			in = true
		}
	}
	t.inGrp[uid] = in
	return in
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}
