package matrix

// shortHashLen is how many hex digits of the file's SHA-256 name what is emitted (Job names,
// labels).
const shortHashLen = 10

// ShortHash is the first hex digits of the file's SHA-256, for names: Jobs emitted from two
// versions of a matrix file are named apart.
func (f *File) ShortHash() string {
	return f.SHA256[:shortHashLen]
}
