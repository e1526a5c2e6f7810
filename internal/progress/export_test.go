package progress

// Test-only API of package progress: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

// Active returns the IDs of phases that have started and not finished, oldest first per name.
func (r *Resolver) Active() []int {
	var ids []int
	for _, list := range r.active {
		for _, p := range list {
			ids = append(ids, p.id)
		}
	}
	return ids
}
