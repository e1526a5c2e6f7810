package apiminors

import (
	"fmt"
	"strings"
)

// token is one C++ token of a header: an identifier, a number, a string or character
// literal, or punctuation ("::", "->" and "..." are one token; every other punctuation
// character is a token of its own, so ">>" is two).
type token struct {
	text string
	pos  int // byte offset in the header
}

func (t token) isIdent() bool {
	c := t.text[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// scanned is a header reduced to tokens, with where its preprocessor conditionals were.
type scanned struct {
	toks []token
	// conds are the byte offsets of #if, #ifdef, #ifndef, #elif, #else and #endif lines:
	// their branches are all read, so a class whose body holds one cannot be trusted.
	conds []int
}

// scan tokenizes a header: comments go, preprocessor lines go (each conditional's offset is
// kept), and the rest is split into tokens.
func scan(src string) (scanned, error) {
	var s scanned
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return s, fmt.Errorf("offset %d: comment never ends", i)
			}
			i += 2 + end + 2
			continue
		case c == '#' && lineStart:
			start := i
			for i < len(src) && (src[i] != '\n' || src[i-1] == '\\') {
				i++
			}
			if isConditional(src[start:i]) {
				s.conds = append(s.conds, start)
			}
			continue
		}
		lineStart = false
		start := i
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			for i < len(src) && isIdentChar(src[i]) {
				i++
			}
		case c >= '0' && c <= '9':
			for i < len(src) && (isIdentChar(src[i]) || src[i] == '.' || src[i] == '\'') {
				i++
			}
		case c == '"' || c == '\'':
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' {
					i++
				}
				if i < len(src) && src[i] == '\n' {
					return s, fmt.Errorf("offset %d: literal runs past the end of its line", start)
				}
				i++
			}
			if i >= len(src) {
				return s, fmt.Errorf("offset %d: literal never ends", start)
			}
			i++
		case strings.HasPrefix(src[i:], "::"), strings.HasPrefix(src[i:], "->"):
			i += 2
		case strings.HasPrefix(src[i:], "..."):
			i += 3
		default:
			i++
		}
		s.toks = append(s.toks, token{text: src[start:i], pos: start})
	}
	return s, nil
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isConditional reports whether a preprocessor line opens, continues or closes a conditional.
func isConditional(line string) bool {
	d := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
	for _, w := range []string{"ifdef", "ifndef", "if", "elif", "else", "endif"} {
		if strings.HasPrefix(d, w) && (len(d) == len(w) || !isIdentChar(d[len(w)])) {
			return true
		}
	}
	return false
}

// closing returns the index of the token that closes the bracket at toks[open] ("(", "[",
// "{" or "<"), or an error when it is never closed. Angle brackets count only other angle
// brackets and stop at a ";" or "{", where a "<" must have been a comparison.
func closing(toks []token, open int) (int, error) {
	pairs := map[string]string{"(": ")", "[": "]", "{": "}", "<": ">"}
	want := pairs[toks[open].text]
	if want == "" {
		return 0, fmt.Errorf("offset %d: %q opens nothing", toks[open].pos, toks[open].text)
	}
	depth := 0
	for i := open; i < len(toks); i++ {
		t := toks[i].text
		if want == ">" {
			switch t {
			case "<":
				depth++
			case ">":
				depth--
			case ";", "{", "}":
				return 0, fmt.Errorf("offset %d: \"<\" is never closed", toks[open].pos)
			case "(":
				// Parentheses inside template arguments hold no angle brackets of ours.
				end, err := closing(toks, i)
				if err != nil {
					return 0, err
				}
				i = end
			}
		} else {
			switch t {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
		}
		if depth == 0 {
			if t != want {
				return 0, fmt.Errorf("offset %d: %q is closed by %q at offset %d", toks[open].pos, toks[open].text, t, toks[i].pos)
			}
			return i, nil
		}
	}
	return 0, fmt.Errorf("offset %d: %q is never closed", toks[open].pos, toks[open].text)
}
