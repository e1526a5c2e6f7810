package buildflags

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
)

func decode(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOptionsFromJSON(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		check    func(o builder.Options) bool
	}{
		{"bool", `{"fp16": true}`, func(o builder.Options) bool { return o.FP16 }},
		{"bool false", `{"fp16": false}`, func(o builder.Options) bool { return !o.FP16 }},
		{"trtexec spelling", `{"noTF32": true, "saveEngine": "x.engine"}`, func(o builder.Options) bool { return o.NoTF32 && o.Engine == "x.engine" }},
		{"string", `{"backend": "sim", "workspace": "4G"}`, func(o builder.Options) bool { return o.Backend == "sim" && o.Workspace == "4G" }},
		{"float", `{"sim-speed": 20}`, func(o builder.Options) bool { return o.Sim.Speed == 20 }},
		{"optional int", `{"opt-level": 5}`, func(o builder.Options) bool { return o.OptLevel == 5 }},
		{"default kept", `{}`, func(o builder.Options) bool {
			return o.OptLevel == -1 && o.AvgTiming == 8 && o.KillAfter == 30*time.Second
		}},
		{"duration", `{"timeout": "10m"}`, func(o builder.Options) bool { return o.Timeout == 10*time.Minute }},
		{"list string", `{"keep-fp32": "Conv,Softmax"}`, func(o builder.Options) bool { return strings.Join(o.KeepFP32, "|") == "Conv|Softmax" }},
		{"list array", `{"keep-fp32": ["Conv", "Softmax"]}`, func(o builder.Options) bool { return strings.Join(o.KeepFP32, "|") == "Conv|Softmax" }},
		{"shapes", `{"shapes": "x:1x3"}`, func(o builder.Options) bool { return len(o.Profiles) == 1 && o.Profiles[0].Shapes == "x:1x3" }},
		{"profiles", `{"profiles": [{"shapes": "x:1x3"}, {"minShapes": "x:1x1", "max-shapes": "x:8x1"}]}`, func(o builder.Options) bool {
			return len(o.Profiles) == 2 && o.Profiles[0].Shapes == "x:1x3" && o.Profiles[1].Min == "x:1x1" && o.Profiles[1].Max == "x:8x1"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Options(decode(t, tt.in), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(o) {
				t.Errorf("%s: options %+v", tt.in, o)
			}
		})
	}
}

func TestOptionsRefusedWithOneLine(t *testing.T) {
	refused := map[string]string{"report": "the server writes each build's report; GET its /report"}
	for _, tt := range []struct{ in, want string }{
		{`{"fp61": true}`, `unknown option "fp61" (did you mean "fp16"?)`},
		{`{"nonsense-thing": 1}`, `unknown option "nonsense-thing"; options are`},
		{`{"fp16": "yes"}`, `option "fp16" takes true or false, not "yes"`},
		{`{"sim-speed": "fast"}`, `option "sim-speed" takes a number, not "fast"`},
		{`{"opt-level": 2.5}`, `option "opt-level" takes a whole number, not 2.5`},
		{`{"opt-level": 9}`, `option "opt-level": use 0 to 5`},
		{`{"timeout": 10}`, `option "timeout" takes a string, not 10`},
		{`{"timeout": "10"}`, `option "timeout": a duration needs a unit`},
		{`{"timeout": "9999999h"}`, `option "timeout": 9999999h is too long: the longest duration is 2562047h (about 292 years)`},
		{`{"timeout": "-5s"}`, `option "timeout": -5s is negative: give a positive duration, like 20m`},
		{`{"stall-timeout": "-1m"}`, `option "stall-timeout": -1m is negative`},
		{`{"kill-after": "-1s"}`, `option "kill-after": -1s is negative`},
		{`{"sim-step": "9999999h"}`, `option "sim-step": 9999999h is too long: the longest duration is 2562047h`},
		{`{"keep-fp32": []}`, `option "keep-fp32" is an empty list`},
		{`{"keep-fp32": [1]}`, `option "keep-fp32" takes a string or an array of strings, not [1]`},
		{`{"report": "r.html"}`, `option "report" cannot be set here: the server writes`},
		{`{"fp16": true, "FP16": true}`, `is given twice`},
		{`{"onnx": "m.onnx"}`, `option "onnx" is the command line's only`},
		{`{"progress": "json"}`, `option "progress" is the command line's only`},
		{`{"profile": 1}`, `give several optimization profiles as "profiles"`},
		{`{"profiles": []}`, `option "profiles" takes a non-empty array`},
		{`{"profiles": [{"fp16": true}]}`, `profile 0: "fp16" is not a shape option`},
		{`{"shapes": "x:1", "profiles": [{"shapes": "x:2"}]}`, `are both given`},
		{`{"tactic-sources": ""}`, `option "tactic-sources": the value is empty`},
	} {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Options(decode(t, tt.in), refused)
			if err == nil {
				t.Fatalf("%s accepted", tt.in)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit code %v, want usage", exitcode.Of(err))
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line with %q", err, tt.want)
			}
		})
	}
}

func TestSchemaNamesEveryAcceptedOption(t *testing.T) {
	refused := map[string]string{"report": "no", "save-engine": "no"}
	s := Schema(refused)
	props := s["properties"].(map[string]any)
	for _, name := range []string{"fp16", "shapes", "timeout", "sim-speed", "keep-fp32", ProfilesKey} {
		if _, ok := props[name]; !ok {
			t.Errorf("schema lacks %q", name)
		}
	}
	for _, name := range []string{"report", "save-engine", "onnx", "progress", "profile"} {
		if _, ok := props[name]; ok {
			t.Errorf("schema has %q, which Options refuses", name)
		}
	}
	if props["fp16"].(map[string]any)["type"] != "boolean" || props["avg-timing"].(map[string]any)["default"] != 8.0 {
		t.Errorf("fp16 %v, avg-timing %v", props["fp16"], props["avg-timing"])
	}
	// Every property the schema names is one Options accepts.
	for name, p := range props {
		if name == ProfilesKey {
			continue
		}
		var v string
		switch p.(map[string]any)["type"] {
		case "boolean":
			v = "true"
		case "integer", "number":
			v = "1"
		default:
			v = `"1"`
		}
		_, err := Options(map[string]json.RawMessage{name: json.RawMessage(v)}, refused)
		if err != nil && (strings.Contains(err.Error(), "unknown option") || strings.Contains(err.Error(), "takes")) {
			t.Errorf("schema property %q: %v", name, err)
		}
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}
