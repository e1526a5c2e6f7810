package progress

import (
	"bytes"
	"time"
	"unicode/utf8"
)

// decodeFast parses the three most frequent lines, step, phase_start and phase_finish, exactly
// in the form AppendJSON writes them, without reflection: about twenty times faster than
// encoding/json, which matters because a busy build sends hundreds of thousands of them a
// second (a phase_start through encoding/json cost a fifth of the parent's CPU in a flood of
// steps, though only one line in sixteen was one). Anything else, or any deviation from that
// form (a name with an escape, say), returns false and takes the general path. The fuzz test
// checks that both paths agree.
func decodeFast(line []byte) (Event, bool) {
	const prefix = `{"v":1,"type":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return Event{}, false
	}
	rest := line[len(prefix):]
	var e Event
	switch {
	case bytes.HasPrefix(rest, []byte(`step","t":`)):
		e.Type, rest = EventStep, rest[len(`step","t":`):]
	case bytes.HasPrefix(rest, []byte(`phase_finish","t":`)):
		e.Type, rest = EventPhaseFinish, rest[len(`phase_finish","t":`):]
	case bytes.HasPrefix(rest, []byte(`phase_start","t":`)):
		e.Type, rest = EventPhaseStart, rest[len(`phase_start","t":`):]
	default:
		return Event{}, false
	}
	var ok bool
	if e.Time, rest, ok = fastSeconds(rest); !ok {
		return Event{}, false
	}
	if e.ID, rest, ok = fastField(rest, `,"id":`); !ok || e.ID <= 0 {
		return Event{}, false
	}
	switch {
	case e.Type == EventStep:
		if e.Step, rest, ok = fastField(rest, `,"step":`); !ok {
			return Event{}, false
		}
	case e.Type == EventPhaseStart:
		if e.Parent, rest, ok = fastField(rest, `,"parent":`); !ok {
			return Event{}, false
		}
		if e.Name, rest, ok = fastString(rest, `,"name":`); !ok {
			return Event{}, false
		}
		if e.Steps, rest, ok = fastField(rest, `,"steps":`); !ok {
			return Event{}, false
		}
		thread, after, ok := fastField(rest, `,"thread":`)
		if !ok || thread < 0 {
			return Event{}, false
		}
		e.Thread, rest = uint64(thread), after
	case bytes.HasPrefix(rest, []byte(`,"early":true`)):
		e.Early, rest = true, rest[len(`,"early":true`):]
	}
	rest = bytes.TrimRight(rest, " \t\r\n")
	if len(rest) != 1 || rest[0] != '}' {
		return Event{}, false
	}
	return e, true
}

// fastSeconds reads seconds written as %.6f: digits, a point, six digits.
func fastSeconds(b []byte) (time.Duration, []byte, bool) {
	whole, n := 0, 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' && n < 10 {
		whole = whole*10 + int(b[n]-'0')
		n++
	}
	if n == 0 || n >= 10 || (n > 1 && b[0] == '0') || len(b) < n+7 || b[n] != '.' {
		return 0, nil, false
	}
	micro := 0
	for _, c := range b[n+1 : n+7] {
		if c < '0' || c > '9' {
			return 0, nil, false
		}
		micro = micro*10 + int(c-'0')
	}
	rest := b[n+7:]
	if len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
		return 0, nil, false
	}
	return time.Duration(whole)*time.Second + time.Duration(micro)*time.Microsecond, rest, true
}

// fastField reads key followed by a decimal integer that fits comfortably in an int.
func fastField(b []byte, key string) (int, []byte, bool) {
	if !bytes.HasPrefix(b, []byte(key)) {
		return 0, nil, false
	}
	b = b[len(key):]
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	v, n := 0, 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if n == 15 || (n > 0 && b[0] == '0') {
			return 0, nil, false
		}
		v = v*10 + int(b[n]-'0')
		n++
	}
	if n == 0 {
		return 0, nil, false
	}
	if neg {
		v = -v
	}
	return v, b[n:], true
}

// fastString reads key followed by a JSON string without escapes, control characters or
// invalid UTF-8 (encoding/json would rewrite those): the bytes between the quotes are the
// string.
func fastString(b []byte, key string) (string, []byte, bool) {
	if !bytes.HasPrefix(b, []byte(key)) || len(b) <= len(key) || b[len(key)] != '"' {
		return "", nil, false
	}
	b = b[len(key)+1:]
	end := bytes.IndexByte(b, '"')
	if end < 0 {
		return "", nil, false
	}
	s := b[:end]
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return "", nil, false
		}
	}
	if !utf8.Valid(s) {
		return "", nil, false
	}
	return string(s), b[end+1:], true
}
