package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
)

// sampleEvents covers every event type and the awkward strings a builder can send.
func sampleEvents() []Event {
	return []Event{
		{Type: EventBuild, Info: &BuildInfo{Model: "models/convnet.onnx", Engine: "models/convnet.engine", Backend: "sim", Precision: "fp16", Layers: 24, Version: "dev"}},
		{Type: EventPhaseStart, Time: 0, ID: 1, Name: "Building engine", Steps: 4, Thread: 1},
		{Type: EventPhaseStart, Time: 1500 * time.Microsecond, ID: 2, Parent: 1, Name: "Finding fastest tactic for \"stem/conv1\" \\ 层\t\x1b[31m", Steps: 6, Thread: 2},
		{Type: EventStep, Time: 2 * time.Millisecond, ID: 2, Step: 0},
		{Type: EventPhaseFinish, Time: 3 * time.Millisecond, ID: 2, Early: true},
		{Type: EventLog, Time: 4 * time.Millisecond, Severity: SeverityWarning, Message: "line one\nline two \xff"},
		{Type: EventPhaseFinish, Time: 5 * time.Millisecond, ID: 1},
		{Type: EventResult, Time: 6 * time.Millisecond, Result: &Result{Status: StatusBuilt, Engine: "models/convnet.engine", EngineBytes: 1234, Duration: 6 * time.Millisecond, CacheHits: 3, CacheMisses: 5, CacheUsed: true, PeakRSS: 1 << 20}},
		// A failed build's result, with the session's attribution and hint (added in v1).
		{Type: EventResult, Time: 7 * time.Millisecond, Result: &Result{Status: StatusFailed, Error: "Could not find any implementation for node stem/conv1.", Duration: 7 * time.Millisecond,
			Where: &Where{ID: 2, Path: []string{"Building engine", "Finding fastest tactic for stem/conv1"}, Done: 1, Steps: 6, Seconds: 0.0015, Node: "stem/conv1"}, Hint: "raise --workspace"}},
		// A cancelled build that dropped steps, and a build refused for its input (exit 2).
		{Type: EventResult, Time: 8 * time.Millisecond, Result: &Result{Status: StatusCancelled, Duration: 8 * time.Millisecond, DroppedSteps: 35, CancelSeen: 123456789}},
		{Type: EventResult, Result: &Result{Status: StatusFailed, Error: "TensorRT 10 libraries not found", UsageError: true}},
	}
}

func encodeAll(events []Event) []byte {
	var b []byte
	for i := range events {
		b = AppendJSON(b, &events[i])
	}
	return b
}

func TestJSONGolden(t *testing.T) {
	got := encodeAll(sampleEvents())
	goldenfile.Check(t, filepath.Join("testdata", "events.golden.jsonl"), got)
	for i, line := range bytes.Split(bytes.TrimSpace(got), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		if m["v"] != float64(1) {
			t.Errorf("line %d: v = %v, want 1", i+1, m["v"])
		}
		if bytes.IndexByte(line, 0x1b) >= 0 {
			t.Errorf("line %d carries a raw ESC byte", i+1)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, want := range sampleEvents() {
		line := AppendJSON(nil, &want)
		got, err := DecodeJSON(line)
		if err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		if want.Type == EventLog {
			want.Message = strings.ToValidUTF8(want.Message, "\uFFFD")
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip of %s\n got  %+v\n want %+v", line, got, want)
		}
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{`not json`, "malformed event line"},
		{`{"type":"step","t":1}`, `no "v"`},
		{`{"v":2,"type":"step","t":1}`, "newer trtbuild"},
		{`{"v":0,"type":"step","t":1}`, "schema version 0"},
		{`{"v":1,"t":1}`, `no "type"`},
		{`{"v":1,"type":"step"}`, `"t" must be`},
		{`{"v":1,"type":"step","t":-1}`, `"t" must be`},
		{`{"v":1,"type":"phase_start","t":1,"id":0}`, "id must be positive"},
		{`{"v":1,"type":"log","t":1,"severity":"loud"}`, "unknown log severity"},
		{`{"v":1,"type":"result","t":1}`, "no status"},
	}
	for _, tt := range tests {
		_, err := DecodeJSON([]byte(tt.line))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeJSON(%s) = %v, want an error containing %q", tt.line, err, tt.want)
		}
	}
	_, err := DecodeJSON([]byte(`{"v":9,"type":"step","t":1}`))
	if !errors.Is(err, ErrNewerSchema) {
		t.Errorf("newer schema error %v does not wrap ErrNewerSchema", err)
	}
	e, err := DecodeJSON([]byte(`{"v":1,"type":"something_new","t":2.5,"extra":[1,2]}`))
	if err != nil || e.Type != "something_new" || e.Time != 2500*time.Millisecond {
		t.Errorf("unknown type decoded as %+v, %v; want it kept for skipping", e, err)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, line := range bytes.Split(encodeAll(sampleEvents()), []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"v":1,"type":"step","t":1e308}`))
	f.Add([]byte(`{"v":1,"type":"phase_start","t":0,"id":1,"name":"\ud800"}`))
	f.Add([]byte(`{"v":1,"type":"step","t":0.000001,"id":7,"step":-3}`))
	f.Add([]byte(`{"v":1,"type":"phase_finish","t":12.500000,"id":9,"early":true}` + "\n"))
	f.Add([]byte(`{"v":1,"type":"step","t":01.000000,"id":07,"step":1}`))
	f.Add([]byte(`{"v":1,"type":"phase_start","t":0.500000,"id":3,"parent":1,"name":"Timing \u0041 \"q\"","steps":4,"thread":2}`))
	f.Add([]byte(`{"v":1,"type":"phase_start","t":0.500000,"id":3,"parent":0,"name":"Ünïcode ✓","steps":0,"thread":18446744073709551615}`))
	f.Add([]byte("{\"v\":1,\"type\":\"phase_start\",\"t\":0.500000,\"id\":3,\"parent\":1,\"name\":\"bad \xff\",\"steps\":4,\"thread\":2}"))
	// An unknown type with a control character: AppendJSON once wrote the type unescaped.
	f.Add([]byte(`{"v":1,"tYpe":"\b0000","t":0}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		// The fast path must agree with encoding/json wherever it answers.
		if fast, ok := decodeFast(bytes.TrimSpace(line)); ok {
			slow, err := decodeSlow(bytes.TrimSpace(line))
			if err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast path %+v, general path %+v (%v) for %q", fast, slow, err, line)
			}
		}
		e, err := DecodeJSON(line)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to valid JSON that decodes to the same event.
		again := AppendJSON(nil, &e)
		if !json.Valid(bytes.TrimSpace(again)) {
			t.Fatalf("re-encoded event is not JSON: %s", again)
		}
		e2, err := DecodeJSON(again)
		if err != nil {
			t.Fatalf("re-encoded event does not decode: %v\n%s", err, again)
		}
		if e2.Type != e.Type || e2.ID != e.ID || e2.Time != e.Time {
			t.Fatalf("round trip changed the event: %+v -> %+v", e, e2)
		}
	})
}

