package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// SchemaVersion is the "v" field of every JSON line this package writes. A reader accepts
// lines of this version and refuses newer ones.
const SchemaVersion = 1

// AppendJSON appends e as one JSON object and a newline, in the schema of docs/events.md.
// Phase, step and log events, the hot path, are encoded without reflection.
func AppendJSON(b []byte, e *Event) []byte {
	b = append(b, `{"v":1,"type":`...)
	b = appendString(b, string(e.Type)) // a type read from a newer writer may hold anything
	b = append(b, `,"t":`...)
	b = appendSeconds(b, e.Time)
	switch e.Type {
	case EventPhaseStart:
		b = appendInt(b, "id", e.ID)
		b = appendInt(b, "parent", e.Parent)
		b = append(b, `,"name":`...)
		b = appendString(b, e.Name)
		b = appendInt(b, "steps", e.Steps)
		b = append(b, `,"thread":`...)
		b = strconv.AppendUint(b, e.Thread, 10)
	case EventStep:
		b = appendInt(b, "id", e.ID)
		b = appendInt(b, "step", e.Step)
	case EventPhaseFinish:
		b = appendInt(b, "id", e.ID)
		if e.Early {
			b = append(b, `,"early":true`...)
		}
	case EventLog:
		b = append(b, `,"severity":"`...)
		b = append(b, e.Severity.String()...)
		b = append(b, `","message":`...)
		b = appendString(b, e.Message)
	case EventBuild:
		if e.Info != nil {
			b = appendObjectFields(b, e.Info)
		}
	case EventResult:
		if e.Result != nil {
			b = appendObjectFields(b, e.Result)
			b = append(b, `,"duration":`...)
			b = appendSeconds(b, e.Result.Duration)
		}
	}
	return append(b, "}\n"...)
}

// appendSeconds appends d in seconds with six decimals, byte for byte what
// strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64) appends, without its float formatting (the
// most expensive part of encoding a step event). It takes the integer path where the two
// provably agree: d not negative, below 10^6 s (where d.Seconds() is within 10^-9 s of the exact
// value, less than the distance to a rounding boundary), and not exactly half a microsecond
// from one.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 || d >= 1e6*time.Second || d%time.Microsecond == 500 {
		return strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64)
	}
	us := int64(d / time.Microsecond)
	if d%time.Microsecond > 500 {
		us++
	}
	b = strconv.AppendInt(b, us/1e6, 10)
	frac := us % 1e6
	var digits [7]byte
	digits[0] = '.'
	for i := 6; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, digits[:]...)
}

func appendInt(b []byte, key string, v int) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}

// appendObjectFields appends the fields of v's JSON object, without its braces, each preceded
// by a comma.
func appendObjectFields(b []byte, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil || len(raw) < 2 {
		return b
	}
	inner := raw[1 : len(raw)-1]
	if len(inner) == 0 {
		return b
	}
	b = append(b, ',')
	return append(b, inner...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD; HTML characters are
// left alone (this is not for embedding in HTML).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// wireEvent is the union of every event type's JSON fields.
type wireEvent struct {
	V        *int     `json:"v"`
	Type     string   `json:"type"`
	T        *float64 `json:"t"`
	ID       int      `json:"id"`
	Parent   int      `json:"parent"`
	Name     string   `json:"name"`
	Steps    int      `json:"steps"`
	Step     int      `json:"step"`
	Thread   uint64   `json:"thread"`
	Early    bool     `json:"early"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
	Duration float64  `json:"duration"`
}

// ErrNewerSchema is returned for a line written by a newer, incompatible trtbuild.
var ErrNewerSchema = errors.New("event written by a newer trtbuild")

// DecodeJSON parses one JSON line written by AppendJSON. Unknown event types decode with only
// Type and Time set, so readers can skip them; unknown fields are ignored.
func DecodeJSON(line []byte) (Event, error) {
	line = bytes.TrimSpace(line)
	if e, ok := decodeFast(line); ok {
		return e, nil
	}
	return decodeSlow(line)
}

// decodeSlow is DecodeJSON without the fast path.
func decodeSlow(line []byte) (Event, error) {
	var w wireEvent
	if err := json.Unmarshal(line, &w); err != nil {
		return Event{}, fmt.Errorf("malformed event line: %w", err)
	}
	if w.V == nil {
		return Event{}, errors.New(`malformed event line: no "v" field`)
	}
	if *w.V > SchemaVersion {
		return Event{}, fmt.Errorf("%w (schema v%d; this one reads v%d): upgrade trtbuild", ErrNewerSchema, *w.V, SchemaVersion)
	}
	if *w.V < 1 {
		return Event{}, fmt.Errorf("malformed event line: schema version %d", *w.V)
	}
	if w.Type == "" {
		return Event{}, errors.New(`malformed event line: no "type" field`)
	}
	if w.T == nil || math.IsNaN(*w.T) || math.IsInf(*w.T, 0) || *w.T < 0 || *w.T > 1e9 {
		return Event{}, errors.New(`malformed event line: "t" must be a non-negative number of seconds`)
	}
	e := Event{Type: EventType(w.Type), Time: seconds(*w.T)}
	switch e.Type {
	case EventPhaseStart:
		if w.ID <= 0 {
			return Event{}, errors.New("malformed phase_start: id must be positive")
		}
		e.ID, e.Parent, e.Name, e.Steps, e.Thread = w.ID, w.Parent, w.Name, w.Steps, w.Thread
	case EventStep:
		e.ID, e.Step = w.ID, w.Step
	case EventPhaseFinish:
		e.ID, e.Early = w.ID, w.Early
	case EventLog:
		sev, err := ParseSeverity(w.Severity)
		if err != nil {
			return Event{}, fmt.Errorf("malformed log event: %w", err)
		}
		e.Severity, e.Message = sev, w.Message
	case EventBuild:
		var info BuildInfo
		if err := json.Unmarshal(line, &info); err != nil {
			return Event{}, fmt.Errorf("malformed build event: %w", err)
		}
		e.Info = &info
	case EventResult:
		var res Result
		if err := json.Unmarshal(line, &res); err != nil {
			return Event{}, fmt.Errorf("malformed result event: %w", err)
		}
		res.Duration = seconds(w.Duration)
		if res.Status == "" {
			return Event{}, errors.New("malformed result event: no status")
		}
		e.Result = &res
	}
	return e, nil
}

func seconds(s float64) time.Duration {
	if s < 0 || math.IsNaN(s) || s > 1e9 {
		return 0
	}
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}
