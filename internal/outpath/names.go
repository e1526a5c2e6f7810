package outpath

import (
	"fmt"
	"strings"
)

// Windows file names. These rules are pure functions of the strings, the same on every system,
// so that they are tested everywhere; the Windows build applies them to every path it checks
// (outputs, inputs, folders it makes), and every build applies them to the locations of a
// model's external data, which must be safe on any system the model is copied to.

// reservedDevices are the names Windows maps to a device in every folder, whatever the
// extension: "con.engine" and "aux .onnx" name the console and the auxiliary port, not files.
var reservedDevices = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
}

// ReservedDevice returns the device Windows maps the path component name to ("CON", "NUL",
// "COM1", ...), or "" when it names a file. Windows ignores what follows the first dot or colon
// and trailing spaces before it, and counts the superscript digits ¹²³ as digits of COM and LPT.
func ReservedDevice(name string) string {
	stem := name
	if i := strings.IndexAny(stem, ".:"); i >= 0 {
		stem = stem[:i]
	}
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	if reservedDevices[stem] {
		return stem
	}
	for _, port := range []string{"COM", "LPT"} {
		if rest, ok := strings.CutPrefix(stem, port); ok {
			switch rest {
			case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
				return stem
			}
		}
	}
	return ""
}

// forbiddenChars are the characters Windows refuses in a file name, besides control characters
// and the separators '/' and '\'.
const forbiddenChars = `<>:"|?*`

// WindowsNameProblem returns why the path component name cannot name a file of its own on
// Windows, or "" when it can. The text completes a sentence that starts with the name, and
// says no fix: the caller knows what the name is for (an output: "choose another name"; a
// model's external data: "keep external data files in the model's folder"). "." and ".." are
// not components this function judges.
func WindowsNameProblem(name string) string {
	if name == "" || name == "." || name == ".." {
		return ""
	}
	if dev := ReservedDevice(name); dev != "" {
		return fmt.Sprintf("is a name Windows reserves for the device %s in every folder", dev)
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return "ends with a dot or a space, which Windows drops from file names"
	}
	for _, r := range name {
		switch {
		case r < 0x20:
			return "contains a control character, which Windows forbids in file names"
		case r == ':':
			return `contains ":", which names an alternate data stream on Windows`
		case strings.ContainsRune(forbiddenChars, r):
			return fmt.Sprintf("contains %q, which Windows forbids in file names", r)
		}
	}
	return ""
}

// IsDiscard reports whether path is the Windows null device as a discard target: exactly "NUL"
// in any case, or its device-namespace spelling "\\.\NUL" (with either slash). A folder's
// "dir\NUL" or "nul.engine" is not: those are reserved names, refused like CON.
func IsDiscard(path string) bool {
	p := strings.ReplaceAll(path, "/", `\`)
	return strings.EqualFold(p, "NUL") || strings.EqualFold(p, `\\.\NUL`)
}

// pipePrefix is the namespace of Windows named pipes: \\.\pipe\NAME.
const pipePrefix = `\\.\pipe\`

// IsPipePath reports whether path names a Windows named pipe (\\.\pipe\NAME, either slash, any
// case).
func IsPipePath(path string) bool {
	p := strings.ReplaceAll(path, "/", `\`)
	return len(p) > len(pipePrefix) && strings.EqualFold(p[:len(pipePrefix)], pipePrefix)
}