func BenchmarkAppendJSONStep(b *testing.B) {
	e := Event{Type: EventStep, Time: 1234567 * time.Microsecond, ID: 42, Step: 17}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], &e)
	}
}

func BenchmarkDecodeJSONStep(b *testing.B) {
	line := AppendJSON(nil, &Event{Type: EventStep, Time: 1234567 * time.Microsecond, ID: 42, Step: 17})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeJSON(line); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendSecondsMatchesFloat checks the integer path of appendSeconds against the float
// formatting it replaces, on edge cases and on pseudo-random durations up to past its bound.
func TestAppendSecondsMatchesFloat(t *testing.T) {
	cases := []time.Duration{0, 1, 499, 500, 501, 999, 1000, 1499, 1500, 1501, 999_999_499, 999_999_500,
		999_999_501, time.Second, 1e6*time.Second - 1, 1e6 * time.Second, 1e7*time.Second + 123456789, -1, -1500}
	x := uint64(0x9e3779b97f4a7c15)
	for i := 0; i < 200000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		switch i % 3 {
		case 0:
			cases = append(cases, time.Duration(x%uint64(10*time.Second)))
		case 1:
			cases = append(cases, time.Duration(x%uint64(2e6*time.Second)))
		default:
			cases = append(cases, time.Duration(x%uint64(time.Hour))/time.Microsecond*time.Microsecond+500)
		}
	}
	for _, d := range cases {
		want := strconv.AppendFloat(nil, d.Seconds(), 'f', 6, 64)
		if got := appendSeconds(nil, d); !bytes.Equal(got, want) {
			t.Fatalf("appendSeconds(%d) = %s, want %s", int64(d), got, want)
		}
	}
}

// TestFastPathTakesTheHotLines checks that the lines a build sends most, as AppendJSON writes
// them, take the fast path (the fuzz test checks that it agrees with the general one).
func TestFastPathTakesTheHotLines(t *testing.T) {
	for _, e := range []Event{
		{Type: EventStep, Time: 1234567 * time.Microsecond, ID: 42, Step: 17},
		{Type: EventPhaseStart, Time: 3 * time.Second, ID: 43, Parent: 42, Name: "Finding fastest tactic for stage1/conv2 + relu ✓", Steps: 258, Thread: 3},
		{Type: EventPhaseStart, Time: 3 * time.Second, ID: 1, Name: "Building engine"},
		{Type: EventPhaseFinish, Time: 4 * time.Second, ID: 43},
		{Type: EventPhaseFinish, Time: 4 * time.Second, ID: 43, Early: true},
	} {
		line := bytes.TrimSpace(AppendJSON(nil, &e))
		got, ok := decodeFast(line)
		if !ok || !reflect.DeepEqual(got, e) {
			t.Errorf("decodeFast(%s) = %+v, %v; want %+v, true", line, got, ok, e)
		}
	}
}

func BenchmarkDecodeJSONPhaseStart(b *testing.B) {
	line := AppendJSON(nil, &Event{Type: EventPhaseStart, Time: 1234567 * time.Microsecond, ID: 42, Parent: 7,
		Name: "Finding fastest tactic for stage2/block1/conv2 + stage2/block1/bn2", Steps: 258, Thread: 1})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeJSON(line); err != nil {
			b.Fatal(err)
		}
	}
}
