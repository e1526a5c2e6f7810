package trace

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/progress"
)

func TestRead(t *testing.T) {
	build := `{"v":1,"type":"build","t":0,"model":"m.onnx","engine":"m.engine","backend":"sim"}` + "\n"
	start := `{"v":1,"type":"phase_start","t":0.1,"id":1,"parent":0,"name":"Building engine","steps":2,"thread":1}` + "\n"
	result := `{"v":1,"type":"result","t":1,"status":"failed","error":"boom","duration":1}`
	tests := []struct {
		name    string
		trace   string
		wantErr string
		events  int
		status  progress.Status // "" when there is no result line
		model   string
	}{
		{"empty", "", "no events", 0, "", ""},
		{"blank lines only", "\n\n  \n", "no events", 0, "", ""},
		{"malformed line", build + "{not json}\n", "line 2: malformed event line", 0, "", ""},
		{"newer schema", build + `{"v":2,"type":"step","t":0}` + "\n", "line 2: event written by a newer trtbuild", 0, "", ""},
		{"no result", build + start, "", 1, "", "m.onnx"},
		{"no build line", start + result, "", 1, progress.StatusFailed, ""},
		{"unknown types are dropped", build + `{"v":1,"type":"future","t":0.2}` + "\n" + start + result + "\n", "", 1, progress.StatusFailed, "m.onnx"},
		{"CRLF and no final newline", strings.ReplaceAll(build+start, "\n", "\r\n") + result, "", 1, progress.StatusFailed, "m.onnx"},
		{"a long line", build + `{"v":1,"type":"log","t":0,"severity":"info","message":"` + strings.Repeat("x", 1<<17) + `"}` + "\n", "", 1, "", "m.onnx"},
		{"a line too long", build + strings.Repeat("x", maxLine+10), "line 2: a line is longer than", 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(tt.trace))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Events) != tt.events || tr.Info.Model != tt.model {
				t.Errorf("%d events, model %q; want %d and %q", len(tr.Events), tr.Info.Model, tt.events, tt.model)
			}
			switch {
			case tt.status == "" && tr.Result != nil:
				t.Errorf("result %+v, want none", tr.Result)
			case tt.status != "" && (tr.Result == nil || tr.Result.Status != tt.status):
				t.Errorf("result %+v, want status %q", tr.Result, tt.status)
			}
		})
	}
	if _, err := Read(strings.NewReader("")); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty trace: %v, want ErrEmpty", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"build","t":0,"model":"m"}` + "\n" + `{"v":1,"type":"result","t":1,"status":"built"}`))
	f.Add([]byte(`{"v":1,"type":"phase_start","t":0,"id":1,"name":"x"}` + "\r\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, e := range tr.Events {
			switch e.Type {
			case progress.EventPhaseStart, progress.EventStep, progress.EventPhaseFinish, progress.EventLog:
			default:
				t.Fatalf("event of type %q kept", e.Type)
			}
		}
	})
}

// TestNotATrace: a file whose first line is not an event (an ONNX model, an engine, a log) is
// not a trace, which the commands report as bad input.
func TestNotATrace(t *testing.T) {
	for name, data := range map[string]string{
		"onnx":      "\x08\x07\x12\x07pytorch\x1a\x052.1.0:\x9a\x01\n\x0c\n\x05input",
		"text":      "hello world\n",
		"json":      `{"model": "m.onnx"}` + "\n",
		"huge line": strings.Repeat("x", maxLine+10),
	} {
		_, err := Read(strings.NewReader(data))
		if !errors.Is(err, ErrNotTrace) {
			t.Errorf("%s: %v, want ErrNotTrace", name, err)
		}
	}
	// A malformed line later in a trace is a damaged trace, not another kind of file.
	if _, err := Read(strings.NewReader(`{"v":1,"type":"step","t":0,"id":1,"step":0}` + "\n{oops\n")); err == nil || errors.Is(err, ErrNotTrace) {
		t.Errorf("damaged trace: %v", err)
	}
}

// TestReaderStreams reads a trace event by event: build and result lines fill Info and Result.
func TestReaderStreams(t *testing.T) {
	r := NewReader(strings.NewReader(`{"v":1,"type":"build","t":0,"model":"m.onnx","engine":"m.engine","backend":"sim"}
{"v":1,"type":"phase_start","t":0.1,"id":1,"parent":0,"name":"a","steps":1,"thread":1}
{"v":1,"type":"phase_finish","t":0.2,"id":1}
{"v":1,"type":"result","t":0.3,"status":"built","duration":0.3}
`))
	var n int
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 || r.Info.Model != "m.onnx" || r.Result == nil || r.Result.Status != progress.StatusBuilt {
		t.Errorf("%d events, info %+v, result %+v", n, r.Info, r.Result)
	}
}
