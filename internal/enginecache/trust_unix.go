//go:build !windows

package enginecache

import (
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"sync"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// groupSupported says that "group" may be given: POSIX groups exist here.
func groupSupported() error { return nil }

// addUser adds a user name or numeric user id to t.UIDs.
func (t *Trust) addUser(item string) error {
	if uid, err := strconv.Atoi(item); err == nil && uid >= 0 {
		t.UIDs = append(t.UIDs, uid)
		return nil
	}
	u, err := user.Lookup(item)
	if err != nil {
		return fmt.Errorf("unknown user %q; give self, group, user names or numeric user ids, separated by commas", item)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return fmt.Errorf("user %q has the non-numeric id %q", item, u.Uid)
	}
	t.UIDs = append(t.UIDs, uid)
	return nil
}

// trustCheck decides whether files of a cache may be believed.
type trustCheck struct {
	Trust
	self  int
	gid   int // the cache folder's group, for Group
	mu    sync.Mutex
	inGrp map[int]bool
}

// newTrustCheck checks the cache folder dir (root is what it is) for t: a group-shared cache
// must not be writable by every user.
func newTrustCheck(t Trust, dir string, root *attr) (*trustCheck, error) {
	if t.Group && root.Mode&0o002 != 0 {
		return nil, fmt.Errorf("a group-shared engine cache must not be writable by every user: chmod o-w %s", pathtext.Q(dir))
	}
	return &trustCheck{Trust: t, self: os.Geteuid(), gid: int(root.Gid), inGrp: map[int]bool{}}, nil
}

// why returns "" when st (a file or folder of an entry) may be believed, else why not.
func (t *trustCheck) why(st *attr) string {
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
