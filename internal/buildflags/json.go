package buildflags

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// ProfilesKey is the JSON key of several optimization profiles: an array of objects whose keys
// are the four shape flags' names. It stands for the command line's --profile N.
const ProfilesKey = "profiles"

// commandLineOnly are the flags that only mean something on a command line: the model (a request
// names it apart), the view of the progress (a service streams events), trtexec's ignored
// --skipInference and --profile, which JSON says with ProfilesKey.
var commandLineOnly = map[string]bool{"onnx": true, "progress": true, "skip-inference": true, "profile": true}

// shapeNames are the shape flags, in ShapeKind order.
var shapeNames = []string{"shapes", "min-shapes", "opt-shapes", "max-shapes"}

// Options are the builder's options of a request's options object: keys are the build
// command's long flag names (trtexec's spellings are accepted and normalized), values JSON
// booleans for switches, numbers for counts and speeds, strings for everything with a text
// syntax (shapes, sizes, durations), and a string or an array of strings for lists. Several
// optimization profiles are ProfilesKey's array. Each value goes through the flag's own parser,
// so a value means and is checked exactly as on the command line; the rules across options
// are builder.Check's. refused names the flags a request may not set here, each with why (a
// service refuses those that name its files). Errors are usage errors of one line.
func Options(raw map[string]json.RawMessage, refused map[string]string) (builder.Options, error) {
	fs, o := NewFlagSet("options")
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if _, ok := raw[ProfilesKey]; ok {
		for _, key := range keys {
			if f := fs.Lookup(key); f != nil && isShape(f.Name) {
				return builder.Options{}, exitcode.Usagef("options %q and %q are both given", key, ProfilesKey).Hintf("put every profile's shapes in %q", ProfilesKey)
			}
		}
	}
	seen := map[string]string{}
	for _, key := range keys {
		if key == ProfilesKey {
			if err := setProfiles(fs, raw[key], refused, seen); err != nil {
				return builder.Options{}, err
			}
			continue
		}
		f, err := lookup(fs, key, refused, seen)
		if err != nil {
			return builder.Options{}, err
		}
		if err := setValue(fs, f, key, raw[key]); err != nil {
			return builder.Options{}, err
		}
	}
	return o.Opts, nil
}

// lookup is the flag that key names, or the one-line error of a key that names none, one of
// commandLineOnly or refused, or one given twice in two spellings.
func lookup(fs *pflag.FlagSet, key string, refused map[string]string, seen map[string]string) (*pflag.Flag, error) {
	f := fs.Lookup(key)
	if f == nil || commandLineOnly[f.Name] {
		if f != nil && f.Name == "profile" {
			return nil, exitcode.Usagef("option %q: give several optimization profiles as %q, an array of objects with %s", key, ProfilesKey, strings.Join(shapeNames, ", "))
		}
		if f != nil {
			return nil, exitcode.Usagef("option %q is the command line's only", key).Hintf("leave it out")
		}
		return nil, exitcode.Usagef("unknown option %q%s", key, suggest(fs, key, refused)).Hintf("options are trtbuild's long flag names (fp16, shapes, timeout …), as its options schema lists them")
	}
	if why, ok := refused[f.Name]; ok {
		return nil, exitcode.Usagef("option %q cannot be set here: %s", key, why)
	}
	if prev, ok := seen[f.Name]; ok {
		return nil, exitcode.Usagef("option %q is given twice (as %q and %q)", f.Name, prev, key).Hintf("give it once")
	}
	seen[f.Name] = key
	return f, nil
}

// setValue sets flag f from its JSON value, checked against the flag's kind first.
func setValue(fs *pflag.FlagSet, f *pflag.Flag, key string, v json.RawMessage) error {
	kind := kindOf(f)
	var texts []string
	switch kind {
	case "boolean":
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return exitcode.Usagef("option %q takes true or false, not %s", key, shortJSON(v))
		}
		texts = []string{strconv.FormatBool(b)}
	case "integer", "number":
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if d.Decode(&n) != nil {
			return exitcode.Usagef("option %q takes a number, not %s", key, shortJSON(v))
		}
		if kind == "integer" {
			x, err := n.Float64()
			if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return exitcode.Usagef("option %q takes a whole number, not %s", key, n)
			}
			texts = []string{strconv.FormatInt(int64(x), 10)}
		} else {
			texts = []string{n.String()}
		}
	case "list":
		var one string
		if json.Unmarshal(v, &one) == nil {
			texts = []string{one}
		} else if json.Unmarshal(v, &texts) != nil {
			return exitcode.Usagef("option %q takes a string or an array of strings, not %s", key, shortJSON(v))
		}
		if len(texts) == 0 {
			return exitcode.Usagef("option %q is an empty list", key).Hintf("leave it out for none")
		}
	default:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return exitcode.Usagef("option %q takes a string, not %s", key, shortJSON(v))
		}
		texts = []string{s}
	}
	for _, t := range texts {
		if err := fs.Set(f.Name, t); err != nil {
			return exitcode.Usagef("option %q: %v", key, exitcode.OneLine(unwrapSet(err)))
		}
	}
	return nil
}

