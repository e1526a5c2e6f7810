// Package pathtext makes file names safe to print. A file name may hold any byte but '/' and
// NUL: a newline in it can forge a line of output ("Built ok"), an ESC can start a terminal
// control sequence (OSC, cursor moves). Q returns a name that prints as itself unchanged and
// quotes any other; a path is safe to print once it went through Q.
package pathtext

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Q returns name unchanged when it is valid UTF-8 without control or format characters, and
// otherwise as a Go double-quoted string literal (strconv.Quote), in which newlines, ESC and
// other control bytes are escapes such as \n and \x1b. The quoting is visible, so a reader
// sees that the name is unusual.
func Q(name string) string {
	if safe(name) {
		return name
	}
	return strconv.Quote(name)
}

// safe reports whether name prints as itself: valid UTF-8, no C0/C1 control characters, no
// Unicode format characters (bidirectional overrides and the like), and no quote at the start
// (so a quoted and an unquoted name can never look the same).
func safe(name string) bool {
	if name == "" || name[0] == '"' || !utf8.ValidString(name) {
		return name == ""
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}
