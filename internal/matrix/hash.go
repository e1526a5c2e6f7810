package matrix

import (
	"crypto/sha256"
	"fmt"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// Hash is the content hash of a matrix file, "sha256:" and the SHA-256 of its bytes in hex.
// What is emitted from a matrix file records it: a cell's number means a cell only in the
// file it was counted in, so `matrix cell --matrix-hash` refuses a file that has changed since.
func Hash(data []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}

// shortHashLen is how many hex digits of the hash name what is emitted (Job names, labels).
const shortHashLen = 10

// ShortHash is the first hex digits of the file's hash, for names: Jobs emitted from two
// versions of a matrix file are named apart.
func (f *File) ShortHash() string {
	h := f.Hash[len("sha256:"):]
	return h[:shortHashLen]
}

// CheckHash fails when want is given and is not the hash of f: the Job or script that asked
// for a cell was emitted from another version of the matrix file, in which its number may
// name another cell, or none.
func CheckHash(f *File, want string) error {
	if want == "" || want == f.Hash {
		return nil
	}
	return fmt.Errorf("matrix file %s has changed since this Job or script was emitted from it (it was %s, it is %s now): its cell numbers may name other cells; emit again from the file as it is (trtbuild matrix emit) and run that",
		pathtext.Q(f.Path), want, f.Hash)
}
