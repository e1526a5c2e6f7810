package httpapi

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// maxTokenBytes bounds a token file: a token is a line, not a document.
const maxTokenBytes = 4096

// readTokenFile reads the bearer token: the file's one line, without its line end. The file
// must be a regular file (a link to one is followed) of the server's user (checkTokenPrivate)
// that neither its group nor others may read or write, and the token must not be empty or hold
// a space or control byte. The file is
// opened without blocking and refused before any read when it is not a regular file: a FIFO
// would hold the server at its start, a device would never end.
func readTokenFile(name string) (string, error) {
	f, st, err := regfile.Open(name)
	if err != nil {
		var nr *regfile.NotRegularError
		if errors.As(err, &nr) {
			return "", exitcode.Usagef("--token-file %s is %s, not a regular file", pathtext.Q(name), nr.Kind).Hintf("give a file holding the token")
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return "", exitcode.Usagef("--token-file %s: %s", pathtext.Q(name), errText(exitcode.PathCause(err))).Hintf("give a file holding the token")
		}
		return "", exitcode.Usagef("--token-file %s: %s", pathtext.Q(name), errText(exitcode.PathCause(err)))
	}
	defer f.Close()
	if err := checkTokenPrivate(name, f, st); err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTokenBytes+1))
	if err != nil {
		return "", exitcode.Usagef("--token-file %s: %s", pathtext.Q(name), errText(exitcode.PathCause(err)))
	}
	if len(data) > maxTokenBytes {
		return "", exitcode.Usagef("--token-file %s is over %d bytes", pathtext.Q(name), maxTokenBytes).Hintf("a token is one line")
	}
	tok := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if tok == "" {
		return "", exitcode.Usagef("--token-file %s is empty", pathtext.Q(name)).Hintf("write a token into it, e.g. openssl rand -hex 32 > %s", pathtext.Q(name))
	}
	for _, c := range []byte(tok) {
		if c <= ' ' || c == 0x7f {
			return "", exitcode.Usagef("--token-file %s holds a space, a line break or a control byte", pathtext.Q(name)).Hintf("the token must be one word on one line")
		}
	}
	return tok, nil
}

// minTokenBits is the strength a token of a server on a non-loopback address needs: 16 random
// bytes.
const minTokenBits = 128

// minDistinct is the fewest distinct characters a strong token has: a long token of one or two
// characters repeated is not random, whatever its length.
const minDistinct = 8

// alphabets are the character sets a token may be drawn from, smallest first: a token's
// strength is counted with the smallest one that holds all its characters.
var alphabets = []struct {
	name  string
	chars string
}{
	{"decimal digits", "0123456789"},
	{"hex digits", "0123456789abcdef"},
	{"hex digits", "0123456789ABCDEF"},
	{"lower-case letters", "abcdefghijklmnopqrstuvwxyz"},
	{"upper-case letters", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	{"base32", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"},
	{"base32", "abcdefghijklmnopqrstuvwxyz234567"},
	{"letters and digits", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"},
	{"base64", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/"},
	{"base64url", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"},
}

// tokenBits estimates the random bits of tok: the characters repetition does not explain
// (freshChars; without base64's '=' padding) times the bits of one character of the smallest
// alphabet it is written in (hex 4, base64 6, printable ASCII 6.55), and 0 when it has fewer
// than minDistinct distinct characters. A word repeated ("abcdefgh" six times,
// "password1password1…") has the bits of one copy.
func tokenBits(tok string) float64 {
	body := strings.TrimRight(tok, "=")
	distinct := map[rune]bool{}
	for _, c := range body {
		distinct[c] = true
	}
	if len(distinct) < minDistinct {
		return 0
	}
	size := 94 // printable ASCII without the space, or anything else
	for _, a := range alphabets {
		if strings.Trim(body, a.chars) == "" {
			size = len(a.chars)
			break
		}
	}
	return float64(freshChars([]rune(body))) * math.Log2(float64(size))
}

// minRepeat is the shortest repetition freshChars counts as one character: 8 characters of a
// random token of 16 bytes, written in hex, repeat by chance about once in ten million tokens.
const minRepeat = 8

// freshChars is the number of characters of r that repetition does not explain: reading from
// the start, a run of minRepeat or more characters that copies earlier ones (the copy may
// overlap the run, as in "abcabcabc") counts as one character, as a compressor would write it.
func freshChars(r []rune) int {
	n := 0
	for i := 0; i < len(r); n++ {
		longest := 0
		for j := 0; j < i; j++ {
			k := 0
			for i+k < len(r) && r[j+k] == r[i+k] {
				k++
			}
			longest = max(longest, k)
		}
		if longest >= minRepeat {
			i += longest
		} else {
			i++
		}
	}
	return n
}

// checkTokenStrength refuses a token too weak for a server others can reach: fewer than
// minTokenBits random bits by tokenBits' estimate.
func checkTokenStrength(name, tok, addr string) error {
	if bits := tokenBits(tok); bits < minTokenBits {
		return exitcode.Usagef("--token-file %s holds a weak token (about %.0f random bits", pathtext.Q(name), bits).Hintf("a server on the non-loopback address %s needs %d, 16 random bytes); make one: openssl rand -hex 32 > %s", addr, minTokenBits, pathtext.Q(name))
	}
	return nil
}
