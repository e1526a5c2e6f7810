package pathtext

import (
	"fmt"
	"strings"
)

// Line makes text that may hold file names or a builder's words safe on one line of output:
// control bytes other than space-like ones become \xNN escapes, and tabs, newlines and carriage
// returns become spaces. Unlike Q it leaves the text unquoted: it is for messages, not names.
func Line(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case isControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl reports whether r is a C0 or C1 control character or DEL.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
