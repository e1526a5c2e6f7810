package trace

import (
	"bytes"
	"errors"
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