// setProfiles sets the shape flags of each profile of ProfilesKey's array, as --profile N and
// the shape flags after it do.
func setProfiles(fs *pflag.FlagSet, v json.RawMessage, refused map[string]string, seen map[string]string) error {
	var profiles []map[string]json.RawMessage
	if json.Unmarshal(v, &profiles) != nil || len(profiles) == 0 {
		return exitcode.Usagef("option %q takes a non-empty array of objects with %s, not %s", ProfilesKey, strings.Join(shapeNames, ", "), shortJSON(v))
	}
	for i, p := range profiles {
		if err := fs.Set("profile", strconv.Itoa(i)); err != nil {
			return exitcode.Usagef("option %q: %v", ProfilesKey, err)
		}
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		inProfile := map[string]string{}
		for _, k := range keys {
			f := fs.Lookup(k)
			if f == nil || !isShape(f.Name) {
				return exitcode.Usagef("option %q: profile %d: %q is not a shape option", ProfilesKey, i, k).Hintf("use %s", strings.Join(shapeNames, ", "))
			}
			if _, err := lookup(fs, k, refused, inProfile); err != nil {
				return err
			}
			if err := setValue(fs, f, fmt.Sprintf("%s[%d].%s", ProfilesKey, i, k), p[k]); err != nil {
				return err
			}
		}
	}
	seen["profile"] = ProfilesKey
	return nil
}

func isShape(name string) bool {
	for _, s := range shapeNames {
		if s == name {
			return true
		}
	}
	return false
}

// kindOf is the JSON kind of a flag's value: boolean, integer, number, list or string.
func kindOf(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool":
		return "boolean"
	case "int", "int64", "uint", "uint64", "int32", "uint32":
		return "integer"
	case "float64", "float32":
		return "number"
	case "stringSlice", "stringArray":
		return "list"
	}
	return "string"
}

// unwrapSet drops pflag's own prefix from a Set error where it adds one, so that the message
// reads as the value parser's.
func unwrapSet(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i > 0 && strings.HasPrefix(msg, "invalid argument") {
		return fmt.Errorf("%s", msg[i+2:])
	}
	return err
}

// shortJSON is a JSON value for a message: at most 40 bytes, on one line.
func shortJSON(v json.RawMessage) string {
	s := strings.Join(strings.Fields(string(v)), " ")
	if len(s) > 40 {
		s = s[:37] + "…"
	}
	if s == "" {
		return "nothing"
	}
	return s
}

// suggest is " (did you mean NAME?)" for the known option closest to key (Closest), if one is.
func suggest(fs *pflag.FlagSet, key string, refused map[string]string) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if _, no := refused[f.Name]; !no && !commandLineOnly[f.Name] {
			names = append(names, f.Name)
		}
	})
	if best, ok := Closest(key, names); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Schema is the JSON Schema (draft 2020-12) of the options object Options reads, without the
// refused options: one property per flag with its usage line as description, and ProfilesKey.
// The HTTP API's OpenAPI document and the MCP build tool describe their options with it.
func Schema(refused map[string]string) map[string]any {
	fs, _ := NewFlagSet("options")
	props := map[string]any{}
	fs.VisitAll(func(f *pflag.Flag) {
		if commandLineOnly[f.Name] {
			return
		}
		if _, no := refused[f.Name]; no {
			return
		}
		p := map[string]any{"description": f.Usage}
		switch k := kindOf(f); k {
		case "list":
			p["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1}}
		default:
			p["type"] = k
		}
		if d := f.DefValue; d != "" && d != "[]" && kindOf(f) != "boolean" && d != "0" {
			if n, err := strconv.ParseFloat(d, 64); err == nil && kindOf(f) != "string" {
				p["default"] = n
			} else if kindOf(f) == "string" {
				p["default"] = d
			}
		}
		props[f.Name] = p
	})
	shape := map[string]any{}
	for _, name := range shapeNames {
		if _, no := refused[name]; !no {
			shape[name] = map[string]any{"type": "string", "description": fs.Lookup(name).Usage}
		}
	}
	props[ProfilesKey] = map[string]any{
		"description": "several optimization profiles, in order (the command line's --profile N); each object has the shape options of one",
		"type":        "array", "minItems": 1,
		"items": map[string]any{"type": "object", "additionalProperties": false, "properties": shape},
	}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"description":          "build options: trtbuild's long flag names, with the command line's syntax for values",
		"additionalProperties": false,
		"properties":           props,
	}
}
